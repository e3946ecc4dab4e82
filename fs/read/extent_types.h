// The options of extent reads on demand misses (the plan: fs/read/extent_plan.h; its state and the
// neighbours: extent_reader.h), `-o extents=`, and their counters, one typed value of the stats
// snapshot (fs/stats/stats.h). Kept apart from the reader so that the options and the snapshot need
// not include it.
//
// Thread-safety: a plain value.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "base/status.h"
#include "fs/read/origin_cost_model.h"

namespace mmfs::fs {

enum class ExtentMode { kAuto, kOff, kFixed };

// A fixed extent's size (`-o extents=SIZE`) is within these bounds; the sizes `auto` chooses are
// multiples of the smaller.
inline constexpr uint64_t kMinExtentBytes = 64ull << 10;
inline constexpr uint64_t kMaxExtentBytes = 64ull << 20;

struct ExtentOptions {
  ExtentMode mode = ExtentMode::kAuto;
  uint64_t fixed_bytes = 0;  // kFixed: the extent's size
  // Files of one extent at most (bounds the index walk and the blobs of one read).
  size_t max_files = 4096;
  // While extents do not pay (auto), one miss in this many is read as an extent anyway, to see
  // whether its neighbours are used now.
  uint64_t probe_every = 64;
  // Whether `auto` foretells the neighbours' use from the room beside the RAM tier (on; off in
  // the tests of the used-share fall-back alone).
  bool foresee_use = true;
  // While the origin's cost is not known (or only was), one miss in this many is a probe
  // extent; 0: one in 16 until first known, then as rarely as keeps the probes' extra bytes
  // under 5% of the misses'.
  uint64_t explore_every = 0;
  // What the origin costs; empty: the origin reader's own model (tests give a fixed one).
  std::function<OriginCostEstimate()> cost;
};

// Parses "auto", "off" or a size ("1M", "512K"; 64 KiB to 64 MiB) for `-o extents=`.
Result<ExtentOptions> ParseExtentOption(const std::string& value);

struct ExtentCounters {
  uint64_t extents = 0, extent_bytes = 0;  // extent reads made (probes included), their bytes
  uint64_t probes = 0;                     // extent reads made while extents did not pay
  uint64_t kept_files = 0, kept_bytes = 0;          // neighbours kept in the RAM area
  uint64_t kept_ssd_files = 0, kept_ssd_bytes = 0;  // neighbours written through to the SSD tier
  uint64_t used_files = 0, used_bytes = 0;      // kept neighbours a reader asked for
  uint64_t wasted_files = 0, wasted_bytes = 0;  // pushed out of the RAM area unread
  // Misses read sample-sized, by why: the origin's cost not known yet, an extent no larger than
  // a sample would pay, no room to keep neighbours, neighbours too rarely used.
  uint64_t skipped_unknown = 0, skipped_small = 0, skipped_no_room = 0, skipped_unused = 0;
  uint64_t skipped_busy = 0;  // two extent reads were in flight already (their memory)
  uint64_t area_bytes = 0, area_budget = 0;  // the RAM area now
  double used_share = 1;                     // recent used / (used + wasted) of the RAM area
  uint64_t last_extent_bytes = 0;            // the size of the last extent read
  std::string mode;                          // "auto", "off" or the fixed size
};

}  // namespace mmfs::fs
