#include "fs/read/origin_cost_model.h"

#include <gtest/gtest.h>

#include <limits>
#include <random>

namespace mmfs::fs {
namespace {

constexpr double kMB = 1e6;

// Reads of sizes spread over [16 KiB, 2 MiB], each costing latency + bytes / bandwidth, with
// `noise` (a fraction, uniform +-) on each time.
void Feed(OriginCostModel& m, int reads, double latency, double bandwidth, double noise = 0,
          uint32_t seed = 1) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<uint64_t> size(16 << 10, 2 << 20);
  std::uniform_real_distribution<double> jitter(1 - noise, 1 + noise);
  for (int i = 0; i < reads; ++i) {
    const uint64_t bytes = size(rng);
    m.Observe(bytes, (latency + static_cast<double>(bytes) / bandwidth) * jitter(rng));
  }
}

TEST(OriginCostModelTest, AHardDiskIsFiveMillisecondsAndTwoHundredMegabytes) {
  OriginCostModel m;
  Feed(m, 400, 0.005, 200 * kMB);
  OriginCostEstimate e = m.Estimate();
  ASSERT_TRUE(e.known);
  EXPECT_NEAR(e.latency_seconds, 0.005, 1e-6);
  EXPECT_NEAR(e.bandwidth_bytes_per_second, 200 * kMB, 1e3);
  // 200 MB/s x 5 ms = 1,000,000 bytes, rounded down to 64 KiB: 15 x 64 KiB.
  EXPECT_EQ(e.extent_bytes, 15u * (64 << 10));
  EXPECT_EQ(e.reads, 400u);
}

TEST(OriginCostModelTest, ExtentsAreClampedToTheBounds) {
  OriginCostModel local;  // a fast local origin: 50 us, 2 GB/s -> 100 KB, the minimum's range
  Feed(local, 200, 50e-6, 2000 * kMB);
  EXPECT_TRUE(local.Estimate().known);
  EXPECT_EQ(local.Estimate().extent_bytes, 64u << 10);
  OriginCostModel store;  // an object store: 20 ms, 400 MB/s -> 8 MB, under the 8 MiB maximum
  Feed(store, 200, 0.020, 400 * kMB);
  EXPECT_EQ(store.Estimate().extent_bytes, 122u * (64 << 10));
  OriginCostModel far;  // 100 ms, 1 GB/s -> 100 MB: the maximum
  Feed(far, 200, 0.100, 1000 * kMB);
  EXPECT_EQ(far.Estimate().extent_bytes, 8u << 20);
}

TEST(OriginCostModelTest, NoisyTimesStillGiveTheOrderOfMagnitude) {
  OriginCostModel m;
  Feed(m, 2000, 0.005, 200 * kMB, /*noise=*/0.3, 7);
  OriginCostEstimate e = m.Estimate();
  ASSERT_TRUE(e.known);
  EXPECT_NEAR(e.latency_seconds, 0.005, 0.0015);
  EXPECT_NEAR(e.bandwidth_bytes_per_second, 200 * kMB, 60 * kMB);
  EXPECT_GE(e.extent_bytes, 512u << 10);
  EXPECT_LE(e.extent_bytes, 2u << 20);
}

TEST(OriginCostModelTest, UnknownUntilEnoughVariedReads) {
  OriginCostModel m;
  EXPECT_FALSE(m.Estimate().known);
  EXPECT_EQ(m.Estimate().extent_bytes, 64u << 10);
  // Same-sized reads cannot tell latency from bandwidth.
  for (int i = 0; i < 500; ++i) m.Observe(100 << 10, 0.006);
  EXPECT_FALSE(m.Estimate().known);
  EXPECT_EQ(m.Estimate().reads, 500u);
  // Nor can a handful of varied ones.
  OriginCostModel few;
  Feed(few, 5, 0.005, 200 * kMB);
  EXPECT_FALSE(few.Estimate().known);
  // Times that fall as reads grow are no origin: not known either; nor a negative or NaN time.
  OriginCostModel odd;
  for (int i = 0; i < 100; ++i) odd.Observe((i % 10 + 1) * (128 << 10), 0.01 / (i % 10 + 1));
  odd.Observe(1 << 20, -1);
  odd.Observe(1 << 20, std::numeric_limits<double>::quiet_NaN());
  EXPECT_FALSE(odd.Estimate().known);
  EXPECT_EQ(odd.Estimate().reads, 100u);
}

TEST(OriginCostModelTest, FollowsAnOriginThatChanges) {
  OriginCostModel m({/*half_life=*/64});
  Feed(m, 1000, 0.0001, 1000 * kMB);  // fast at first
  EXPECT_LT(m.Estimate().latency_seconds, 0.001);
  Feed(m, 1000, 0.010, 100 * kMB, 0, 2);  // then throttled: the old reads have faded
  OriginCostEstimate e = m.Estimate();
  EXPECT_NEAR(e.latency_seconds, 0.010, 0.0005);
  EXPECT_NEAR(e.bandwidth_bytes_per_second, 100 * kMB, 5 * kMB);
}

TEST(OriginCostModelTest, AnOriginThatCostsTheSameForEverySizeIsLatencyBoundUntilReadsGrow) {
  // An IOPS throttle (300 requests/s, 200 MB/s): a read costs max(1/300 s, bytes / bandwidth),
  // flat for every size below about 660 KB.
  auto cost = [](uint64_t bytes) {
    return std::max(1.0 / 300, static_cast<double>(bytes) / (200 * kMB));
  };
  OriginCostModel m;
  for (int i = 0; i < 200; ++i) {
    const uint64_t bytes = (16 + (i % 10) * 40) << 10;  // 16 to 376 KiB
    m.Observe(bytes, cost(bytes));
  }
  OriginCostEstimate e = m.Estimate();
  ASSERT_TRUE(e.known);
  EXPECT_TRUE(e.latency_bound);
  EXPECT_NEAR(e.latency_seconds, 1.0 / 300, 1e-6);
  // Twice the largest read, aligned down: 752 KiB -> 704 KiB.
  EXPECT_EQ(e.extent_bytes, 11u * (64 << 10));
  // Reads of the sizes it asks for: doubling until the transfer shows, then the fit's, which
  // settles as the large reads make the slope plain.
  for (int round = 0; round < 12; ++round) {
    const uint64_t extent = m.Estimate().extent_bytes;
    for (int i = 0; i < 100; ++i) {
      const uint64_t bytes = i % 2 == 0 ? extent : (16 + (i % 10) * 40) << 10;
      m.Observe(bytes, cost(bytes));
    }
  }
  e = m.Estimate();
  ASSERT_TRUE(e.known);
  EXPECT_FALSE(e.latency_bound);
  EXPECT_GE(e.extent_bytes, 256u << 10);
  EXPECT_LE(e.extent_bytes, 2u << 20);
}

TEST(OriginCostModelTest, ExpensiveRequestsWithTimesTooNoisyForASlopeAreLatencyBound) {
  // A throttle that answers in bursts: most reads at once, one in ten after 100 ms; the mean,
  // 10 ms a read, is the cost. Same-sized reads and a handful of larger ones show no slope.
  OriginCostModel m;
  std::mt19937 rng(5);
  for (int i = 0; i < 400; ++i) {
    const uint64_t bytes = i % 16 == 0 ? 256 << 10 : (8 + i % 5) << 10;
    m.Observe(bytes, rng() % 10 == 0 ? 0.1 : 0.0001);
  }
  OriginCostEstimate e = m.Estimate();
  ASSERT_TRUE(e.known);
  EXPECT_TRUE(e.latency_bound);
  EXPECT_GT(e.latency_seconds, 0.005);
  // Twice the largest read seen (its weight decayed since: 448 KiB to 512 KiB).
  EXPECT_GE(e.extent_bytes, 448u << 10);
  EXPECT_LE(e.extent_bytes, 512u << 10);
  // The same noise at 0.1 ms a request on average is no evidence of anything: not known.
  OriginCostModel fast;
  for (int i = 0; i < 400; ++i) {
    const uint64_t bytes = i % 16 == 0 ? 256 << 10 : (8 + i % 5) << 10;
    fast.Observe(bytes, rng() % 10 == 0 ? 0.001 : 0.000001);
  }
  EXPECT_FALSE(fast.Estimate().known);
}

}  // namespace
}  // namespace mmfs::fs
