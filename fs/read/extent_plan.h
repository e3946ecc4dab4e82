// The extent plan: whether a demand miss of an original reads the shard extent around its sample
// instead of the sample alone, which extent, and what that teaches the next miss. A pure
// decision over readings the miss loader takes (miss_loader.h) and the state the extent reader
// carries from miss to miss (ExtentLearning, kept by fs/read/extent_reader.h).
//
// Why extents: a shuffled first epoch from a seek-bound origin (a hard disk, a network volume,
// an object store: milliseconds a request) costs one request per sample, while one request could
// bring tens of samples for about the same time. The cost model (origin_cost_model.h) says what a
// request and a byte cost; the extent that pays is about bandwidth x latency long.
//
// The policy:
//  - `off`: never. A fixed SIZE: always, when there is room. `auto`: when the cost model knows
//    the origin and its extent is at least 4x the sample read (else an extent is a sample and
//    gains nothing: a bandwidth-bound or fast local origin), when there is room to keep the
//    neighbours, and while the neighbours kept so far were used often enough to pay: a used
//    neighbour saves a request (latency + its transfer), a wasted one cost its transfer, so an
//    extent pays while the used share is above span / (span + latency x bandwidth). Below it the
//    miss is read sample-sized, and one miss in 64 (probe_every) is read as an extent anyway, a
//    **probe**, so the plan learns when the workload changes.
//  - Growth: while the neighbours are nearly all used (a batch of 64 outcomes at 90% or more),
//    the extent doubles, up to 64x the model's size and 8 MiB: a larger extent costs less per
//    byte a reader gets, and the model's knee (bandwidth x latency) is only where transfer starts
//    to count; a batch under 50% halves it back.
//  - **Explore**: samples of about one size read one at a time show the model no slope. Until it
//    first knows an origin whose requests are expensive, one miss in 16 reads an extent of 8
//    samples (at least 256 KiB), an exploration probe that gives it reads of another size. Once
//    it has known, its last estimate stands while the fit fades, and exploration comes only as
//    often as keeps its extra bytes under 5% of the misses' (1% where that estimate said extents
//    do not pay), to keep it fresh.
//  - **Room**: with an SSD tier that is admitting, not full and whose write queue takes the
//    extent, the neighbours are written through to it. Otherwise they wait in the neighbour
//    **area**, which lives in what the RAM tier has not filled (its budget less its bytes used):
//    no room for the extent there, no extent.
//  - **Foresight**: the used share is learnt late (a neighbour counts as wasted only once the
//    area pushes it out, hundreds of extents in), so `auto` also foretells it. In shuffled order
//    the area is a cache of its room over the dataset bytes the RAM tier lacks (unheld), found by
//    a read h = room / unheld of the time; of the neighbours a miss brings (gain bytes for each
//    byte wanted) h / (gain x (1 - h)) are read. Below the share that pays, no extent (counted
//    no_room) but for a probe one miss in 512 (8 x probe_every); a used share measured from such
//    probes that pays (a reader in shard order) overrules the foresight.
//  - In flight: at most two extent reads at once (each holds its raw span and a copy of its
//    files, up to twice the extent); more misses meanwhile are read sample-sized (busy).
//  - The extent is the aligned window of its size holding the sample (widened to the sample if
//    the sample crosses its end). The miss loader walks the index from the sample both ways for
//    the files wholly inside the window that nobody holds (no tier, not the area); the walk stops
//    at the first file outside or held (index order is shard order within a directory, not
//    always across directories), so an extent never reads again what an earlier one brought,
//    whatever their sizes.
//
// Three steps, each a pure function, in the order a miss needs them; each step's readings are
// taken only for a miss the step before did not already send to a sample read (the room reads
// the RAM tier's counters, which locks each of its shards; the walk reads the index and asks
// every tier):
//   1. SizeExtent: from the cost estimate, the area's outcomes and the learning: the extent's
//      size, or a sample read (off, cost unknown, too small).
//   2. PlanExtent: from the room, the learning and the extent reads in flight: the window to walk,
//      or a sample read (no room, neighbours unused, busy).
//   3. AssembleExtent: from what the walk found in the window: the files to read, or a sample
//      read (no neighbour: too small).
//
// Thread-safety: pure functions over plain values (no locks, no I/O, no clock).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "fs/format/dataset.h"
#include "fs/read/extent_types.h"
#include "fs/read/origin_cost_model.h"

