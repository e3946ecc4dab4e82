// ExtentReader: on a demand miss from a slow origin, read the shard extent around the sample
// instead of the sample alone, and keep the neighbours it brings where a later read finds them.
//
// Why: a shuffled first epoch from a seek-bound origin (a hard disk, a network volume, an object
// store: milliseconds a request) costs one request per sample, while one request could bring
// tens of samples for about the same time. OriginCostModel (origin_cost_model.h) says what a
// request and a byte cost; the extent that pays is about bandwidth x latency long.
//
// The decision, per miss (Plan):
//  - `off`: never. A fixed SIZE: always, when there is room. `auto`: when the cost model knows
//    the origin and its extent is at least 4x the sample read (else an extent is a sample and
//    gains nothing: a bandwidth-bound or fast local origin), when there is room to keep the
//    neighbours, and while the neighbours kept so far were used often enough to pay: a used
//    neighbour saves a request (latency + its transfer), a wasted one cost its transfer, so an
//    extent pays while the used share is above span / (span + latency x bandwidth). Below it the
//    reader falls back to sample reads and probes with one extent every 64 misses, so it learns
//    when the workload changes. While the neighbours are nearly all used (a batch at 90% or
//    more), the extent doubles, up to 64x the model's size and 8 MiB: a larger extent costs
//    less per byte a reader gets, and the model's knee (bandwidth x latency) is only where
//    transfer starts to count; a batch under 50% halves it back. Samples of about one size read one at a time show the model no
//    slope: until it first knows the origin, one miss in 16 reads an extent of 8 samples (at
//    least 256 KiB), a probe that gives it reads of another size. Once it has known, its last
//    estimate stands while the fit fades, and probes come only as often as keeps their extra
//    bytes under 5% of the misses' (1% where that estimate said extents do not pay), to keep it
//    fresh.
//  - Room: with an SSD tier that is admitting and not full, neighbours are written through to
//    it (so a second epoch and a remount never touch the origin for them). Otherwise they wait
//    in the neighbour area, a FIFO of the RAM side bounded by what the RAM tier has not filled
//    (budget less bytes used): it never evicts a file that was actually read, and it shrinks as
//    the tier grows (pushing its oldest neighbours out, counted wasted). A neighbour counts for
//    the tier's admission only once a reader asks for it (Take, from the miss loader). As the
//    used share is only learnt when the area pushes neighbours out (late: hundreds of extents
//    in), `auto` also foretells it: in shuffled order the area is a cache of its room over the
//    dataset bytes the RAM tier lacks, found by a read h = room / unheld of the time, so of
//    the neighbours a miss brings (gain bytes for each byte wanted) h / (gain x (1 - h)) are
//    read; below the share that pays no extent is read (counted no_room) but for a probe one
//    miss in 512, and a used share measured from such probes that pays (a reader in shard
//    order) overrules the foresight.
//  - The extent is the aligned window of that size holding the sample (widened to the sample if
//    the sample crosses its end); from the sample, the index's neighbours on each side, in the
//    sample's shard, for as long as they lie wholly inside it and no tier or the area holds them
//    (index order is shard order within a directory, not always across directories: the walk
//    stops at the first file outside or held), are read in one request with the gaps between
//    them. So an extent never reads again what an earlier one brought, whatever their sizes. At most two extent reads are in flight
//    (each holds up to twice its size); a read that fails is retried as the sample alone.
//
// Counters: extents read and their bytes, probes, neighbours kept (RAM area, SSD), used and
// wasted, and why misses were read sample-sized.
//
// Ownership: borrows the dataset, the origin reader and the tier stack (which must outlive it);
// owns the neighbour area.
// A Plan is used by the one thread that planned it and must not outlive its ExtentReader.
// Thread-safety: all methods are thread-safe (the policy state under one mutex, taken before
// the area's).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cache/prefetch_buffer.h"
#include "cache/tier_stack.h"
#include "fs/core/extent_types.h"
#include "fs/core/origin_reader.h"
#include "fs/format/dataset.h"

