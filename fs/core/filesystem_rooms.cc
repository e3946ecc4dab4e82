// The composition root of Filesystem: builds the rooms from the options, in the order they
// depend on each other, and ends their threads in the reverse order. Part of Filesystem
// (filesystem.h); the dispatch is in filesystem.cc, the read path in filesystem_read.cc.
#include <unistd.h>

#include <spdlog/spdlog.h>

#include "cache/tier_stack.h"
#include "fs/control/control_dir.h"
#include "fs/core/file_reader.h"
#include "fs/core/filesystem.h"
#include "fs/core/view_namespace.h"
#include "fs/read/extent_reader.h"
#include "fs/read/miss_loader.h"
#include "fs/read/miss_queue.h"
#include "fs/read/origin_reader.h"
#include "fs/read/view_files.h"
#include "fs/readahead/filler.h"
#include "fs/readahead/prefetcher.h"
#include "fs/readahead/warmup.h"
#include "fs/readers/reader_accounting.h"
#include "fs/stats/stats_format.h"
#include "fs/stats/stats_prometheus.h"

namespace mmfs::fs {

// The stack is owned by Filesystem and lent to the rooms that read or fill it (FileReader,
// MissLoader, Prefetcher, ExtentReader, Warmup, Filler).
Filesystem::Filesystem(std::unique_ptr<format::Dataset> dataset, FilesystemOptions options,
                       std::unique_ptr<cache::TierStack> tiers,
                       std::unique_ptr<origin::Origin> origin)
    : dataset_(std::move(dataset)),
      shard_origin_(std::move(origin)),
      options_(std::move(options)),
      tiers_(std::move(tiers)),
      remote_origin_(shard_origin_->RequestStats().has_value()) {
  MakeRooms();
}

void Filesystem::MakeRooms() {
  // One readahead, the one that knows samples and counts its outcomes (see --readahead off).
  // The advice is for the dataset's own shards: the views' trees, added below, are read without
  // it (buffered, with the kernel's readahead). An origin that cannot do a part of it (not a
  // local file) ignores that part.
  origin::OriginAdvice advice;
  advice.random_access = true;
  advice.direct_io = options_.direct_reads;
  advice.drop_behind = options_.drop_origin_pages;
  shard_origin_->Advise(advice);
  if (options_.lock_index) {
    Status locked = dataset_->LockIndex();
    if (!locked.ok()) spdlog::warn("index not locked in memory: {}", locked.message());
  }
  OriginReaderOptions oo;
  oo.read_buffer_bytes = options_.read_buffer_bytes;
  origin_ = std::make_unique<OriginReader>(*dataset_, *shard_origin_, metrics_, oo);
  PrefetcherOptions po;
  po.enabled = options_.readahead;
  po.threads = options_.prefetch_threads;
  po.buffer_bytes = options_.prefetch_buffer_bytes;
  po.max_cached_file_bytes = options_.max_cached_file_bytes;
  po.readahead = options_.readahead_config;
  po.mountpoint = options_.mountpoint;
  po.hint_open_to_all_only = options_.hint_open_to_all_only;
  format::ViewSet view_set = format::ViewSet::Open(*dataset_, *shard_origin_);
  for (const Status& p : view_set.problems()) spdlog::warn("view not served: {}", p.message());
  view_files_ = std::make_unique<ViewFiles>(*dataset_, std::move(view_set), options_.root_view,
                                            *origin_);
  extents_ = std::make_unique<ExtentReader>(*dataset_, *tiers_, options_.extents);
  MissLoaderOptions mo;
  mo.sample_members = options_.readahead;
  loader_ = std::make_unique<MissLoader>(*dataset_, *origin_, *view_files_, *tiers_, *extents_,
                                         mo);
  prefetcher_ = std::make_unique<Prefetcher>(*dataset_, *view_files_, *tiers_, *loader_, po);
  reader_ = std::make_unique<FileReader>(*dataset_, *tiers_, *origin_, *prefetcher_, *extents_,
                                         *loader_, options_.max_cached_file_bytes);
  warmup_ = std::make_unique<Warmup>(*dataset_, *loader_, *tiers_, options_.mountpoint,
                                     options_.max_cached_file_bytes,
                                     [this] { reader_->RecordHistory(); });
  views_ = std::make_unique<ViewNamespace>(*dataset_, *view_files_, *origin_);
  if (options_.miss_threads > 0) {
    misses_ = std::make_unique<MissQueue>(
        MissQueueOptions{.threads = options_.miss_threads, .bound = options_.read_bound});
  }
  if (options_.fill.mode != FillMode::kOff) {
    filler_ = std::make_unique<Filler>(*dataset_, *origin_, *tiers_, options_.fill, [this] {
      return misses_ != nullptr ? misses_->Counters().running : 0;
    });
    // Cleared from the loader before the fill goes (the destructor, after the miss threads; the
    // FUSE threads, the other caller of Load, are stopped before the Filesystem goes).
    loader_->SetPeerFetches(filler_->peer_fetches());
  }
  if (options_.reader_accounting) {
    ReaderAccountingOptions ro;
    ro.ignore_tgid = static_cast<uint64_t>(::getpid());
    readers_ = std::make_unique<ReaderAccounting>(ro, &SteadyClock(), NewProcfsReader());
    readers_->StartSampler();
  }
  // Control inodes above every view's range (view_namespace.h).
  control_ = std::make_unique<ControlDir>(
      views_->end_ino(), [this](ControlDir::File f, const StatsQuery& q) {
        return f == ControlDir::File::kMetrics ? StatsPrometheus(Stats(q))
                                               : StatsJsonText(Stats(q));
      });
  control_->SetHintTarget(options_.hint_target);
  control_->SetControlTarget(options_.control_target);
  control_->SetLinkTarget(options_.control_link_target);
  control_->SetViews(views_->ServedViews());
}

Filesystem::~Filesystem() {
  // Threads first (the miss threads, the fill, the reader sampler, warm-up, then the prefetch
  // workers), while what they use still exists.
  StopMissThreads();
  loader_->SetPeerFetches(nullptr);
  filler_.reset();
  if (readers_ != nullptr) readers_->StopSampler();
  warmup_.reset();
  prefetcher_.reset();
}

}  // namespace mmfs::fs
