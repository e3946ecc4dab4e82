#include "fs/core/filesystem.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>


#include <spdlog/spdlog.h>

#include <exception>

// The stack is owned here and lent to the rooms that read or fill it (FileReader, MissLoader,
// Prefetcher, ExtentReader, Warmup); Stats reads the RAM tier's counters as the snapshot's first
// tier.
#include "base/file_util.h"
#include "base/heap_prefaulter.h"
#include "cache/tier_stack.h"
#include "fs/control/control_dir.h"
#include "fs/control/file_xattrs.h"
#include "fs/core/file_reader.h"
#include "fs/core/view_namespace.h"
#include "fs/memory/memory_budget.h"
#include "fs/read/extent_reader.h"
#include "fs/read/miss_loader.h"
#include "fs/read/miss_queue.h"
#include "fs/read/origin_reader.h"
#include "fs/read/view_files.h"
#include "fs/readahead/filler.h"
#include "fs/readahead/prefetcher.h"
#include "fs/readahead/warmup.h"
#include "fs/readers/reader_accounting.h"
#include "fs/readers/reader_verdict.h"
#include "fs/stats/metrics_report.h"
#include "fs/stats/stats_format.h"
#include "fs/stats/stats_prometheus.h"

namespace mmfs::fs {

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
  // Threads first (the miss threads, the reader sampler, warm-up, then the prefetch workers),
  // while what they use still exists.
  StopMissThreads();
  filler_.reset();
  if (readers_ != nullptr) readers_->StopSampler();
  warmup_.reset();
  prefetcher_.reset();
}

void Filesystem::SetHintTarget(std::string target) { control_->SetHintTarget(std::move(target)); }
void Filesystem::SetControlTarget(std::string target) {
  control_->SetControlTarget(std::move(target));
}
void Filesystem::SetControlLinkTarget(std::string target) {
  control_->SetLinkTarget(std::move(target));
}

void Filesystem::DrainPrefetch() { prefetcher_->Drain(); }
void Filesystem::BeginHint() {
  if (filler_ != nullptr) filler_->Trigger("a hint");  // a training job says what it reads
  prefetcher_->BeginHint();
}
void Filesystem::AddHintLines(const std::vector<std::string>& lines) {
  prefetcher_->AddHintLines(lines);
}
void Filesystem::EndHint() { prefetcher_->EndHint(); }
void Filesystem::HandleControlLines(const std::vector<std::string>& lines) {
  warmup_->HandleLines(lines);
}
void Filesystem::SetMemoryTargets(const MemoryTargets& t) { reader_->SetMemoryTargets(t); }
uint64_t Filesystem::RamBytesUsed() const { return reader_->RamBytesUsed(); }

Result<format::Entry> Filesystem::EntryForIno(uint64_t ino) const {
  if (ino == 0 || ino > dataset_->entry_count()) return Status::NotFound("no such inode");
  return dataset_->GetEntry(ino - 1);
}

Attr Filesystem::EntryAttr(const format::Entry& e) const {
  Attr a;
  a.ino = e.index + 1;
  a.mode = format::ServedMode(e.record.mode);
  a.size = e.is_dir() ? 4096 : e.record.size;
  a.mtime_ns = e.record.mtime_ns;
  // 1 tells find(1) and fts that the subdirectory count is unknown, as on btrfs.
  a.nlink = 1;
  return a;
}

Result<Attr> Filesystem::Lookup(uint64_t parent, std::string_view name) {
  OpTimer timer(metrics_, Op::kLookup);
  if (parent == kRootIno) {
    if (auto a = control_->LookupInRoot(name)) return *a;
    if (auto a = views_->LookupInRoot(name)) return *a;
  }
  Result<Attr> result = Status::Ok();
  if (views_->Owns(parent)) {
    result = views_->Lookup(parent, name);
  } else if (control_->Owns(parent)) {
    result = control_->Lookup(parent, name);
  } else if (auto dir = EntryForIno(parent); !dir.ok()) {
    result = origin_->CountError(dir.status());
  } else if (!dir->is_dir()) {
    result = Status::NotADirectory("not a directory");
  } else if (auto child = dataset_->LookupChild(*dir, name); !child.ok()) {
    result = child.status().code() == StatusCode::kNotFound ? child.status()
                                                            : origin_->CountError(child.status());
  } else {
    // A directory is looked up right before it is listed (os.walk, scandir of a path): its
    // listing's index pages start loading while the kernel is still on its way to READDIR.
    if (child->is_dir()) dataset_->PrefetchChildren(*child);
    result = EntryAttr(*child);
  }
  if (!result.ok()) timer.Fail();
  return result;
}

