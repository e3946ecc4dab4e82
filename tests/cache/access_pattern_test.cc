#include "cache/access_pattern.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

namespace mmfs::cache {
namespace {

// Feeds `positions` to one stream and returns every position predicted.
std::set<int64_t> Predicted(AccessPatternDetector& d, uint64_t stream,
                            const std::vector<int64_t>& positions) {
  std::set<int64_t> out;
  for (int64_t p : positions) {
    for (int64_t q : d.OnRead(stream, p)) {
      EXPECT_TRUE(out.insert(q).second) << "predicted twice: " << q;
    }
  }
  return out;
}

TEST(AccessPatternTest, SequentialRunPredictsAheadWithAGrowingWindow) {
  AccessPatternDetector d;
  EXPECT_TRUE(d.OnRead(1, 100).empty());
  EXPECT_TRUE(d.OnRead(1, 101).empty());  // one step is not a run yet
  auto first = d.OnRead(1, 102);
  EXPECT_EQ(first, (std::vector<int64_t>{103, 104, 105, 106}));
  auto second = d.OnRead(1, 103);  // on the run: the window doubles, nothing predicted twice
  EXPECT_EQ(second.front(), 107);
  EXPECT_EQ(second.back(), 103 + 8);
  std::vector<int64_t> seq;
  for (int64_t p = 0; p < 1000; ++p) seq.push_back(p);
  AccessPatternDetector d2;
  auto all = Predicted(d2, 7, seq);
  // Everything from the third read on was predicted before it was read.
  for (int64_t p = 3; p < 1000; ++p) EXPECT_TRUE(all.count(p)) << p;
  EXPECT_EQ(d2.runs_detected(), 1u);
}

TEST(AccessPatternTest, PredictionsComeInLargeBatches) {
  // A prefetch of one sample per read costs the origin as many requests as no prefetch at all;
  // in steady state each batch must cover about half the maximum window.
  AccessPatternDetector d;
  int batches = 0;
  size_t predicted = 0;
  for (int64_t p = 0; p < 10000; ++p) {
    auto out = d.OnRead(3, p);
    if (out.empty()) continue;
    ++batches;
    predicted += out.size();
  }
  EXPECT_GT(predicted, 9900u);
  EXPECT_LT(batches, 10000 / 60 + 10) << "batches too small";
}

TEST(AccessPatternTest, RepeatedReadsOfOneSampleDoNotBreakARun) {
  AccessPatternDetector d;
  std::vector<int64_t> seq = {10, 10, 11, 11, 11, 12, 12, 13};
  auto all = Predicted(d, 1, seq);
  EXPECT_TRUE(all.count(13));
  EXPECT_TRUE(all.count(14));
}

class StridedTest : public ::testing::TestWithParam<int> {};

TEST_P(StridedTest, WorkersTakingEveryKthSampleAreRecognised) {
  // k DataLoader-style workers; worker w reads w, w+k, w+2k, ... as its own stream.
  const int k = GetParam();
  AccessPatternDetector d;
  std::vector<std::set<int64_t>> predicted(static_cast<size_t>(k));
  for (int64_t step = 0; step < 200; ++step) {
    for (int w = 0; w < k; ++w) {
      for (int64_t q : d.OnRead(static_cast<uint64_t>(1000 + w), w + step * k)) {
        predicted[static_cast<size_t>(w)].insert(q);
      }
    }
  }
  for (int w = 0; w < k; ++w) {
    for (int64_t step = 3; step < 200; ++step) {
      EXPECT_TRUE(predicted[static_cast<size_t>(w)].count(w + step * k)) << "k=" << k;
    }
    // Nothing off the worker's own stride.
    for (int64_t q : predicted[static_cast<size_t>(w)]) EXPECT_EQ((q - w) % k, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Workers, StridedTest, ::testing::Values(2, 3, 4, 8));

TEST(AccessPatternTest, ShuffledAccessPredictsAlmostNothing) {
  std::vector<int64_t> order(20000);
  for (int64_t i = 0; i < 20000; ++i) order[static_cast<size_t>(i)] = i;
  std::shuffle(order.begin(), order.end(), std::mt19937_64(5));
  AccessPatternDetector d;
  auto all = Predicted(d, 3, order);
  EXPECT_LT(all.size(), 50u);  // chance runs only
}

TEST(AccessPatternTest, AJumpCollapsesTheWindow) {
  AccessPatternDetector d;
  for (int64_t p = 0; p < 50; ++p) d.OnRead(1, p);
  EXPECT_TRUE(d.OnRead(1, 5000).empty());
  EXPECT_TRUE(d.OnRead(1, 5001).empty());
  auto restart = d.OnRead(1, 5002);
  EXPECT_EQ(restart.size(), 4u);  // back to the initial window
}

TEST(AccessPatternTest, StreamsAreIndependentAndBounded) {
  ReadaheadConfig c;
  c.max_streams = 4;
  AccessPatternDetector d(c);
  for (uint64_t s = 0; s < 100; ++s) d.OnRead(s, static_cast<int64_t>(s) * 1000);
  // An interleaved second stream does not break the first one's run.
  AccessPatternDetector e;
  std::set<int64_t> a;
  for (int64_t p = 0; p < 20; ++p) {
    for (int64_t q : e.OnRead(1, p)) a.insert(q);
    e.OnRead(2, 900 - p * 7);
  }
  EXPECT_TRUE(a.count(19));
}

}  // namespace
}  // namespace mmfs::cache
