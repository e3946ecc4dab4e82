#include "cache/ram_tier.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace mmfs::cache {
namespace {

Blob MakeBlob(size_t size, char fill = 'x') { return std::make_shared<const std::string>(size, fill); }

TEST(RamTierTest, HitAfterInsertAndCounters) {
  RamTier tier(16 << 20, 1000);
  EXPECT_EQ(tier.Lookup(1), nullptr);
  tier.Insert(1, MakeBlob(100, 'a'));
  Blob b = tier.Lookup(1);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(*b, std::string(100, 'a'));
  TierCounters c = tier.Counters();
  EXPECT_EQ(c.lookups, 2u);
  EXPECT_EQ(c.hits, 1u);
  EXPECT_EQ(c.misses, 1u);
  EXPECT_EQ(c.entries, 1u);
  EXPECT_GE(c.bytes_used, 100u);
}

// The daemon's heap prefaulter is nudged through this hook: once per blob the tier took, not for
// a key it holds already or a blob it refused.
TEST(RamTierTest, TheGrowthHookIsCalledForEachBlobTaken) {
  int calls = 0;
  RamTier tier(16 << 20, 1000, [&] { ++calls; });
  tier.Insert(1, MakeBlob(100));
  tier.Insert(2, MakeBlob(100));
  EXPECT_EQ(calls, 2);
  tier.Insert(1, MakeBlob(100));  // held already
  tier.Insert(3, MakeBlob(size_t{32} << 20));  // larger than a shard: refused
  EXPECT_EQ(calls, 2);
  RamTier quiet(16 << 20, 1000);  // no hook: inserts as before
  quiet.Insert(1, MakeBlob(100));
  EXPECT_NE(quiet.Lookup(1), nullptr);
}

TEST(RamTierTest, NeverExceedsBudget) {
  const uint64_t budget = 1 << 20;
  RamTier tier(budget, 2000);
  for (CacheKey k = 0; k < 2000; ++k) {
    if (tier.Lookup(k) == nullptr) tier.Insert(k, MakeBlob(1000));
    ASSERT_LE(tier.Counters().bytes_used, budget);
  }
  TierCounters c = tier.Counters();
  EXPECT_GT(c.entries, 500u);  // the budget is actually used
  EXPECT_GT(c.rejected, 0u);   // newcomers no more popular than residents stay out
}

TEST(RamTierTest, PopularNewcomersDisplaceResidents) {
  RamTier tier(1 << 20, 4000);
  for (CacheKey k = 0; k < 2000; ++k) {
    if (tier.Lookup(k) == nullptr) tier.Insert(k, MakeBlob(1000));
  }
  // Keys 5000..5099 are asked for three times each: they must get in.
  for (int round = 0; round < 3; ++round) {
    for (CacheKey k = 5000; k < 5100; ++k) {
      if (tier.Lookup(k) == nullptr) tier.Insert(k, MakeBlob(1000));
    }
  }
  int resident = 0;
  for (CacheKey k = 5000; k < 5100; ++k) resident += tier.Lookup(k) != nullptr;
  EXPECT_GE(resident, 95);
  EXPECT_GT(tier.Counters().evictions, 0u);
}

TEST(RamTierTest, RejectsBlobsLargerThanAShard) {
  RamTier tier(1 << 20, 100);
  tier.Insert(7, MakeBlob(1 << 20));
  EXPECT_EQ(tier.Lookup(7), nullptr);
  EXPECT_EQ(tier.Counters().rejected, 1u);
}

TEST(RamTierTest, VisitedEntriesSurviveEviction) {
  // SIEVE: an entry looked up since it was inserted is spared once by the hand.
  RamTier tier(16 * 16 * 1100, 200);  // ~16 entries of 1000 bytes per shard
  std::vector<CacheKey> hot;
  for (CacheKey k = 0; k < 64; ++k) {
    tier.Insert(k, MakeBlob(1000));
    hot.push_back(k);
  }
  for (CacheKey k : hot) ASSERT_NE(tier.Lookup(k), nullptr);
  for (CacheKey k = 1000; k < 1000 + 64; ++k) {
    if (tier.Lookup(k) == nullptr) tier.Insert(k, MakeBlob(1000));
  }
  int hot_left = 0;
  for (CacheKey k : hot) hot_left += tier.Lookup(k) != nullptr;
  EXPECT_GE(hot_left, 48);  // most of the hot set stayed although 64 cold blobs came in
}

TEST(RamTierTest, ConcurrentUse) {
  RamTier tier(4 << 20, 3000);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&tier, t] {
      for (CacheKey k = 0; k < 5000; ++k) {
        CacheKey key = (k * 31 + static_cast<CacheKey>(t)) % 3000;
        if (Blob b = tier.Lookup(key)) {
          ASSERT_EQ(b->size(), 500 + key % 100);
        } else {
          tier.Insert(key, MakeBlob(500 + key % 100));
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_LE(tier.Counters().bytes_used, 4u << 20);
}

TEST(RamTierTest, ShrinkingTheBudgetEvictsAtOnceAndBoundsAdmission) {
  RamTier tier(16 << 20, 1000);
  EXPECT_EQ(tier.MaxEntryBytes(), (16u << 20) / RamTier::kShards - RamTier::kEntryOverhead);
  for (CacheKey k = 0; k < 200; ++k) tier.Insert(k, MakeBlob(50000));
  EXPECT_GT(tier.Counters().bytes_used, 8u << 20);
  tier.SetBudget(2 << 20);
  TierCounters c = tier.Counters();
  EXPECT_LE(c.bytes_used, 2u << 20);
  EXPECT_EQ(c.bytes_budget, 2u << 20);
  EXPECT_GT(c.evictions, 0u);
  EXPECT_EQ(tier.MaxEntryBytes(), (2u << 20) / RamTier::kShards - RamTier::kEntryOverhead);
  // What is still counted as resident is still served.
  int resident = 0;
  for (CacheKey k = 0; k < 200; ++k) {
    if (!tier.Contains(k)) continue;
    ++resident;
    EXPECT_NE(tier.Lookup(k), nullptr);
  }
  EXPECT_EQ(static_cast<uint64_t>(resident), c.entries);
  // Grown back, it admits again.
  tier.SetBudget(16 << 20);
  tier.Insert(1000, MakeBlob(50000));
  EXPECT_TRUE(tier.Contains(1000));
}

}  // namespace
}  // namespace mmfs::cache