Result<Attr> Filesystem::AttrOf(uint64_t ino) const {
  if (control_->Owns(ino)) return control_->GetAttr(ino);
  if (views_->Owns(ino)) return views_->GetAttr(ino);
  auto e = EntryForIno(ino);
  return e.ok() ? Result<Attr>(EntryAttr(*e)) : origin_->CountError(e.status());
}

Result<Attr> Filesystem::GetAttr(uint64_t ino) {
  OpTimer timer(metrics_, Op::kGetattr);
  Result<Attr> result = AttrOf(ino);
  if (!result.ok()) timer.Fail();
  return result;
}

Result<Attr> Filesystem::OpenDir(uint64_t ino) {
  OpTimer timer(metrics_, Op::kOpendir);
  Result<Attr> result = AttrOf(ino);
  if (result.ok() && !S_ISDIR(result->mode)) {
    result = Status::NotADirectory("opendir of a non-directory");
  }
  if (!result.ok()) timer.Fail();
  return result;
}

void Filesystem::NoteListing(size_t request_bytes, uint64_t entries) {
  metrics_.NoteListing(request_bytes, entries);
}

Status Filesystem::ReadDir(
    uint64_t ino, uint64_t offset,
    const std::function<bool(std::string_view, const Attr&, uint64_t)>& emit) {
  OpTimer timer(metrics_, Op::kReaddir);
  if (control_->IsDir(ino)) return control_->ReadDir(ino, offset, emit);
  if (views_->Owns(ino)) {
    Status s = views_->ReadDir(ino, offset, emit);
    if (!s.ok()) timer.Fail();
    return s;
  }
  auto dir = EntryForIno(ino);
  if (!dir.ok()) {
    timer.Fail();
    return origin_->CountError(dir.status());
  }
  if (!dir->is_dir()) {
    timer.Fail();
    return Status::NotADirectory("not a directory");
  }
  // The root is never looked up, and a listing may come long after its LOOKUP.
  if (offset == 0) dataset_->PrefetchChildren(*dir);
  // Positions: 1 = ".", 2 = "..", 3 + i = child i.
  Attr self = EntryAttr(*dir);
  auto p = dataset_->GetEntry(dir->record.parent);
  Attr parent = p.ok() ? EntryAttr(*p) : self;
  std::optional<uint64_t> first = EmitDotEntries(offset, self, parent, emit);
  if (!first) return Status::Ok();
  for (uint64_t i = *first; i < dir->child_count(); ++i) {
    auto child = dataset_->GetEntry(dir->first_child() + i);
    if (!child.ok()) {
      timer.Fail();
      return origin_->CountError(child.status());
    }
    if (!emit(child->name, EntryAttr(*child), 3 + i)) return Status::Ok();
  }
  // Listed to the end: the kernel keeps the listing (no_opendir), so the daemon need not keep
  // the index pages mapped.
  dataset_->ReleaseChildren(*dir);
  return Status::Ok();
}

Status Filesystem::Open(uint64_t ino, int flags) {
  OpTimer timer(metrics_, Op::kOpen);
  Status s;
  if ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_TRUNC | O_CREAT)) != 0) {
    s = Status::ReadOnly("mmfs mounts are read-only");
  } else if (control_->Owns(ino)) {
    s = control_->GetAttr(ino).status();
  } else if (views_->Owns(ino)) {
    s = views_->GetAttr(ino).status();
  } else if (auto e = EntryForIno(ino); !e.ok()) {
    s = origin_->CountError(e.status());
  }
  if (!s.ok()) timer.Fail();
  return s;
}

