#include "cache/hinted_order.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

namespace mmfs::cache {
namespace {

std::vector<uint64_t> Range(uint64_t from, uint64_t to) {
  std::vector<uint64_t> v(to - from);
  std::iota(v.begin(), v.end(), from);
  return v;
}

TEST(HintedOrderTest, StartsAWindowAheadAndFollowsTheReaders) {
  HintedOrder h(1000, 8);
  EXPECT_FALSE(h.active());
  EXPECT_TRUE(h.OnRead(5).empty());  // no order yet
  h.Begin();
  std::vector<uint64_t> order = {50, 7, 900, 3, 12, 13, 14, 15, 16, 17, 18, 19};
  // The first window is due before any read arrives.
  EXPECT_EQ(h.Append(order), std::vector<uint64_t>(order.begin(), order.begin() + 8));
  EXPECT_TRUE(h.active());
  EXPECT_EQ(h.OnRead(50), std::vector<uint64_t>({16}));   // cursor 1: window to position 9
  EXPECT_TRUE(h.OnRead(7).size() == 1);                   // 17
  // Reading ahead of the order (another worker's batch) moves the cursor to the furthest read.
  EXPECT_EQ(h.OnRead(14), std::vector<uint64_t>({18, 19}));
  EXPECT_TRUE(h.OnRead(900).empty());  // behind the cursor: nothing new
  HintCounters c = h.Counters();
  EXPECT_EQ(c.positions, order.size());
  EXPECT_EQ(c.cursor, 7u);
  EXPECT_EQ(c.issued_to, order.size());
}

TEST(HintedOrderTest, EachPositionIsIssuedOnceInOrder) {
  HintedOrder h(10000, 64);
  h.Begin();
  std::vector<uint64_t> order = Range(0, 5000);
  std::shuffle(order.begin(), order.end(), std::mt19937(1));
  std::vector<uint64_t> issued = h.Append(order);
  // Readers consume in batches split over 4 workers, a little out of order.
  for (size_t b = 0; b < order.size(); b += 64) {
    for (size_t i = b; i < std::min(order.size(), b + 64); ++i) {
      for (uint64_t k : h.OnRead(order[i])) issued.push_back(k);
    }
  }
  EXPECT_EQ(issued, order);
}

TEST(HintedOrderTest, OrdersArriveInPiecesAndANewOrderReplacesTheOld) {
  HintedOrder h(100, 4);
  h.Begin();
  EXPECT_EQ(h.Append({1, 2}), std::vector<uint64_t>({1, 2}));
  EXPECT_EQ(h.Append({3, 4, 5, 6}), std::vector<uint64_t>({3, 4}));
  EXPECT_EQ(h.Append({3, 200}), std::vector<uint64_t>());  // duplicate and out of range ignored
  EXPECT_EQ(h.Counters().positions, 6u);
  h.Begin();
  EXPECT_EQ(h.Append({9, 1}), std::vector<uint64_t>({9, 1}));
  EXPECT_TRUE(h.OnRead(5).empty());  // 5 belonged to the old order only
  EXPECT_EQ(h.Counters().off_order_reads, 1u);
  EXPECT_EQ(h.Counters().orders, 2u);
  h.CountUnknown(3);
  EXPECT_EQ(h.Counters().unknown, 3u);
}

TEST(HintedOrderTest, ReadersFasterThanPrefetchSkipWhatTheyPassed) {
  HintedOrder h(100, 2);
  h.Begin();
  EXPECT_EQ(h.Append(Range(0, 10)), std::vector<uint64_t>({0, 1}));
  EXPECT_EQ(h.OnRead(6), std::vector<uint64_t>({7, 8}));
}

TEST(HintedOrderTest, IssuesInBatchesWhileAheadOfTheReaders) {
  HintedOrder h(1000, 16, 4);
  h.Begin();
  EXPECT_EQ(h.Append(Range(0, 100)), Range(0, 16));
  EXPECT_TRUE(h.OnRead(0).empty());  // one position due: wait for a batch
  EXPECT_TRUE(h.OnRead(1).empty());
  EXPECT_TRUE(h.OnRead(2).empty());
  EXPECT_EQ(h.OnRead(3), Range(16, 20));  // four due
  // Readers that pass everything issued get what is due at once, however little.
  EXPECT_EQ(h.OnRead(19), Range(20, 36));
  EXPECT_TRUE(h.OnRead(20).empty());
  EXPECT_EQ(h.OnRead(35), Range(36, 52));
  // The end of the order goes out without waiting for a full batch.
  EXPECT_EQ(h.OnRead(85), Range(86, 100));
  EXPECT_TRUE(h.OnRead(86).empty());
}

TEST(HintedOrderTest, BatchedIssueStillCoversTheWholeOrderOnce) {
  HintedOrder h(10000, 256, 32);
  h.Begin();
  std::vector<uint64_t> order = Range(0, 5000);
  std::shuffle(order.begin(), order.end(), std::mt19937(2));
  std::vector<uint64_t> issued = h.Append(order);
  for (uint64_t k : order) {
    std::vector<uint64_t> due = h.OnRead(k);
    EXPECT_TRUE(due.empty() || due.size() >= 32 || issued.size() + due.size() == order.size());
    issued.insert(issued.end(), due.begin(), due.end());
  }
  EXPECT_EQ(issued, order);
}

}  // namespace
}  // namespace mmfs::cache
