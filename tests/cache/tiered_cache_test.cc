#include "cache/tiered_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
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

}  // namespace
}  // namespace mmfs::cache