// What FinishLater needs of a READ that StartRead could not serve at once.
struct Filesystem::PendingRead {
  TreeFile file;
  uint64_t offset = 0;
  size_t size = 0;
  bool view = false;
  bool looked_up = false;  // the first try looked the tiers up (and counted it)
  OpTimer timer;           // runs from the READ's arrival to its answer
};

Result<TreeFile> Filesystem::ReadTarget(uint64_t ino) {
  TreeFile f;
  if (views_->Owns(ino)) {
    MMFS_ASSIGN_OR_RETURN(f, views_->FileOf(ino));
  } else if (auto e = EntryForIno(ino); !e.ok()) {
    return origin_->CountError(e.status());
  } else {
    f = BaseFile(*e);
  }
  if (!f.entry.is_regular()) {
    return f.entry.is_dir() ? Status::IsADirectory("read of a directory")
                            : Status::InvalidArgument("not a regular file");
  }
  return f;
}

Result<ReadData> Filesystem::Counted(Result<ReadData> r, const TreeFile& f, uint64_t offset,
                                     bool view, OpTimer& timer) {
  if (!r.ok()) {
    timer.Fail();
    return r;
  }
  metrics_.bytes_served.fetch_add(r->size, std::memory_order_relaxed);
  if (view) view_files_->CountServed(f.tree, offset, r->size);
  return r;
}

Result<ReadData> Filesystem::Read(uint64_t ino, uint64_t offset, size_t size, uint64_t stream) {
  OpTimer timer(metrics_, Op::kRead);
  if (control_->Owns(ino)) {
    Result<ReadData> r = control_->Read(ino, offset, size);
    if (!r.ok()) timer.Fail();
    return r;
  }
  Result<TreeFile> f = ReadTarget(ino);
  if (!f.ok()) {
    timer.Fail();
    return f.status();
  }
  return Counted(ReadFile(*f, offset, size, stream), *f, offset, views_->Owns(ino), timer);
}

bool Filesystem::QueuesMisses() const {
  if (misses_ == nullptr) return false;
  if (remote_origin_ || tiers_->cluster() != nullptr) return true;  // a network in the way
  const OriginCostEstimate cost = origin_->CostEstimate();
  return cost.mean_seconds >= 0.001;
}

Filesystem::ReadStart Filesystem::StartRead(uint64_t ino, uint64_t offset, size_t size,
                                            uint64_t stream) {
  if (misses_ == nullptr || control_->Owns(ino)) return {Read(ino, offset, size, stream), nullptr};
  OpTimer timer(metrics_, Op::kRead);
  Result<TreeFile> f = ReadTarget(ino);
  if (!f.ok()) {
    timer.Fail();
    return {Result<ReadData>(f.status()), nullptr};
  }
  const bool view = views_->Owns(ino);
  NoteRead(*f, offset, stream);
  bool looked_up = false;
  if (auto at_hand = reader_->TryRead(*f, offset, size, &looked_up)) {
    return {Counted(std::move(*at_hand), *f, offset, view, timer), nullptr};
  }
  if (!QueuesMisses()) {
    Result<ReadData> r = reader_->Read(*f, offset, size, nullptr, looked_up);
    return {Counted(std::move(r), *f, offset, view, timer), nullptr};
  }
  return {std::nullopt, std::make_shared<PendingRead>(
                            PendingRead{*f, offset, size, view, looked_up, std::move(timer)})};
}

void Filesystem::FinishLater(std::shared_ptr<PendingRead> pending, ReadDone done) {
  const auto arrived = pending->timer.start();
  misses_->Submit(arrived, [this, pending = std::move(pending), done = std::move(done)] {
    PendingRead& p = *pending;
    Result<ReadData> r = Status::IoError("not read");
    try {
      r = reader_->Read(p.file, p.offset, p.size, nullptr, p.looked_up);
    } catch (const std::exception& e) {
      // The READ is answered whatever happened: a reader must never wait for good.
      r = Status::ResourceExhausted(std::string("reading a file: ") + e.what());
    }
    done(Counted(std::move(r), p.file, p.offset, p.view, p.timer));
  });
}

