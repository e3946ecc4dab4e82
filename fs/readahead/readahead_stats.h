// Readahead's stat types, each a typed value of the stats snapshot (fs/stats/stats.h): the
// prefetcher's (ReadaheadStats, Prefetcher::Stats, with the push's PushStats, whose queue counts
// the FUSE layer's pushers keep in Metrics) and warm-up's (WarmupStats, Warmup::Stats). The
// fill's are in fill_types.h.
//
// Here, in fs/readahead, so that the rooms that fill them include nothing above their folder, and
// apart from them so that the snapshot need not include the prefetcher or warm-up.
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "cache/hinted_order.h"
#include "cache/prefetch_buffer.h"

namespace mmfs::fs {

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

struct WarmupStats {
  // done: stored in the tier (after its writes); rejected: kept out by the tier's budget;
  // not_stored: the tier could not store them (problem says why: full disk, failing writes).
  uint64_t requested = 0, done = 0, bytes = 0, skipped = 0, rejected = 0, errors = 0, evicted = 0,
           not_stored = 0;
  std::string last_sync;  // the token of the last `sync` line handled
  std::string problem;    // the tier's reason for the last files not stored, or ""
};

}  // namespace mmfs::fs
