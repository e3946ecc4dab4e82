#include "cache/read_buffer.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace mmfs::cache {
namespace {

Blob ReadBufferBlob(size_t n, char fill = 'r') { return std::make_shared<const std::string>(n, fill); }

TEST(ReadBufferTest, FindsOnlyRangesInsideAHeldSpan) {
  ReadBuffer buf(1000);
  EXPECT_FALSE(buf.Find(1, 0, 10).has_value());
  buf.Put(1, 100, ReadBufferBlob(200));  // bytes [100, 300) of file 1
  auto inside = buf.Find(1, 150, 150);
  ASSERT_TRUE(inside.has_value());
  EXPECT_EQ(inside->base, 100u);
  EXPECT_EQ(inside->blob->size(), 200u);
  EXPECT_FALSE(buf.Find(1, 50, 100).has_value()) << "starts before the span";
  EXPECT_FALSE(buf.Find(1, 250, 100).has_value()) << "ends after the span";
  EXPECT_FALSE(buf.Find(2, 150, 10).has_value()) << "another file";
  ReadBufferCounters c = buf.Counters();
  EXPECT_EQ(c.hits, 1u);
  EXPECT_EQ(c.inserts, 1u);
  EXPECT_EQ(c.bytes_held, 200u);
}

TEST(ReadBufferTest, EvictsTheLeastRecentlyUsedAndNeverExceedsTheBudget) {
  ReadBuffer buf(1000);
  buf.Put(1, 0, ReadBufferBlob(400));
  buf.Put(2, 0, ReadBufferBlob(400));
  ASSERT_TRUE(buf.Find(1, 0, 1).has_value());  // 1 is now the most recent
  buf.Put(3, 0, ReadBufferBlob(400));
  EXPECT_TRUE(buf.Find(1, 0, 1).has_value());
  EXPECT_FALSE(buf.Find(2, 0, 1).has_value());
  EXPECT_TRUE(buf.Find(3, 0, 1).has_value());
  EXPECT_LE(buf.Counters().bytes_held, 1000u);
  EXPECT_EQ(buf.Counters().evictions, 1u);
  buf.Put(4, 0, ReadBufferBlob(1001));  // larger than the budget: not held, nothing pushed out
  EXPECT_FALSE(buf.Find(4, 0, 1).has_value());
  EXPECT_EQ(buf.Counters().bytes_held, 800u);
  // Replacing a file's span keeps one span per file.
  buf.Put(1, 100, ReadBufferBlob(100));
  EXPECT_EQ(buf.Counters().bytes_held, 500u);
  EXPECT_FALSE(buf.Find(1, 0, 1).has_value());
}

TEST(ReadBufferTest, ShrinkingTheBudgetEvictsAtOnceAndReadersKeepTheirBytes) {
  ReadBuffer buf(1000);
  buf.Put(1, 0, ReadBufferBlob(300, 'a'));
  buf.Put(2, 0, ReadBufferBlob(300, 'b'));
  auto held = buf.Find(1, 0, 300);
  ASSERT_TRUE(held.has_value());
  buf.SetBudget(100);
  EXPECT_EQ(buf.budget(), 100u);
  EXPECT_EQ(buf.Counters().bytes_held, 0u);
  EXPECT_FALSE(buf.Find(2, 0, 1).has_value());
  EXPECT_EQ(*held->blob, std::string(300, 'a')) << "a reader's span outlives its eviction";
  buf.Erase(1);  // nothing held: a no-op
  buf.SetBudget(1000);
  buf.Put(3, 0, ReadBufferBlob(300));
  buf.Erase(3);
  EXPECT_FALSE(buf.Find(3, 0, 1).has_value());
}

TEST(ReadBufferTest, ConcurrentPutsAndFindsStayWithinTheBudget) {
  ReadBuffer buf(10000);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (CacheKey k = 0; k < 2000; ++k) {
        buf.Put(k * 4 + static_cast<CacheKey>(t), 0, ReadBufferBlob(100 + k % 900));
        if (auto s = buf.Find(k * 4 + static_cast<CacheKey>(t), 0, 1)) {
          EXPECT_EQ((*s->blob)[0], 'r');
        }
        if (k % 500 == 0) buf.SetBudget(k % 1000 == 0 ? 5000 : 10000);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_LE(buf.Counters().bytes_held, buf.budget());
}

}  // namespace
}  // namespace mmfs::cache