void Filesystem::StopMissThreads() {
  if (misses_ != nullptr) misses_->Stop();
}

TreeFile Filesystem::BaseFile(const format::Entry& e) const {
  auto f = view_files_->Resolve(0, e);  // never fails for the original tree
  return f.ok() ? *f : TreeFile{};
}

Result<TreeFile> Filesystem::FileForIno(uint64_t ino) const {
  if (control_->Owns(ino)) return Status::NotFound("a control file");
  if (views_->Owns(ino)) return views_->FileOf(ino);
  MMFS_ASSIGN_OR_RETURN(format::Entry e, EntryForIno(ino));
  return BaseFile(e);
}

void Filesystem::NoteRead(const TreeFile& f, uint64_t offset, uint64_t stream) {
  prefetcher_->OnRead(f, offset, stream);
  // The fill brings originals: a view's files say nothing of a job that wants them.
  if (filler_ != nullptr && offset == 0 && f.tree == 0) filler_->NoteRead(f.entry.index);
}

Result<ReadData> Filesystem::ReadFile(const TreeFile& f, uint64_t offset, size_t size,
                                      uint64_t stream, std::shared_ptr<const std::string> known) {
  NoteRead(f, offset, stream);
  return reader_->Read(f, offset, size, std::move(known));
}

bool Filesystem::MayPush(uint64_t ino) {
  auto f = FileForIno(ino);
  return f.ok() && prefetcher_->MayPush(*f);
}

bool Filesystem::Push(uint64_t ino, uint64_t stream, size_t max_bytes, bool wait,
                      const std::function<int(const char*, size_t)>& store) {
  // The prefetch buffer is keyed by the file's cache key: a resized file's push stores the
  // resized bytes, never its original's.
  auto f = FileForIno(ino);
  if (!f.ok()) return false;
  if (auto taken = prefetcher_->Push(*f, max_bytes, wait, store)) {
    auto read = ReadFile(*f, 0, f->size(), stream, std::move(taken));
    return read.ok() && read->tier_holds;
  }
  return false;
}

Result<ReadData> Filesystem::ClaimPrefetched(uint64_t ino, size_t max_bytes, bool wait) {
  ReadData out;
  auto f = FileForIno(ino);
  if (!f.ok()) return out;
  out.owner = prefetcher_->Claim(*f, max_bytes, wait);
  if (out.owner == nullptr) return out;
  out.data = out.owner->data();
  out.size = out.owner->size();
  return out;
}

void Filesystem::EndPush(uint64_t ino, uint64_t stream, std::shared_ptr<const std::string> claimed,
                         bool stored) {
  auto f = FileForIno(ino);
  if (!f.ok()) return;
  if (prefetcher_->EndPush(*f, claimed, stored)) {
    (void)ReadFile(*f, 0, f->size(), stream, std::move(claimed));
  }
}

Result<std::string> Filesystem::ReadLink(uint64_t ino) {
  OpTimer timer(metrics_, Op::kReadlink);
  Result<std::string> result = std::string();
  if (control_->Owns(ino)) {
    result = control_->ReadLink(ino);
  } else if (views_->Owns(ino)) {
    result = views_->ReadLink(ino);
  } else if (auto e = EntryForIno(ino); !e.ok()) {
    result = origin_->CountError(e.status());
  } else if (auto target = dataset_->LinkTarget(*e); !target.ok()) {
    result = target.status();
  } else {
    result = std::string(*target);
  }
  if (!result.ok()) timer.Fail();
  return result;
}

StatFsInfo Filesystem::StatFs() {
  OpTimer timer(metrics_, Op::kStatfs);
  StatFsInfo info;
  info.blocks = (dataset_->manifest().total_bytes + info.block_size - 1) / info.block_size;
  info.files = dataset_->entry_count();
  return info;
}

