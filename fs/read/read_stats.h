// The read path's stat types, each a typed value of the stats snapshot (fs/stats/stats.h): the
// origin's reads by cause and what they cost (OriginStats: OriginReader::Report, the miss queue's
// and the tier stack's counters) and each served view's (ViewStats: ViewFiles::Stats).
//
// Here, in fs/read, so that the rooms that fill them include nothing above their folder, and
// apart from the readers so that the snapshot need not include them (as extent_types.h).
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <optional>

#include "cache/refetch_tracker.h"
#include "fs/origin/remote_stats.h"
#include "fs/read/miss_queue.h"
#include "fs/read/origin_cost_model.h"
#include "fs/read/ranged_reader.h"

namespace mmfs::fs {

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

}  // namespace mmfs::fs
