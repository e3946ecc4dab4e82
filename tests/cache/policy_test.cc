// Trace-driven tests of the eviction/admission policy: epoch-style random permutations, where LRU
// thrashes, and skewed (Zipf) access.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <list>
#include <random>
#include <unordered_map>

#include "cache/ram_tier.h"
#include "cache/sieve_policy.h"

namespace mmfs::cache {
namespace {

constexpr uint64_t kItems = 20000;
constexpr uint64_t kItemBytes = 1000;

// Hit ratio of steady-state epochs (after two warm-up epochs) for a RamTier holding `fraction`
// of a dataset read in a fresh random order each epoch.
double EpochHitRatio(double fraction, int epochs = 6) {
  uint64_t budget = static_cast<uint64_t>(fraction * kItems * (kItemBytes + RamTier::kEntryOverhead));
  RamTier tier(budget, kItems);
  std::vector<CacheKey> order(kItems);
  for (CacheKey k = 0; k < kItems; ++k) order[k] = k;
  std::mt19937_64 rng(42);
  auto blob = std::make_shared<const std::string>(kItemBytes, 'x');
  uint64_t hits = 0, lookups = 0;
  for (int e = 0; e < epochs; ++e) {
    std::shuffle(order.begin(), order.end(), rng);
    for (CacheKey k : order) {
      bool hit = tier.Lookup(k) != nullptr;
      if (!hit) tier.Insert(k, blob);
      if (e >= 2) {
        hits += hit;
        ++lookups;
      }
    }
  }
  return static_cast<double>(hits) / static_cast<double>(lookups);
}

// A plain LRU of `capacity` equal-size items, the baseline the policy is compared with.
class Lru {
 public:
  explicit Lru(size_t capacity) : capacity_(capacity) {}
  // Returns true on a hit; inserts on a miss.
  bool Access(uint64_t key) {
    auto it = where_.find(key);
    bool hit = it != where_.end();
    if (hit) {
      order_.erase(it->second);
    } else if (order_.size() >= capacity_) {
      where_.erase(order_.back());
      order_.pop_back();
    }
    order_.push_front(key);
    where_[key] = order_.begin();
    return hit;
  }

 private:
  size_t capacity_;
  std::list<uint64_t> order_;
  std::unordered_map<uint64_t, std::list<uint64_t>::iterator> where_;
};

// The same trace through a plain LRU of the same size, for comparison.
double LruEpochHitRatio(double fraction, int epochs = 6) {
  Lru lru(static_cast<size_t>(fraction * kItems));
  std::vector<uint64_t> order(kItems);
  for (uint64_t k = 0; k < kItems; ++k) order[k] = k;
  std::mt19937_64 rng(42);
  uint64_t hits = 0, lookups = 0;
  for (int e = 0; e < epochs; ++e) {
    std::shuffle(order.begin(), order.end(), rng);
    for (uint64_t k : order) {
      bool hit = lru.Access(k);
      if (e >= 2) {
        hits += hit;
        ++lookups;
      }
    }
  }
  return static_cast<double>(hits) / static_cast<double>(lookups);
}

class EpochPolicyTest : public ::testing::TestWithParam<double> {};

TEST_P(EpochPolicyTest, SteadyEpochsReachTheOptimum) {
  double fraction = GetParam();
  double ratio = EpochHitRatio(fraction);
  double lru = LruEpochHitRatio(fraction);
  // Without knowing the order, no policy can beat cache size / dataset size on average.
  EXPECT_GE(ratio, 0.95 * fraction) << "LRU on the same trace: " << lru;
  EXPECT_LE(ratio, fraction + 0.02);
  EXPECT_GT(ratio, lru) << "should beat LRU on epoch traces";
  RecordProperty("hit_ratio", std::to_string(ratio));
  RecordProperty("lru_hit_ratio", std::to_string(lru));
}

INSTANTIATE_TEST_SUITE_P(CacheFractions, EpochPolicyTest, ::testing::Values(0.25, 0.5, 0.8));

TEST(ZipfPolicyTest, SkewedAccessKeepsThePopularKeys) {
  // Zipf(1.0) over 20,000 keys, cache at 10% of them.
  const uint64_t n = kItems;
  std::vector<double> cdf(n);
  double sum = 0;
  for (uint64_t i = 0; i < n; ++i) {
    sum += 1.0 / static_cast<double>(i + 1);
    cdf[i] = sum;
  }
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0, sum);
  const double fraction = 0.1;
  RamTier tier(static_cast<uint64_t>(fraction * n * (kItemBytes + RamTier::kEntryOverhead)), n);
  auto blob = std::make_shared<const std::string>(kItemBytes, 'z');
  Lru lru(static_cast<size_t>(fraction * n));
  uint64_t hits = 0, lru_hits = 0, lookups = 0;
  for (int i = 0; i < 400000; ++i) {
    auto key = static_cast<uint64_t>(std::lower_bound(cdf.begin(), cdf.end(), u(rng)) - cdf.begin());
    // Scramble so popularity is not correlated with key order.
    CacheKey k = (key * 0x9E3779B97F4A7C15ull) % (1ull << 40);
    bool hit = tier.Lookup(k) != nullptr;
    if (!hit) tier.Insert(k, blob);
    bool lru_hit = lru.Access(k);
    if (i >= 100000) {
      hits += hit;
      lru_hits += lru_hit;
      ++lookups;
    }
  }
  double ratio = static_cast<double>(hits) / static_cast<double>(lookups);
  double lru_ratio = static_cast<double>(lru_hits) / static_cast<double>(lookups);
  EXPECT_GE(ratio, lru_ratio) << "TinyLFU+SIEVE should match or beat LRU on Zipf";
  EXPECT_GT(ratio, 0.5);
  RecordProperty("hit_ratio", std::to_string(ratio));
  RecordProperty("lru_hit_ratio", std::to_string(lru_ratio));
}

TEST(SievePolicyTest, RestoreAndRemoveKeepAccounting) {
  SievePolicy p(1000, 100);
  EXPECT_TRUE(p.Restore(1, 400));
  EXPECT_TRUE(p.Restore(2, 400));
  EXPECT_FALSE(p.Restore(3, 400));
  EXPECT_EQ(p.bytes_used(), 800u);
  p.Remove(1);
  EXPECT_EQ(p.bytes_used(), 400u);
  EXPECT_FALSE(p.Contains(1));
  std::vector<uint64_t> evicted;
  EXPECT_TRUE(p.Admit(4, 500, &evicted));  // fits without evicting
  EXPECT_TRUE(evicted.empty());
  EXPECT_FALSE(p.Admit(5, 2000, &evicted));  // larger than the budget
}

}  // namespace
}  // namespace mmfs::cache