Result<std::optional<std::string>> Filesystem::GetXattr(uint64_t ino, std::string_view name) {
  OpTimer timer(metrics_, Op::kGetxattr);
  // They describe the original bytes: not offered on view files.
  if (control_->Owns(ino) || views_->Owns(ino)) return std::optional<std::string>();
  auto e = EntryForIno(ino);
  if (!e.ok()) {
    timer.Fail();
    return origin_->CountError(e.status());
  }
  return FileXattr(*dataset_, *e, name, [&] { return reader_->Residency(e->index); });
}

Result<std::vector<std::string>> Filesystem::ListXattr(uint64_t ino) {
  OpTimer timer(metrics_, Op::kListxattr);
  if (control_->Owns(ino) || views_->Owns(ino)) return std::vector<std::string>();
  auto e = EntryForIno(ino);
  if (!e.ok()) {
    timer.Fail();
    return origin_->CountError(e.status());
  }
  return FileXattrNames(*e);
}

void Filesystem::Forget(uint64_t ino) {
  if (control_->Owns(ino)) control_->Forget(ino);
}

Status Filesystem::Ioctl(uint64_t /*ino*/) {
  // The right answer, not a failure: not counted as an error.
  OpTimer timer(metrics_, Op::kIoctl);
  return Status::NoSuchIoctl("mmfs files take no ioctls");
}

Status Filesystem::RefuseWrite() {
  OpTimer timer(metrics_, Op::kWrite);
  timer.Fail();
  return Status::ReadOnly("mmfs mounts are read-only");
}

bool Filesystem::IsControl(uint64_t ino) const { return control_->Owns(ino); }

bool Filesystem::IsControlLookup(uint64_t parent, std::string_view name) const {
  if (control_->Owns(parent)) return true;
  return parent == kRootIno && control_->LookupInRoot(name).has_value();
}

StatsSnapshot Filesystem::Stats(const StatsQuery& query) const {
  StatsSnapshot s;
  const format::Manifest& m = dataset_->manifest();
  s.dataset = {dataset_->dir(), m.files, m.directories, m.samples, m.total_bytes,
               m.shards.size()};
  const ResidentMemory resident = ProcessResident();
  s.memory = MemoryStatsOf(resident.bytes, governor_.load());
  s.memory.rss_file_bytes = resident.file_bytes;
  s.memory.index_bytes = m.index_size;
  s.memory.index_locked = dataset_->index_locked();
  s.memory.heap_huge_pages = options_.heap_on_huge_pages;
  if (const HeapPrefaulter* p = HeapPrefaulter::ForHeap()) {
    s.memory.heap_prefaulting = true;
    s.memory.heap_prefaulted_bytes = p->counters().populated_bytes;
  }
  ReportMetrics(metrics_, &s);
  s.read_buffer = origin_->read_buffer().Counters();
  origin_->Report(&s.origin);
  // A dataset opened by URL is named by its URL, not by the local copy of its index.
  if (s.origin.remote.has_value()) s.dataset.path = s.origin.remote->url;
  s.extents = extents_->Counters();
  reader_->CacheStats(&s);
  if (misses_ != nullptr) s.origin.queued = misses_->Counters();
  if (filler_ != nullptr) s.fill = filler_->Stats();
  prefetcher_->Stats(control_->has_hint(), &s.readahead);
  reader_->Stats(&s.what_if);
  warmup_->Stats(&s.warmup);
  view_files_->Stats(&s.views);
  if (readers_ != nullptr) {
    s.readers = readers_->Snapshot(query.reader_window_seconds, query.reader_top);
    AdviceContext ctx;
    for (const ViewStats& v : s.views) ctx.view_sides.push_back(v.side);
    ctx.hint_in_use = s.readahead.hint.orders > 0;
    const cache::TierCounters& ram = s.tiers.front().counters;
    ctx.warm = ram.lookups > 0 && ram.hits * 10 >= ram.lookups * 9;
    s.readers.advice = ReaderAdvice(s.readers.verdict, ctx);
  }
  return s;
}

std::string Filesystem::StatsJson() const { return StatsJsonText(Stats()); }

}  // namespace mmfs::fs
