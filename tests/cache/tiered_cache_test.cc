#include "cache/tiered_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "cache/ram_tier.h"

namespace mmfs::cache {
namespace {

TEST(TieredCacheTest, MissLoadsOnceThenHits) {
  RamTier ram(1 << 20, 100);
  TieredCache cache({&ram});
  int loads = 0;
  auto loader = [&]() -> Result<Blob> {
    ++loads;
    return Blob(std::make_shared<const std::string>("bytes"));
  };
  EXPECT_EQ(**cache.Get(1, loader), "bytes");
  EXPECT_EQ(**cache.Get(1, loader), "bytes");
  EXPECT_EQ(loads, 1);
  OriginCounters o = cache.origin_counters();
  EXPECT_EQ(o.loads, 1u);
  EXPECT_EQ(o.bytes, 5u);
}

TEST(TieredCacheTest, ConcurrentMissesOnOneKeyLoadOnce) {
  RamTier ram(1 << 20, 100);
  TieredCache cache({&ram});
  std::atomic<int> loads{0};
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  auto loader = [&]() -> Result<Blob> {
    loads++;
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return release; });
    return Blob(std::make_shared<const std::string>("v"));
  };
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      auto r = cache.Get(42, loader);
      if (r.ok() && **r == "v") ok++;
    });
  }
  // Wait until the other seven are parked on the in-flight load (or hit afterwards).
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (cache.origin_counters().coalesced < 7 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
  for (auto& t : threads) t.join();
  EXPECT_EQ(loads.load(), 1);
  EXPECT_EQ(ok.load(), 8);
  EXPECT_EQ(cache.origin_counters().coalesced, 7u);
}

TEST(TieredCacheTest, ErrorsReachTheCallerAndAreNotCached) {
  RamTier ram(1 << 20, 100);
  TieredCache cache({&ram});
  int calls = 0;
  auto failing = [&]() -> Result<Blob> {
    ++calls;
    return Status::Corruption("bad sum");
  };
  EXPECT_EQ(cache.Get(3, failing).status().code(), StatusCode::kCorruption);
  EXPECT_EQ(cache.Get(3, failing).status().code(), StatusCode::kCorruption);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(cache.origin_counters().errors, 2u);
}

TEST(TieredCacheTest, LowerTierHitIsPromoted) {
  RamTier upper(1 << 20, 100), lower(1 << 20, 100);
  TieredCache cache({&upper, &lower});
  lower.Insert(9, std::make_shared<const std::string>("low"));
  auto r = cache.Get(9, []() -> Result<Blob> { return Status::IoError("must not load"); });
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(**r, "low");
  EXPECT_NE(upper.Lookup(9), nullptr);
}


// A thread that must not wait (a FUSE request thread) takes what the tiers hold, or a copy at
// hand, and is turned away from a key another caller is loading, however long that load takes.
TEST(TieredCacheTest, TryGetServesHitsAndNeverWaitsForALoadInFlight) {
  RamTier ram(1 << 20, 100);
  TieredCache cache({&ram});
  ram.Insert(1, std::make_shared<const std::string>("held"));
  size_t served_by = 9;
  auto hit = cache.TryGet(1, [] { return Blob(); }, &served_by);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(**hit, "held");
  EXPECT_EQ(served_by, 0u);

  std::mutex mu;
  std::condition_variable cv;
  bool release = false, loading = false;
  std::thread loader([&] {
    auto r = cache.Get(2, [&]() -> Result<Blob> {
      std::unique_lock<std::mutex> lock(mu);
      loading = true;
      cv.notify_all();
      cv.wait(lock, [&] { return release; });
      return Blob(std::make_shared<const std::string>("slow"));
    });
    EXPECT_TRUE(r.ok());
  });
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return loading; }));
  }
  bool taker_called = false;
  const auto start = std::chrono::steady_clock::now();
  auto turned_away = cache.TryGet(2, [&] {
    taker_called = true;
    return Blob(std::make_shared<const std::string>("would be a second read"));
  });
  EXPECT_FALSE(turned_away.has_value());
  EXPECT_FALSE(taker_called) << "a key in flight is not taken a second time";
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
  loader.join();
  auto landed = cache.TryGet(2, [] { return Blob(); });
  ASSERT_TRUE(landed.has_value());
  EXPECT_EQ(**landed, "slow");
}

TEST(TieredCacheTest, TryGetFillsTheTiersWithWhatItTookAndCountsOneLookupPerRead) {
  RamTier ram(1 << 20, 100);
  TieredCache cache({&ram});
  auto taken = cache.TryGet(5, [] { return Blob(std::make_shared<const std::string>("pre")); });
  ASSERT_TRUE(taken.has_value());
  EXPECT_TRUE(ram.Contains(5));
  EXPECT_EQ(cache.origin_counters().loads, 1u);

  // Nothing at hand: turned away, then read by Get told that the tiers were looked up already.
  auto none = cache.TryGet(6, [] { return Blob(); });
  EXPECT_FALSE(none.has_value());
  const uint64_t lookups = ram.Counters().lookups;
  auto loaded = cache.Get(
      6, [] { return Result<Blob>(Blob(std::make_shared<const std::string>("v"))); }, nullptr,
      /*looked_up=*/true);
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(ram.Counters().lookups, lookups) << "one READ, one lookup of each tier";
  EXPECT_EQ(ram.Counters().misses, 2u);  // 5's and 6's TryGet
}

// A Get that arrives while a TryGet's taker runs waits for it; when the taker has nothing, the
// waiter loads by itself instead of taking "nothing" for an answer.
TEST(TieredCacheTest, AGetWaitingOnATryGetThatFoundNothingLoadsItself) {
  RamTier ram(1 << 20, 100);
  TieredCache cache({&ram});
  std::mutex mu;
  std::condition_variable cv;
  bool in_taker = false, release = false;
  std::thread trying([&] {
    auto r = cache.TryGet(7, [&] {
      std::unique_lock<std::mutex> lock(mu);
      in_taker = true;
      cv.notify_all();
      cv.wait(lock, [&] { return release; });
      return Blob();
    });
    EXPECT_FALSE(r.has_value());
  });
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return in_taker; }));
  }
  std::atomic<int> loads{0};
  std::thread getting([&] {
    auto r = cache.Get(7, [&]() -> Result<Blob> {
      loads++;
      return Blob(std::make_shared<const std::string>("mine"));
    });
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(**r, "mine");
  });
  // The Get is parked on the TryGet's flight (counted as coalesced while it waits).
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (cache.origin_counters().coalesced < 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
  trying.join();
  getting.join();
  EXPECT_EQ(loads.load(), 1);
  EXPECT_EQ(cache.origin_counters().coalesced, 0u) << "not a load it waited for";
}

}  // namespace
}  // namespace mmfs::cache
