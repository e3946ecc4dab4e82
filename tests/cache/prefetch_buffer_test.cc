#include "cache/prefetch_buffer.h"

#include <gtest/gtest.h>

namespace mmfs::cache {
namespace {

Blob B(size_t n) { return std::make_shared<const std::string>(n, 'p'); }

TEST(PrefetchBufferTest, TakeCountsUsedAndRemoves) {
  PrefetchBuffer buf(1000);
  buf.Put(1, B(100));
  EXPECT_TRUE(buf.Contains(1));
  ASSERT_NE(buf.Take(1), nullptr);
  EXPECT_EQ(buf.Take(1), nullptr);  // taken once
  PrefetchCounters c = buf.Counters();
  EXPECT_EQ(c.issued, 1u);
  EXPECT_EQ(c.used, 1u);
  EXPECT_EQ(c.wasted, 0u);
  EXPECT_EQ(c.bytes_held, 0u);
}

TEST(PrefetchBufferTest, OldestUnusedArePushedOutAsWasted) {
  PrefetchBuffer buf(1000);
  for (CacheKey k = 0; k < 10; ++k) buf.Put(k, B(300));
  PrefetchCounters c = buf.Counters();
  EXPECT_LE(c.bytes_held, 1000u);
  EXPECT_EQ(c.issued, 10u);
  EXPECT_EQ(c.wasted, 7u);
  EXPECT_EQ(buf.Take(0), nullptr);
  EXPECT_NE(buf.Take(9), nullptr);
  buf.Put(99, B(5000));  // larger than the budget: ignored
  EXPECT_FALSE(buf.Contains(99));
}

}  // namespace
}  // namespace mmfs::cache
