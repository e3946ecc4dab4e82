// Filesystem::Stats: each room's counters gathered into one StatsSnapshot, and the advice
// drawn from the readers' verdict. Part of Filesystem (filesystem.h); the snapshot's renderings
// are fs/stats'.
#include "base/heap_prefaulter.h"
#include "cache/tier_stack.h"
#include "fs/control/control_dir.h"
#include "fs/core/file_reader.h"
#include "fs/core/filesystem.h"
#include "fs/memory/memory_budget.h"
#include "fs/read/extent_reader.h"
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

namespace mmfs::fs {

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
  if (const HeapPrefaulter* p = options_.heap_prefaulter) {
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
