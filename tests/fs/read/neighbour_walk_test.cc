// The walk over index neighbours (fs/read/neighbour_walk.h), alone, over an index held in a
// list: which entries it visits in each direction, where it stops (the visitor, the index's
// ends, a damaged entry, the step budget) and what it counts as passed.
#include "fs/read/neighbour_walk.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

#include "fs/format/format.h"

namespace mmfs::fs {
namespace {

// An index of `n` regular files, entry i at offset 100 * i; `damaged` entries fail to read.
struct ListIndex {
  explicit ListIndex(uint64_t n) {
    for (uint64_t i = 0; i < n; ++i) {
      format::Entry e;
      e.index = static_cast<uint32_t>(i);
      e.record.mode = format::kModeRegular;
      e.record.data_offset = 100 * i;
      e.record.size = 100;
      entries.push_back(e);
    }
  }
  uint64_t entry_count() const { return entries.size(); }
  Result<format::Entry> GetEntry(uint64_t i) const {
    reads.push_back(i);
    if (i >= entries.size()) return Status::NotFound("no such entry");
    if (damaged.count(i) > 0) return Status::Corruption("damaged entry");
    return entries[i];
  }
  std::vector<format::Entry> entries;
  std::set<uint64_t> damaged;
  mutable std::vector<uint64_t> reads;  // every index asked for, in order
};

// Walks and records the indexes visited; stops at `stop_at` (not passed).
struct Walk {
  std::vector<uint64_t> visited;
  size_t passed = 0;
};
Walk WalkFrom(const ListIndex& index, uint64_t from, WalkDirection dir, size_t max_steps,
              uint64_t stop_at = UINT64_MAX) {
  Walk w;
  w.passed = WalkNeighbours(index, from, dir, max_steps, [&](const format::Entry& e) {
    w.visited.push_back(e.index);
    return e.index == stop_at ? WalkStep::kStop : WalkStep::kOn;
  });
  return w;
}

TEST(NeighbourWalkTest, DownVisitsTheEntriesBelowNearestFirstToIndexZero) {
  ListIndex index(10);
  Walk w = WalkFrom(index, 4, WalkDirection::kDown, 100);
  EXPECT_EQ(w.visited, (std::vector<uint64_t>{3, 2, 1, 0}));
  EXPECT_EQ(w.passed, 4u);
  EXPECT_EQ(index.reads, (std::vector<uint64_t>{3, 2, 1, 0}));  // never `from`, never below 0
  EXPECT_TRUE(WalkFrom(index, 0, WalkDirection::kDown, 100).visited.empty());
}

TEST(NeighbourWalkTest, UpVisitsTheEntriesAboveNearestFirstToTheLast) {
  ListIndex index(10);
  Walk w = WalkFrom(index, 6, WalkDirection::kUp, 100);
  EXPECT_EQ(w.visited, (std::vector<uint64_t>{7, 8, 9}));
  EXPECT_EQ(w.passed, 3u);
  // The index's end is known: the walk asks for no entry past it.
  EXPECT_EQ(index.reads, (std::vector<uint64_t>{7, 8, 9}));
  EXPECT_TRUE(WalkFrom(index, 9, WalkDirection::kUp, 100).visited.empty());
}

TEST(NeighbourWalkTest, TheVisitorsStopEndsTheWalkAndIsNotPassed) {
  ListIndex index(10);
  Walk up = WalkFrom(index, 2, WalkDirection::kUp, 100, /*stop_at=*/5);
  EXPECT_EQ(up.visited, (std::vector<uint64_t>{3, 4, 5}));
  EXPECT_EQ(up.passed, 2u);
  Walk down = WalkFrom(index, 8, WalkDirection::kDown, 100, /*stop_at=*/6);
  EXPECT_EQ(down.visited, (std::vector<uint64_t>{7, 6}));
  EXPECT_EQ(down.passed, 1u);
}

TEST(NeighbourWalkTest, ADamagedEntryEndsTheWalkUnvisited) {
  ListIndex index(10);
  index.damaged = {3};
  EXPECT_EQ(WalkFrom(index, 6, WalkDirection::kDown, 100).visited, (std::vector<uint64_t>{5, 4}));
  EXPECT_EQ(WalkFrom(index, 0, WalkDirection::kUp, 100).visited, (std::vector<uint64_t>{1, 2}));
}

TEST(NeighbourWalkTest, MaxStepsBoundsThePassedEntriesSoTwoWalksCanShareABudget) {
  ListIndex index(100);
  Walk w = WalkFrom(index, 50, WalkDirection::kUp, 3);
  EXPECT_EQ(w.visited, (std::vector<uint64_t>{51, 52, 53}));
  EXPECT_EQ(w.passed, 3u);
  EXPECT_TRUE(WalkFrom(index, 50, WalkDirection::kUp, 0).visited.empty());
  // A budget of 5 steps for both sides: the first walk passes 2 and stops, the second gets 3.
  Walk down = WalkFrom(index, 50, WalkDirection::kDown, 5, /*stop_at=*/47);
  ASSERT_EQ(down.passed, 2u);
  Walk up = WalkFrom(index, 50, WalkDirection::kUp, 5 - down.passed);
  EXPECT_EQ(up.visited, (std::vector<uint64_t>{51, 52, 53}));
}

}  // namespace
}  // namespace mmfs::fs
