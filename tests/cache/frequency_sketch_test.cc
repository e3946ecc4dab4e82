// FrequencySketch (cache/frequency_sketch.h): counts, saturation, no underestimates, ageing.
#include "cache/frequency_sketch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>

namespace mmfs::cache {
namespace {

TEST(FrequencySketchTest, WidthIsFourTimesTheKeysRoundedUpAndBounded) {
  EXPECT_EQ(FrequencySketch(1).width(), 64u);         // at least 64
  EXPECT_EQ(FrequencySketch(16).width(), 64u);
  EXPECT_EQ(FrequencySketch(100).width(), 512u);      // 400 -> 512
  EXPECT_EQ(FrequencySketch(1024).width(), 4096u);
  EXPECT_EQ(FrequencySketch(1ull << 30).width(), 1ull << 18);  // at most 2^18
}

TEST(FrequencySketchTest, CountsAKeyExactlyUntilItSaturatesAt15) {
  FrequencySketch sketch(1000);
  EXPECT_EQ(sketch.Estimate(42), 0u);
  for (uint32_t i = 1; i <= 15; ++i) {
    sketch.Increment(42);
    EXPECT_EQ(sketch.Estimate(42), i);
  }
  for (int i = 0; i < 10; ++i) sketch.Increment(42);
  EXPECT_EQ(sketch.Estimate(42), 15u);
  EXPECT_EQ(sketch.Estimate(43), 0u);  // 4 rows: a lone key collides with none in all of them
}

// A count-min sketch may overcount (collisions) but never undercounts, so a key the tier has
// seen often is never taken for a cold one.
TEST(FrequencySketchTest, NeverUnderestimatesAndTellsHotFromCold) {
  FrequencySketch sketch(500);
  std::map<uint64_t, uint32_t> truth;
  for (uint64_t k = 0; k < 500; ++k) {
    uint32_t n = static_cast<uint32_t>(k % 8);  // 0..7 increments: well below the ageing point
    for (uint32_t i = 0; i < n; ++i) sketch.Increment(k * 0x9E3779B97F4A7C15ull);
    truth[k * 0x9E3779B97F4A7C15ull] = n;
  }
  int exact = 0;
  for (const auto& [key, n] : truth) {
    uint32_t est = sketch.Estimate(key);
    EXPECT_GE(est, n) << key;
    exact += est == n;
  }
  // 2,000 counters per row for 500 keys: collisions in all four rows are rare.
  EXPECT_GE(exact, 475);
}

// After a sample period every counter is halved: old popularity fades, so a key that was hot
// long ago does not keep out new ones forever.
TEST(FrequencySketchTest, CountersHalveAfterASamplePeriod) {
  FrequencySketch sketch(16);  // width 64
  for (int i = 0; i < 15; ++i) sketch.Increment(7);
  ASSERT_EQ(sketch.Estimate(7), 15u);
  uint64_t others = 0;
  while (sketch.Estimate(7) == 15 && others < 40 * sketch.width()) {
    sketch.Increment(1000 + others);
    ++others;
  }
  // 15 >> 1: each of the key's counters is halved once.
  EXPECT_EQ(sketch.Estimate(7), 7u);
  // Not before many increments (the period is a multiple of the width), not never.
  EXPECT_GT(others, sketch.width());
  EXPECT_LT(others, 40 * sketch.width());
}

}  // namespace
}  // namespace mmfs::cache
