// ExtentReader: what extent reads share between misses. A demand miss from a slow origin may read
// the shard extent around its sample instead of the sample alone (the policy: the extent plan,
// fs/read/extent_plan.h); the miss loader (fs/read/miss_loader.h) takes the readings, walks the
// index and reads. This class holds the rest:
//  - the plan's state (ExtentLearning: the used share, the growth, the probes' and exploration's
//    miss counts, the cost model's last known estimate) and the extent reads in flight: each
//    step of a miss's plan runs on them under one lock (SizeMiss, Reserve), so that concurrent
//    misses see each other's updates and never take more than kMaxExtentsInFlight slots;
//  - the neighbours the extents bring, until a reader takes them. With an SSD tier that is
//    admitting and not full (the plan says so), they are written through to it (so a second
//    epoch and a remount never touch the origin for them), and marked so that their first read
//    counts them used. Otherwise they wait in the neighbour area, a FIFO of the RAM side bounded
//    by what the RAM tier has not filled (budget less bytes used): it never evicts a file that
//    was actually read, and it shrinks as the tier grows (pushing its oldest neighbours out,
//    counted wasted). A neighbour counts for the tier's admission only once a reader asks for
//    it (Take, from the miss loader). A reader of a neighbour whose extent is still in flight
//    waits for it in Take rather than read the same extent again.
//
// Counters: extents read and their bytes, probes, neighbours kept (RAM area, SSD), used and
// wasted, and why misses were read sample-sized (each step counts the misses it sends there).
//
// Ownership: borrows the dataset and the tier stack (which must outlive it); owns the area.
// An Extent is used by the one thread that reserved it and must not outlive its ExtentReader.
// Thread-safety: all methods are thread-safe (the plan's state under one mutex, taken before
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
#include "fs/format/dataset.h"
#include "fs/read/extent_plan.h"
#include "fs/read/extent_types.h"

namespace mmfs::fs {

class ExtentReader {
 public:
  ExtentReader(const format::Dataset& dataset, cache::TierStack& tiers, ExtentOptions options);
  ~ExtentReader();
  ExtentReader(const ExtentReader&) = delete;
  ExtentReader& operator=(const ExtentReader&) = delete;

  // One extent read, from its reservation (a slot in flight) to its end. While it lives, readers
  // of the neighbours it will keep wait for it in Take instead of reading the same extent again.
  class Extent {
   public:
    Extent() = default;
    Extent(Extent&& other) noexcept;
    Extent& operator=(Extent&&) = delete;
    Extent(const Extent&) = delete;
    ~Extent();
    // Whether there is nothing to read: the miss is read sample-sized.
    bool empty() const { return files.empty(); }
    // What step 2 decided (the window and the walk's bounds, when kExtent).
    const ExtentPlan& plan() const { return plan_; }
    // Every file to read, in shard order (the sample's members among them); one shard.
    std::vector<format::Entry> files;

   private:
    friend class ExtentReader;
    ExtentReader* owner_ = nullptr;  // set once the extent holds something to release
    ExtentPlan plan_;
    std::vector<uint64_t> loading_;  // neighbour keys announced to the area
    bool in_flight_ = false;         // holds one of the kMaxExtentsInFlight slots
  };

  const ExtentOptions& options() const { return options_; }
  // Before a miss is planned: the RAM tier may have grown since the last neighbour was kept, and
  // the area gives way.
  void FitArea();
  // Step 1 (SizeExtent) for a sample read of `span` bytes with the cost model's estimate `cost`
  // (auto), on the options and what was learnt. Keeps the learning; counts a miss it sends to a
  // sample read.
  ExtentSize SizeMiss(uint64_t span, const OriginCostEstimate& cost);
  // Step 2 (PlanExtent) on the loader's part of `in` (the sample read, step 1's answer, the
  // room), completed here with the options, the learning and the extent reads in flight. Keeps
  // the learning. When the plan says kExtent the result holds a slot in flight, else the miss
  // is counted and the result is empty (its plan() says why).
  Extent Reserve(ExtentPlanInputs in);
  // Step 3: the files the walk found (AssembleExtent) go into `extent`, its neighbours announced
  // to the area and the read counted; with none, its slot is released and the miss counted
  // small.
  void Start(Extent& extent, ExtentFiles files);
  // Whether the area holds `key` or an extent in flight will bring it (the walk stops there).
  bool Holds(uint64_t key) const { return area_.Contains(key); }

  // A file of `extent` outside the sample, read and checked: kept for its reader (unless a tier
  // already holds it).
  void Keep(const Extent& extent, const format::Entry& neighbour, cache::Blob blob);
  // The neighbour kept for `key` in the RAM area (counted used; waits for an extent in flight),
  // or one an extent in flight wrote to the SSD tier, or null.
  cache::Blob Take(uint64_t key);
  // The same without waiting: null while an extent in flight is still bringing it (then
  // `*loading` is set).
  cache::Blob TakeHeld(uint64_t key, bool* loading);
  // The read of `extent` failed: its waiters are released and the caller reads the sample
  // alone (a bad spot in a neighbour must not cost the sample its read).
  void Abandon(Extent& extent);
  // A READ at offset 0 of original `entry_index` that the SSD tier served: a neighbour written
  // there counts as used when its first reader comes.
  void NoteSsdRead(uint64_t entry_index);
  // The RAM tier's budget changed (memory pressure): the area's room follows at once.
  void SetRoom();
  ExtentCounters Counters() const;

 private:
  // A neighbour an extent wrote to the SSD tier, taken (counted used), or null.
  cache::Blob FromSsd(uint64_t key);
  void EndExtent(Extent& extent);
  // Counts a miss read sample-sized, by why (`decision`).
  void Count(ExtentDecision decision);
  // The RAM area's share: what the RAM tier has not filled.
  uint64_t RamRoom() const;

  const format::Dataset& dataset_;
  cache::TierStack& tiers_;
  const ExtentOptions options_;
  // Neighbours waiting for their first reader; counted under one pattern (kSampleMembers).
  cache::PrefetchBuffer area_;
  // With an SSD tier: 1 for an original written through as a neighbour and not read since.
  std::unique_ptr<std::atomic<uint8_t>[]> on_ssd_;

  // Guards learning_ and the taking of slots in flight. Lock order: mu_, then area_'s own mutex
  // (SizeMiss reads the area's counters); nothing takes them the other way.
  mutable std::mutex mu_;
  ExtentLearning learning_;
  // Extent reads reserved and not yet ended; incremented only under mu_ (so a count read there
  // stays true until the reservation), decremented by each extent's end.
  std::atomic<int> in_flight_{0};

  std::atomic<uint64_t> extents_{0}, extent_bytes_{0}, probes_{0}, last_extent_{0};
  std::atomic<uint64_t> kept_ssd_files_{0}, kept_ssd_bytes_{0};
  std::atomic<uint64_t> used_ssd_files_{0}, used_ssd_bytes_{0};
  std::atomic<uint64_t> skipped_unknown_{0}, skipped_small_{0}, skipped_no_room_{0},
      skipped_unused_{0}, skipped_busy_{0};
};

}  // namespace mmfs::fs