namespace mmfs::fs {

class ExtentReader {
 public:
  ExtentReader(const format::Dataset& dataset, OriginReader& origin, cache::TierStack& tiers,
               ExtentOptions options);
  ~ExtentReader();
  ExtentReader(const ExtentReader&) = delete;
  ExtentReader& operator=(const ExtentReader&) = delete;

  // One planned extent read. While it lives, readers of the neighbours it will keep wait for it
  // in Take instead of reading the same extent again.
  class Plan {
   public:
    Plan() = default;
    Plan(Plan&& other) noexcept;
    Plan& operator=(Plan&&) = delete;
    Plan(const Plan&) = delete;
    ~Plan();
    bool empty() const { return files.empty(); }
    // Every file to read, in shard order (the sample's members among them); one shard.
    std::vector<format::Entry> files;

   private:
    friend class ExtentReader;
    ExtentReader* owner_ = nullptr;  // set once the plan holds something to release
    std::vector<uint64_t> loading_;  // neighbour keys announced to the area
    bool to_ssd_ = false;
    bool in_flight_ = false;  // counts against kMaxInFlight
    uint64_t room_ = 0;       // what the RAM tier had not filled when planned
  };

  // What to read for a miss of `e`, whose sample read would be `members` (back to back in one
  // shard, e among them): an extent, or an empty plan for the sample read.
  Plan PlanMiss(const format::Entry& e, const std::vector<format::Entry>& members);
  // A file of `plan` outside the sample, read and checked: kept for its reader (unless a tier
  // already holds it).
  void Keep(const Plan& plan, const format::Entry& neighbour, cache::Blob blob);
  // The neighbour kept for `key` in the RAM area (counted used; waits for an extent in flight),
  // or null.
  cache::Blob Take(uint64_t key);

  // The extent read of `plan` failed: its waiters are released and the caller reads the sample
  // alone (a bad spot in a neighbour must not cost the sample its read).
  void Abandon(Plan& plan);
  // A READ at offset 0 of original `entry_index` that the SSD tier served: a neighbour written
  // there counts as used when its first reader comes.
  void NoteSsdRead(uint64_t entry_index);
  // The RAM tier's budget changed (memory pressure): the area's room follows at once.
  void SetRoom();
  ExtentCounters Counters() const;

 private:
  void EndPlan(Plan& plan);
  // The RAM area's share: what the RAM tier has not filled.
  uint64_t RamRoom() const;
  // Folds the RAM area's used/wasted counts since the last call into used_share_. REQUIRES mu_.
  void UpdateUsedShare();

  const format::Dataset& dataset_;
  OriginReader& origin_;
  cache::TierStack& tiers_;
  const ExtentOptions options_;
  // Neighbours waiting for their first reader; counted under one pattern (kSampleMembers).
  cache::PrefetchBuffer area_;
  // With an SSD tier: 1 for an original written through as a neighbour and not read since.
  std::unique_ptr<std::atomic<uint8_t>[]> on_ssd_;

  // Guards the policy state below. Lock order: mu_, then area_'s own mutex (UpdateUsedShare
  // reads the area's counters); nothing takes them the other way.
  mutable std::mutex mu_;
  double used_share_ = 1;  // optimistic until neighbours have been judged
  uint64_t growth_ = 1;    // extents are the model's size times this (UpdateUsedShare)
  uint64_t judged_used_ = 0, judged_wasted_ = 0;  // area counts already folded in
  uint64_t misses_since_probe_ = 0;
  uint64_t foresight_misses_ = 0;   // misses read sample-sized by the room's foresight
  uint64_t unknown_misses_ = 0;     // misses while the origin's cost was not known (or stale)
  OriginCostEstimate last_known_;   // the model's last known estimate

  std::atomic<uint64_t> extents_{0}, extent_bytes_{0}, probes_{0}, last_extent_{0};
  std::atomic<uint64_t> kept_ssd_files_{0}, kept_ssd_bytes_{0};
  std::atomic<uint64_t> used_ssd_files_{0}, used_ssd_bytes_{0};
  std::atomic<uint64_t> skipped_unknown_{0}, skipped_small_{0}, skipped_no_room_{0},
      skipped_unused_{0}, skipped_busy_{0};
  std::atomic<int> in_flight_{0};  // extent reads planned and not yet ended
};

}  // namespace mmfs::fs