namespace mmfs::fs {

// The plan's constants (ExtentOptions holds what a mount or a test may change).
// An extent must be this many times the sample read to be worth planning: below it, an extent
// is a sample and its neighbours, if any, are crumbs.
inline constexpr uint64_t kMinExtentGain = 4;
// Exploration probes: at least this large, one miss in kFirstExploreEvery until the model first
// knows the origin, then rare enough that their extra bytes are at most kExploreShare of the
// misses'. Eager only where a request takes kExpensiveRequest seconds or more.
inline constexpr uint64_t kExploreBytes = 256ull << 10;
inline constexpr uint64_t kFirstExploreEvery = 16;
inline constexpr double kExploreShare = 0.05;
inline constexpr double kExpensiveRequest = 0.001;
// While neighbours are nearly all used, extents grow by doubling up to this many times the
// model's size and this size (bytes: larger gains little per request).
inline constexpr uint64_t kMaxExtentGrowth = 64;
inline constexpr uint64_t kMaxGrownExtent = 8ull << 20;
// Extent reads in flight at most: each holds its raw span and a copy of its files, up to twice
// the extent; more misses at once read sample-sized.
inline constexpr int kMaxExtentsInFlight = 2;
// Area outcomes (used + wasted) folded into the used share at a time.
inline constexpr uint64_t kJudgeBatch = 64;
// Where the foresight says no, one miss in this many times probe_every still reads an extent.
inline constexpr uint64_t kForesightProbeFactor = 8;

// What the plan carries from one miss to the next (the extent reader keeps it under its lock).
struct ExtentLearning {
  double used_share = 1;  // recent used / (used + wasted) of the area; optimistic until judged
  uint64_t growth = 1;    // extents are the model's size times this
  uint64_t judged_used = 0, judged_wasted = 0;  // the area's outcomes already folded in
  uint64_t misses_since_probe = 0;  // sample reads since the last probe (neighbours unused)
  uint64_t foresight_misses = 0;    // sample reads since the last probe (foresight)
  uint64_t unknown_misses = 0;      // misses while the cost was not known, stale or stuck
  OriginCostEstimate last_known;    // the model's last known estimate
};

// Why a miss is read sample-sized, or kExtent when it is not.
enum class ExtentDecision {
  kExtent,   // read the extent
  kOff,      // nothing to plan: extents off, no file, a zero size (not counted)
  kUnknown,  // the origin's cost is not known (ExtentCounters::skipped_unknown)
  kSmall,    // the extent would be no larger than a few samples, or holds no neighbour
  kNoRoom,   // nowhere to keep the neighbours, or the foresight says they would go unused
  kUnused,   // the neighbours kept so far were too rarely used
  kBusy,     // kMaxExtentsInFlight extent reads are in flight already
};

// Folds the area's outcomes so far (`used`, `wasted`: its counters) into the used share and the
// growth, a batch of kJudgeBatch at a time, half the weight on the newest batch.
ExtentLearning FoldOutcomes(ExtentLearning learning, uint64_t used, uint64_t wasted);

// Step 1: the extent's size.
struct ExtentSizeInputs {
  // From ExtentOptions.
  ExtentMode mode = ExtentMode::kAuto;
  uint64_t fixed_bytes = 0;
  uint64_t explore_every = 0;
  // The sample read's bytes (at least 1).
  uint64_t span = 1;
  // The cost model's estimate now (auto only).
  OriginCostEstimate cost;
  // The area's neighbours used and wasted so far (auto only: FoldOutcomes).
  uint64_t area_used = 0, area_wasted = 0;
  ExtentLearning learning;
};
struct ExtentSize {
  ExtentDecision decision = ExtentDecision::kExtent;
  uint64_t bytes = 0;  // the extent's size (kExtent)
  bool probe = false;  // an exploration probe
  // The estimate step 2 judges by: the last known one while the model's is stale; not known for
  // a probe or a fixed size.
  OriginCostEstimate cost;
  ExtentLearning learning;  // after this miss
};
ExtentSize SizeExtent(const ExtentSizeInputs& in);

// What the room for the neighbours looks like at the miss.
struct ExtentRoom {
  bool ssd = false;         // the mount has an SSD tier; then:
  bool ssd_paused = false;  // its admission is paused
  uint64_t ssd_used = 0, ssd_budget = 0;
  uint64_t ssd_pending = 0;    // bytes in its write queue
  uint64_t ssd_max_entry = 0;  // the largest blob it admits (at most its write queue's bound)
  uint64_t ram_used = 0, ram_budget = 0;  // the RAM tier
  uint64_t dataset_bytes = 0;             // every file's bytes (the manifest's total)
};

// Step 2: the window, given the room.
struct ExtentPlanInputs {
  // From ExtentOptions.
  ExtentMode mode = ExtentMode::kAuto;
  uint64_t probe_every = 64;
  bool foresee_use = true;
  size_t max_files = 4096;
  // The sample read: its shard, the bytes it covers and its files.
  uint32_t shard = 0;
  uint64_t span_start = 0, span_end = 0;
  size_t members = 0;
  ExtentSize size;  // step 1's answer (kExtent)
  ExtentRoom room;
  ExtentLearning learning;  // as step 1 left it
  int in_flight = 0;        // extent reads in flight now
};
struct ExtentPlan {
  ExtentDecision decision = ExtentDecision::kOff;
  bool probe = false;   // read although extents do not pay now (explore, foresight or unused)
  bool to_ssd = false;  // the neighbours go to the SSD tier, else to the area
  uint64_t room = 0;    // what the RAM tier has not filled: the area's budget
  // The window in the sample's shard: [window_start, window_end).
  uint32_t shard = 0;
  uint64_t window_start = 0, window_end = 0;
  // The walk's bounds: neighbours found (both ways together), entries passed.
  size_t max_neighbours = 0, max_steps = 0;
  ExtentLearning learning;  // after this miss

  // Whether regular file `e` lies wholly inside the window.
  bool Covers(const format::Entry& e) const {
    return e.record.shard == shard && e.record.data_offset >= window_start &&
           e.record.data_offset + e.size() <= window_end;
  }
  // Whether the walk passes over `e` without looking at it: a directory or an empty file.
  static bool Skips(const format::Entry& e) { return !e.is_regular() || e.size() == 0; }
};
ExtentPlan PlanExtent(const ExtentPlanInputs& in);

// Step 3: the files to read.
struct ExtentFiles {
  // Every file to read in shard order, the sample's members among them; empty: no neighbour was
  // found (a sample read, kSmall).
  std::vector<format::Entry> files;
  std::vector<uint64_t> neighbours;  // the keys of the files that are not members
  uint64_t bytes = 0;                // the one read's span
};
// `members`: the sample read's files (index order); `below`, `above`: what the walk found on each
// side, nearest first.
ExtentFiles AssembleExtent(const std::vector<format::Entry>& members,
                           const std::vector<format::Entry>& below,
                           const std::vector<format::Entry>& above);

}  // namespace mmfs::fs
