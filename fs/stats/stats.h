// StatsSnapshot: every counter the daemon reports, as one typed value.
//
// Each room fills its part (Filesystem::Stats gathers them); `.mmfs/stats` (JSON) and
// `.mmfs/metrics` (Prometheus text) are two renderings of the same snapshot (stats_format.h),
// so a counter's field is declared once, here. Its name is still written out where it is
// rendered and read: stats_format.cc (JSON), stats_prometheus.cc (Prometheus), stats_parse.cc
// (JSON back into the snapshot) and tools/mmfs/cmd_stats.cc (the human view); a round-trip test
// holds JSON and parse together. The JSON keys are the contract `mmfs stats`, `mmfs warmup`, the
// tests and bench/*.py read.
//
// Thread-safety: a plain value.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cache/cluster_tier.h"
#include "cache/hinted_order.h"
#include "cache/prefetch_buffer.h"
#include "cache/read_buffer.h"
#include "cache/refetch_tracker.h"
#include "cache/tier.h"
#include "cache/what_if.h"
#include "fs/memory/memory_governor.h"
#include "fs/metrics/metrics.h"
#include "fs/origin/remote_stats.h"
#include "fs/read/extent_types.h"
#include "fs/read/miss_queue.h"
#include "fs/read/origin_cost_model.h"
#include "fs/read/ranged_reader.h"
#include "fs/readahead/fill_types.h"

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

struct OriginStats {
  // Shard reads by cause. The JSON's origin.reads/bytes are demand + warm-up (all reads that are
  // not readahead); readahead.reads/bytes are the prefetch reads.
  uint64_t demand_reads = 0, demand_bytes = 0;
  // Of demand_bytes, what came with the file asked for in one read: the other members of its
  // sample, and neighbours (an extent's other samples' files, and the padding between files).
  // The rest is the asked files' own bytes (with a view sample's originals and a large file's
  // ranges, read apart).
  uint64_t member_bytes = 0, neighbour_bytes = 0;
  uint64_t asked_bytes() const {
    const uint64_t with = member_bytes + neighbour_bytes;
    return demand_bytes > with ? demand_bytes - with : 0;
  }
  uint64_t prefetch_reads = 0, prefetch_bytes = 0;
  uint64_t warmup_reads = 0, warmup_bytes = 0;
  uint64_t fill_reads = 0, fill_bytes = 0;  // the fill's (fs/readahead/filler.h)
  uint64_t errors = 0;     // failed loads (TieredCache's count)
  uint64_t coalesced = 0;  // misses that waited for another caller's load
  // READs that waited for the origin on the miss threads, not a request thread (miss_queue.h).
  MissQueueCounters queued;
  RangedCounters streamed;
  cache::RefetchCounters rereads;  // fetched again before the last fetch was used (refetch_tracker.h)
  OriginCostEstimate cost;         // the origin's latency and bandwidth (origin_cost_model.h)
  // A remote origin's requests (an HTTP server or an S3 store); none for local files.
  std::optional<origin::RemoteStatsSnapshot> remote;
};

struct PushStats {
  uint64_t files = 0, bytes = 0, failed = 0, skipped = 0;
  // The pushers' queue (fs/fuse/page_pusher.h): pushes not queued (full), and requests (the
  // ioctl before a first read) that waited for their push, did not wait because they could have
  // been the last free request thread (many means too few `-o threads`), or stopped waiting at
  // the bound.
  uint64_t queue_full = 0, waited = 0, wait_skipped = 0, wait_expired = 0;
};

