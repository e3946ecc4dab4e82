// The extent plan (fs/read/extent_plan.h), alone, case by case: each step is a pure function of
// plain values, so every rule is driven here without a dataset, a tier or a clock. (The extent
// reads themselves, through a Filesystem: extent_reader_test.cc.)
#include "fs/read/extent_plan.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "fs/format/format.h"

namespace mmfs::fs {
namespace {

constexpr uint64_t KiB = 1024;
constexpr uint64_t MiB = 1024 * KiB;

// A hard disk as the cost model would see it: 5 ms a request, 200 MB/s (extent 960 KiB).
OriginCostEstimate HardDisk() {
  OriginCostEstimate e;
  e.known = true;
  e.latency_seconds = 0.005;
  e.bandwidth_bytes_per_second = 200e6;
  e.extent_bytes = 960 * KiB;
  e.reads = 1000;
  return e;
}

ExtentSizeInputs Auto(uint64_t span, OriginCostEstimate cost) {
  ExtentSizeInputs in;
  in.mode = ExtentMode::kAuto;
  in.span = span;
  in.cost = cost;
  return in;
}

// Runs step 1 for `misses` misses in a row, the learning carried over; returns the last answer.
ExtentSize SizeMisses(ExtentSizeInputs in, int misses) {
  ExtentSize out;
  for (int i = 0; i < misses; ++i) {
    out = SizeExtent(in);
    in.learning = out.learning;
  }
  return out;
}

// The number of the first miss in a row that step 1 reads as an exploration probe.
int FirstExplore(ExtentSizeInputs in, int limit) {
  for (int i = 1; i <= limit; ++i) {
    ExtentSize out = SizeExtent(in);
    if (out.probe) return i;
    in.learning = out.learning;
  }
  return 0;
}

TEST(ExtentPlanTest, OutcomesAreFoldedInBatchesOf64HalfTheWeightOnTheNewest) {
  ExtentLearning l;
  ExtentLearning same = FoldOutcomes(l, 40, 23);  // 63: no batch yet
  EXPECT_EQ(same.used_share, 1.0);
  EXPECT_EQ(same.judged_used, 0u);
  EXPECT_EQ(same.growth, 1u);
  // All used: the share stays 1, the extent doubles.
  l = FoldOutcomes(l, 64, 0);
  EXPECT_EQ(l.used_share, 1.0);
  EXPECT_EQ(l.growth, 2u);
  EXPECT_EQ(l.judged_used, 64u);
  // 20 of the next 64 used (31%): half the weight on it, and the extent halves back.
  l = FoldOutcomes(l, 84, 44);
  EXPECT_DOUBLE_EQ(l.used_share, 0.5 * 1.0 + 0.5 * (20.0 / 64.0));
  EXPECT_EQ(l.growth, 1u);
  EXPECT_EQ(l.judged_used, 84u);
  EXPECT_EQ(l.judged_wasted, 44u);
  l = FoldOutcomes(l, 84, 108);  // none used: the growth never goes under 1
  EXPECT_EQ(l.growth, 1u);
  // Between 50% and 90% the growth stays; at 90% it doubles, never beyond 64.
  ExtentLearning grown;
  grown.growth = 4;
  EXPECT_EQ(FoldOutcomes(grown, 45, 19).growth, 4u);
  grown.growth = 64;
  EXPECT_EQ(FoldOutcomes(grown, 58, 6).growth, 64u);
}

TEST(ExtentPlanTest, OffReadsSamplesAndAFixedSizeTakesNoCostAndLearnsNothing) {
  ExtentSizeInputs in;
  in.mode = ExtentMode::kOff;
  EXPECT_EQ(SizeExtent(in).decision, ExtentDecision::kOff);

  in.mode = ExtentMode::kFixed;
  in.fixed_bytes = 256 * KiB;
  in.cost = HardDisk();
  in.area_used = 64;  // a batch to fold, which a fixed size does not look at
  ExtentSize out = SizeExtent(in);
  EXPECT_EQ(out.decision, ExtentDecision::kExtent);
  EXPECT_EQ(out.bytes, 256 * KiB);
  EXPECT_FALSE(out.probe);
  EXPECT_FALSE(out.cost.known);  // step 2 judges a fixed size by no estimate
  EXPECT_EQ(out.learning.judged_used, 0u);
  EXPECT_FALSE(out.learning.last_known.known);

  in.fixed_bytes = 0;
  EXPECT_EQ(SizeExtent(in).decision, ExtentDecision::kOff);
}

TEST(ExtentPlanTest, AnUnknownOriginReadsSamplesAndExploresOneMissInEvery) {
  ExtentSizeInputs in = Auto(3000, OriginCostEstimate{});
  in.explore_every = 8;
  for (int i = 1; i <= 7; ++i) {
    ExtentSize out = SizeExtent(in);
    EXPECT_EQ(out.decision, ExtentDecision::kUnknown) << i;
    EXPECT_EQ(out.learning.unknown_misses, static_cast<uint64_t>(i));
    in.learning = out.learning;
  }
  // The eighth is an exploration probe of 8 samples, at least 256 KiB.
  ExtentSize probe = SizeExtent(in);
  EXPECT_EQ(probe.decision, ExtentDecision::kExtent);
  EXPECT_TRUE(probe.probe);
  EXPECT_EQ(probe.bytes, 256 * KiB);
  EXPECT_FALSE(probe.cost.known);
}

TEST(ExtentPlanTest, ExplorationIsEagerOnlyWhereRequestsAreExpensive) {
  // 58 KB samples: an exploration extent of 8 of them, 512 KiB.
  OriginCostEstimate slow;  // not known, but a mean request of 2 ms: one miss in 16
  slow.mean_seconds = 0.002;
  EXPECT_EQ(FirstExplore(Auto(58000, slow), 1000), 16);
  EXPECT_EQ(SizeMisses(Auto(58000, slow), 16).bytes, 512 * KiB);
  // A cheap origin: rare enough that the probes' extra bytes are 5% of the misses' (1 in 160).
  OriginCostEstimate cheap;
  cheap.mean_seconds = 50e-6;
  EXPECT_EQ(FirstExplore(Auto(58000, cheap), 1000), 160);
}

TEST(ExtentPlanTest, AKnownOriginGetsItsExtentFromFourSamples) {
  ExtentSize out = SizeExtent(Auto(58000, HardDisk()));
  EXPECT_EQ(out.decision, ExtentDecision::kExtent);
  EXPECT_EQ(out.bytes, 960 * KiB);
  EXPECT_FALSE(out.probe);
  EXPECT_TRUE(out.cost.known);
  EXPECT_TRUE(out.learning.last_known.known);  // kept for when the model's fit fades
  // The extent must be 4x the sample read.
  EXPECT_EQ(SizeExtent(Auto(960 * KiB / 4, HardDisk())).decision, ExtentDecision::kExtent);
  EXPECT_EQ(SizeExtent(Auto(960 * KiB / 4 + 1, HardDisk())).decision, ExtentDecision::kSmall);
  OriginCostEstimate fast = HardDisk();  // a fast origin's knee: 64 KiB
  fast.extent_bytes = 64 * KiB;
  EXPECT_EQ(SizeExtent(Auto(58000, fast)).decision, ExtentDecision::kSmall);
}

TEST(ExtentPlanTest, UsedNeighboursGrowTheExtentUpTo8MiB) {
  ExtentSizeInputs in = Auto(58000, HardDisk());
  in.learning.growth = 4;
  EXPECT_EQ(SizeExtent(in).bytes, 4 * 960 * KiB);
  in.learning.growth = 64;
  EXPECT_EQ(SizeExtent(in).bytes, 8 * MiB);
  // A batch all used, folded at this miss: twice the model's size at once.
  in.learning.growth = 1;
  in.area_used = 64;
  ExtentSize out = SizeExtent(in);
  EXPECT_EQ(out.learning.growth, 2u);
  EXPECT_EQ(out.bytes, 2 * 960 * KiB);
  // Grown sizes are whole 64 KiB units; under one there is no extent to speak of.
  in.area_used = 0;
  in.span = 4000;
  in.cost.extent_bytes = 100 * KiB;
  in.learning.growth = 2;
  EXPECT_EQ(SizeExtent(in).bytes, 192 * KiB);
  in.cost.extent_bytes = 20000;
  EXPECT_EQ(SizeExtent(in).decision, ExtentDecision::kOff);
}

TEST(ExtentPlanTest, AStaleEstimateStandsWhileRareProbesKeepItFresh) {
  // The model no longer knows; its last estimate (a hard disk) stands.
  ExtentSizeInputs in = Auto(58000, OriginCostEstimate{});
  in.learning.last_known = HardDisk();
  in.explore_every = 2;
  ExtentSize first = SizeExtent(in);
  EXPECT_EQ(first.decision, ExtentDecision::kExtent);
  EXPECT_EQ(first.bytes, 960 * KiB);
  EXPECT_FALSE(first.probe);
  in.learning = first.learning;
  EXPECT_TRUE(SizeExtent(in).probe);
  // Last known not to pay (a bandwidth-bound volume): sample reads, re-checked five times more
  // rarely (1% of the misses' bytes: 1 in 803).
  in.explore_every = 0;
  in.learning = ExtentLearning{};
  in.learning.last_known = HardDisk();
  in.learning.last_known.extent_bytes = 64 * KiB;
  EXPECT_EQ(SizeMisses(in, 802).decision, ExtentDecision::kSmall);
  EXPECT_EQ(FirstExplore(in, 2000), 803);
}

TEST(ExtentPlanTest, ALatencyBoundEstimateOfTwoSamplesIsExploredNotTaken) {
  OriginCostEstimate stuck = HardDisk();
  stuck.latency_bound = true;
  stuck.extent_bytes = 2 * 58000;
  ExtentSizeInputs in = Auto(58000, stuck);
  in.explore_every = 4;
  EXPECT_EQ(SizeMisses(in, 3).decision, ExtentDecision::kUnknown);
  EXPECT_TRUE(SizeMisses(in, 4).probe);
}

format::Entry File(uint32_t index, uint32_t shard, uint64_t offset, uint64_t size) {
  format::Entry e;
  e.index = index;
  e.record.mode = format::kModeRegular;
  e.record.shard = shard;
  e.record.data_offset = offset;
  e.record.size = size;
  return e;
}

// Step 2's inputs for a 3000-byte sample at offset 300000 of shard 3, with step 1's answer of
// `extent` bytes (fixed unless `cost` is known) and a RAM tier of 64 MiB, empty.
ExtentPlanInputs Inputs(uint64_t extent, OriginCostEstimate cost = {}) {
  ExtentPlanInputs in;
  in.mode = cost.known ? ExtentMode::kAuto : ExtentMode::kFixed;
  in.shard = 3;
  in.span_start = 300000;
  in.span_end = 303000;
  in.members = 1;
  in.size.decision = ExtentDecision::kExtent;
  in.size.bytes = extent;
  in.size.cost = cost;
  in.room.ram_budget = 64 * MiB;
  in.room.dataset_bytes = 1000 * MiB;
  return in;
}

TEST(ExtentPlanTest, StepTwoKeepsStepOnesSampleRead) {
  ExtentPlanInputs in = Inputs(256 * KiB);
  in.size.decision = ExtentDecision::kUnknown;
  in.learning.unknown_misses = 5;
  ExtentPlan plan = PlanExtent(in);
  EXPECT_EQ(plan.decision, ExtentDecision::kUnknown);
  EXPECT_EQ(plan.learning.unknown_misses, 5u);
}

TEST(ExtentPlanTest, TheWindowIsAlignedAndHoldsTheWholeSample) {
  ExtentPlan plan = PlanExtent(Inputs(256 * KiB));
  ASSERT_EQ(plan.decision, ExtentDecision::kExtent);
  EXPECT_FALSE(plan.to_ssd);
  EXPECT_EQ(plan.room, 64 * MiB);
  EXPECT_EQ(plan.shard, 3u);
  EXPECT_EQ(plan.window_start, 256 * KiB);
  EXPECT_EQ(plan.window_end, 512 * KiB);
  EXPECT_EQ(plan.max_neighbours, 4095u);
  EXPECT_EQ(plan.max_steps, 4u * 4096);
  EXPECT_TRUE(plan.Covers(File(1, 3, 256 * KiB, 100)));
  EXPECT_TRUE(plan.Covers(File(2, 3, 512 * KiB - 100, 100)));
  EXPECT_FALSE(plan.Covers(File(3, 3, 512 * KiB - 99, 100)));  // crosses the end
  EXPECT_FALSE(plan.Covers(File(4, 3, 256 * KiB - 1, 100)));   // starts before
  EXPECT_FALSE(plan.Covers(File(5, 2, 300000, 100)));          // another shard
  format::Entry dir = File(6, 3, 0, 0);
  dir.record.mode = format::kModeDirectory;
  EXPECT_TRUE(ExtentPlan::Skips(dir));
  EXPECT_TRUE(ExtentPlan::Skips(File(7, 3, 300000, 0)));
  EXPECT_FALSE(ExtentPlan::Skips(File(8, 3, 300000, 1)));
  // A sample crossing the window's end widens it to the sample's end.
  ExtentPlanInputs in = Inputs(256 * KiB);
  in.span_start = 500000;
  in.span_end = 600000;
  plan = PlanExtent(in);
  EXPECT_EQ(plan.window_start, 256 * KiB);
  EXPECT_EQ(plan.window_end, 600000u);
  // A sample of max_files files leaves no neighbour to find.
  in.members = 4096;
  EXPECT_EQ(PlanExtent(in).max_neighbours, 0u);
}

TEST(ExtentPlanTest, NeighboursGoToAnAdmittingSsdTierElseToRoomBesideTheRamTier) {
  ExtentPlanInputs in = Inputs(256 * KiB);
  in.room.ram_budget = 200 * KiB;
  EXPECT_EQ(PlanExtent(in).decision, ExtentDecision::kNoRoom);
  in.room.ram_budget = 64 * MiB;
  in.room.ram_used = 64 * MiB - 100 * KiB;
  EXPECT_EQ(PlanExtent(in).decision, ExtentDecision::kNoRoom);
  in.room.ram_used = 65 * MiB;  // over its budget (shrunk): no room at all
  EXPECT_EQ(PlanExtent(in).decision, ExtentDecision::kNoRoom);
  // An SSD tier that admits, has space and a queue that takes the extent: no RAM room needed.
  in.room.ssd = true;
  in.room.ssd_budget = 1024 * MiB;
  in.room.ssd_max_entry = 64 * MiB;
  ExtentPlan plan = PlanExtent(in);
  EXPECT_EQ(plan.decision, ExtentDecision::kExtent);
  EXPECT_TRUE(plan.to_ssd);
  ExtentPlanInputs paused = in;
  paused.room.ssd_paused = true;
  EXPECT_EQ(PlanExtent(paused).decision, ExtentDecision::kNoRoom);
  ExtentPlanInputs full = in;
  full.room.ssd_used = 1024 * MiB - 100 * KiB;
  EXPECT_EQ(PlanExtent(full).decision, ExtentDecision::kNoRoom);
  ExtentPlanInputs queued = in;
  queued.room.ssd_pending = 64 * MiB - 100 * KiB;
  EXPECT_EQ(PlanExtent(queued).decision, ExtentDecision::kNoRoom);
  // Without room on SSD the RAM side still serves.
  queued.room.ram_used = 0;
  plan = PlanExtent(queued);
  EXPECT_EQ(plan.decision, ExtentDecision::kExtent);
  EXPECT_FALSE(plan.to_ssd);
}

// 64 KiB extents of 3000-byte samples at 200 MB/s with requests of `latency` seconds, beside a
// RAM tier with 256 KiB of room and 1.8 MB of the dataset it lacks.
ExtentPlanInputs Shuffled(double latency) {
  OriginCostEstimate cost = HardDisk();
  cost.latency_seconds = latency;
  cost.extent_bytes = 64 * KiB;
  ExtentPlanInputs in = Inputs(64 * KiB, cost);
  in.room.ram_budget = 256 * KiB;
  in.room.dataset_bytes = 1800000;
  return in;
}

TEST(ExtentPlanTest, TheForesightReadsSamplesWhenShuffledReadersWouldNotReachTheNeighbours) {
  // h = 15% of reads find the area; 21 samples' worth of neighbours a miss: under 1% would be
  // read, and at 50 us a request extents pay from 23%. One miss in 8 x 64 still probes.
  ExtentPlanInputs in = Shuffled(50e-6);
  for (int i = 1; i < 512; ++i) {
    ExtentPlan plan = PlanExtent(in);
    ASSERT_EQ(plan.decision, ExtentDecision::kNoRoom) << i;
    in.learning = plan.learning;
  }
  EXPECT_EQ(in.learning.foresight_misses, 511u);
  ExtentPlan probe = PlanExtent(in);
  EXPECT_EQ(probe.decision, ExtentDecision::kExtent);
  EXPECT_TRUE(probe.probe);
  EXPECT_EQ(probe.learning.foresight_misses, 0u);
  // At 5 ms a request they pay from 0.3%: the same room is enough.
  EXPECT_EQ(PlanExtent(Shuffled(0.005)).decision, ExtentDecision::kExtent);
  // Foresight off, or room for all the tier lacks: extents.
  in = Shuffled(50e-6);
  in.foresee_use = false;
  EXPECT_EQ(PlanExtent(in).decision, ExtentDecision::kExtent);
  in = Shuffled(50e-6);
  in.room.ram_used = 1800000 - 200 * KiB;   // the tier lacks 200 KiB of the dataset
  in.room.ram_budget = 1800000 + 64 * KiB;  // and has 264 KiB of room: h >= 1
  EXPECT_EQ(PlanExtent(in).decision, ExtentDecision::kExtent);
  // A used share measured from the probes that pays (a reader in shard order) wins.
  in = Shuffled(50e-6);
  in.learning.judged_used = 60;
  in.learning.judged_wasted = 4;
  in.learning.used_share = 0.9;
  ExtentPlan measured = PlanExtent(in);
  EXPECT_EQ(measured.decision, ExtentDecision::kExtent);
  EXPECT_FALSE(measured.probe);
  // Neither an exploration probe nor neighbours bound for the SSD tier are foreseen.
  in = Shuffled(50e-6);
  in.size.probe = true;
  EXPECT_EQ(PlanExtent(in).decision, ExtentDecision::kExtent);
  in = Shuffled(50e-6);
  in.room.ssd = true;
  in.room.ssd_budget = 1024 * MiB;
  in.room.ssd_max_entry = 64 * MiB;
  EXPECT_EQ(PlanExtent(in).decision, ExtentDecision::kExtent);
}

TEST(ExtentPlanTest, UnusedNeighboursReadSamplesButOneMissInProbeEveryProbes) {
  // 500 us a request: extents pay while 3% of the neighbours are used; 1% are.
  ExtentPlanInputs in = Shuffled(500e-6);
  in.foresee_use = false;
  in.probe_every = 8;
  in.learning.used_share = 0.01;
  for (int i = 1; i < 8; ++i) {
    ExtentPlan plan = PlanExtent(in);
    ASSERT_EQ(plan.decision, ExtentDecision::kUnused) << i;
    in.learning = plan.learning;
  }
  ExtentPlan probe = PlanExtent(in);
  EXPECT_EQ(probe.decision, ExtentDecision::kExtent);
  EXPECT_TRUE(probe.probe);
  EXPECT_EQ(probe.learning.misses_since_probe, 0u);
  in.learning.used_share = 0.04;
  ExtentPlan pays = PlanExtent(in);
  EXPECT_EQ(pays.decision, ExtentDecision::kExtent);
  EXPECT_FALSE(pays.probe);
}

TEST(ExtentPlanTest, AThirdExtentInFlightIsBusyAfterTheMissIsLearnt) {
  ExtentPlanInputs in = Inputs(256 * KiB);
  in.in_flight = 1;
  EXPECT_EQ(PlanExtent(in).decision, ExtentDecision::kExtent);
  in.in_flight = 2;
  EXPECT_EQ(PlanExtent(in).decision, ExtentDecision::kBusy);
  // The probe this miss was due is spent although the extent is not read.
  in = Shuffled(500e-6);
  in.foresee_use = false;
  in.probe_every = 3;
  in.learning.used_share = 0.01;
  in.learning.misses_since_probe = 5;
  in.in_flight = 2;
  ExtentPlan plan = PlanExtent(in);
  EXPECT_EQ(plan.decision, ExtentDecision::kBusy);
  EXPECT_EQ(plan.learning.misses_since_probe, 0u);
}

TEST(ExtentPlanTest, TheFilesAreTheWalksFindsAndTheMembersInShardOrder) {
  const std::vector<format::Entry> members = {File(10, 0, 1000, 100), File(11, 0, 1100, 100)};
  EXPECT_TRUE(AssembleExtent(members, {}, {}).files.empty());  // no neighbour: a sample read
  const std::vector<format::Entry> below = {File(9, 0, 900, 100), File(8, 0, 800, 100)};
  // Index order need not be shard order: entry 13 lies before the sample in the shard.
  const std::vector<format::Entry> above = {File(12, 0, 1200, 50), File(13, 0, 700, 60)};
  ExtentFiles x = AssembleExtent(members, below, above);
  std::vector<uint64_t> order;
  for (const format::Entry& f : x.files) order.push_back(f.index);
  EXPECT_EQ(order, (std::vector<uint64_t>{13, 8, 9, 10, 11, 12}));
  EXPECT_EQ(x.neighbours, (std::vector<uint64_t>{9, 8, 12, 13}));
  EXPECT_EQ(x.bytes, 1250u - 700u);
}

}  // namespace
}  // namespace mmfs::fs
