// StatsSnapshot: every counter the daemon reports, as one typed value.
//
// Each room fills its part (Filesystem::Stats gathers them) as a type it declares in its own
// folder (fs/read/read_stats.h and extent_types.h, fs/readahead/readahead_stats.h and
// fill_types.h, fs/readers/reader_stats.h, the governor's counters, fs/metrics/metrics.h), so
// fs/stats is a leaf above the rooms and no room includes it; the types declared here are the
// parts filled above the rooms (the Filesystem, FileReader, ReportMetrics). The snapshot owns
// its values. `.mmfs/stats` (JSON) and `.mmfs/metrics` (Prometheus text) are two renderings of
// the same snapshot (stats_format.h, stats_prometheus.h), and `mmfs stats` parses the JSON back
// into it (stats_parse.h). A plain value of a group (a uint64_t, double, bool or string member)
// is named once, in its group's field table (stat_fields.h, memory_fields.h): its JSON key,
// Prometheus metric and help, which the writer, the parser and the Prometheus text all iterate.
// Adding a counter is its member in the room's struct and one line in the table; a test
// (tests/fs/stats/field_table_test.cc) checks that every table field comes back through the
// JSON and is in the Prometheus text. What the tables cannot hold (lists keyed by name,
// histograms, enum names, labels taken from values, the readers' section) is written by hand in
// those files, and tools/mmfs/cmd_stats.cc lays out the human view by hand. The JSON keys and
// metric names are the contract `mmfs stats`, `mmfs warmup`, the tests and bench/*.py read.
//
// Thread-safety: a plain value.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cache/cluster_tier.h"
#include "cache/read_buffer.h"
#include "cache/tier.h"
#include "cache/what_if.h"
#include "fs/memory/memory_governor.h"
#include "fs/metrics/metrics.h"
#include "fs/read/extent_types.h"
#include "fs/read/read_stats.h"
#include "fs/readahead/fill_types.h"
#include "fs/readahead/readahead_stats.h"
#include "fs/readers/reader_stats.h"

namespace mmfs::fs {

struct DatasetStats {
  std::string path;
  uint64_t files = 0, directories = 0, samples = 0, bytes = 0, shards = 0;
};

struct RequestStats {
  std::string op;  // OpName
  uint64_t count = 0, errors = 0, p50_us = 0, p99_us = 0;
};

struct TierStats {
  std::string name;
  cache::TierCounters counters;
};

struct WhatIfCurveStats {
  uint64_t budget = 0;
  double sampling_rate = 0;
  uint64_t sampled_reads = 0;
  uint64_t working_set_bytes = 0;
  std::vector<cache::WhatIf::Point> points;
};

struct HistoryPoint {
  double uptime = 0;
  std::vector<std::pair<uint64_t, uint64_t>> tiers;  // (hits, lookups) per keyed tier
};

struct WhatIfStats {
  WhatIfCurveStats ram;
  std::optional<WhatIfCurveStats> ssd;  // with an SSD tier
  std::vector<HistoryPoint> history;
};

struct MemoryStats {
  uint64_t rss_bytes = 0;
  uint64_t rss_file_bytes = 0;  // of rss_bytes, mapped files' pages (code, the index): page cache
  // Hold once: tier-held files dropped from the mount's page cache, and drops not done.
  uint64_t page_cache_drops = 0, page_cache_drops_skipped = 0;
  // The mapped index: its size and whether its pages are locked once read (-o lock_index).
  uint64_t index_bytes = 0;
  bool index_locked = false;
  // The daemon's malloc heap is on transparent huge pages (tools/mmfs/huge_page_heap.h),
  // whether a prefaulter populates it ahead of the allocator (base/heap_prefaulter.h: not where
  // the kernel lacks the advice) and the bytes it populated.
  bool heap_huge_pages = false;
  bool heap_prefaulting = false;
  uint64_t heap_prefaulted_bytes = 0;
  bool governed = false;  // the rest is set only with a governor
  MemoryBudget plan;
  GovernorCounters governor;
};

// What a reader of `.mmfs/stats` may ask for, in the name it looks up:
// `stats?window=SECONDS&top=N` (control_dir.h). The defaults are those of plain `stats`.
struct StatsQuery {
  double reader_window_seconds = 10;
  size_t reader_top = 8;
};

// The daemon's CPU time since it started (getrusage, every thread: FUSE workers, prefetchers,
// the governor, the SSD writer).
struct CpuStats {
  double user_seconds = 0, system_seconds = 0;
};

struct StatsSnapshot {
  DatasetStats dataset;
  double uptime_seconds = 0;
  CpuStats cpu;
  TransportStats transport;
  std::vector<RequestStats> requests;  // in Op order
  // CPU milliseconds per 1,000 requests that reached the daemon (what a request costs it, the
  // wake-ups and copies of the /dev/fuse transport included); 0 before any request.
  double CpuMillisPerThousandRequests() const {
    uint64_t n = 0;
    for (const RequestStats& r : requests) n += r.count;
    const double seconds = cpu.user_seconds + cpu.system_seconds;
    return n == 0 ? 0 : seconds * 1000.0 * 1000.0 / static_cast<double>(n);
  }
  uint64_t bytes_served = 0;
  std::vector<TierStats> tiers;        // ram, ssd, cluster
  cache::ReadBufferCounters read_buffer;
  OriginStats origin;
  ExtentCounters extents;  // extent reads on demand misses (extent_reader.h)
  FillStats fill;          // the dataset fetched ahead of its readers (fs/readahead/filler.h)
  ReadaheadStats readahead;
  std::optional<cache::ClusterCounters> cluster;  // with a cluster tier
  WhatIfStats what_if;
  WarmupStats warmup;
  uint64_t checksum_errors = 0, io_errors = 0;
  uint64_t listed_entries = 0, largest_readdir_request = 0;  // Metrics
  MemoryStats memory;
  std::vector<ViewStats> views;  // ascending side
  ReadersStats readers;
};

}  // namespace mmfs::fs