struct ReadaheadStats {
  bool enabled = false;
  std::vector<std::pair<std::string, cache::PrefetchCounters>> patterns;  // by pattern name
  uint64_t runs_detected = 0;
  uint64_t jobs_dropped = 0;
  bool hint_available = false;
  cache::HintCounters hint;
  PushStats pushed;
  uint64_t buffer_bytes = 0, buffer_budget = 0;
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

struct WarmupStats {
  // done: stored in the tier (after its writes); rejected: kept out by the tier's budget;
  // not_stored: the tier could not store them (problem says why: full disk, failing writes).
  uint64_t requested = 0, done = 0, bytes = 0, skipped = 0, rejected = 0, errors = 0, evicted = 0,
           not_stored = 0;
  std::string last_sync;  // the token of the last `sync` line handled
  std::string problem;    // the tier's reason for the last files not stored, or ""
};

// One served view (view_namespace.h).
struct ViewStats {
  uint32_t side = 0;
  uint64_t files_served = 0;  // READs at offset 0 of a file under @N
  uint64_t bytes_served = 0;
  uint64_t resized_loads = 0;  // resized files a READ loaded (and checked) from the view's shards
  uint64_t resized_load_bytes = 0;
  uint64_t readahead_loads = 0;  // the same, loaded ahead (access patterns, the hint)
  uint64_t readahead_load_bytes = 0;
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

// Readers of the mount (reader_accounting.h): who waits on mmfs, who computes, over a window.
enum class ReaderVerdict { kNone, kIoBound, kComputeBound, kIdle };

struct ReaderRow {
  enum class Kind { kProcess, kOthers, kFinished };
  Kind kind = Kind::kProcess;
  uint64_t pid = 0;        // kProcess: the process (Tgid)
  std::string comm;        // kProcess: its command name at first sight
  uint32_t threads = 0;    // threads of it that sent requests and are alive
  uint32_t processes = 0;  // readers summed into the row (1 for kProcess)
  // Over the window: time the reader was observed, time some request of one of its threads was
  // in mmfs (per thread, overlapping requests counted once; summed over threads), CPU time
  // (utime + stime), requests and READ bytes mmfs served it, and `rchar` (every byte the
  // process read from anything: /proc/PID/io has no per-mount count).
  double wall_seconds = 0, stall_seconds = 0, cpu_seconds = 0;
  // Runnable but waiting for a CPU (schedstat): CPU the reader wanted and did not get.
  double runq_seconds = 0;
  uint64_t requests = 0, served_bytes = 0;
  bool has_rchar = false;
  uint64_t rchar_bytes = 0;
  ReaderVerdict verdict = ReaderVerdict::kNone;

  double stall_share() const { return wall_seconds > 0 ? stall_seconds / wall_seconds : 0; }
  double cpu_share() const { return wall_seconds > 0 ? cpu_seconds / wall_seconds : 0; }
  double runq_share() const { return wall_seconds > 0 ? runq_seconds / wall_seconds : 0; }
  // What the process read without asking mmfs (rchar less the bytes mmfs served it), as a share
  // of rchar: the page cache's share if the process reads mostly from the mount; 0 without rchar.
  double page_cache_share_estimate() const {
    return has_rchar && rchar_bytes > served_bytes
               ? static_cast<double>(rchar_bytes - served_bytes) / static_cast<double>(rchar_bytes)
               : 0;
  }
};

// Since the mount, by command name (bounded: the Prometheus labels).
struct ReaderCommandTotals {
  std::string comm;
  double stall_seconds = 0, cpu_seconds = 0;
  uint64_t requests = 0, served_bytes = 0;
};

struct ReadersStats {
  bool enabled = false;
  double window_seconds = 0;
  // The top processes by stall, then "others" (the rest), then "finished" (readers that exited
  // in the window), the last two only when not empty. Only readers active in the window.
  std::vector<ReaderRow> rows;
  ReaderRow total;  // the sum of the rows
  ReaderVerdict verdict = ReaderVerdict::kNone;
  std::string advice;  // one line for the verdict
  uint64_t tracked_threads = 0, tracked_processes = 0;
  uint64_t untracked_requests = 0;  // requests of threads beyond the table's bound
  std::vector<ReaderCommandTotals> by_command;
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
