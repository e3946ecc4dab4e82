#include "cache/prefetch_buffer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "tests/test_util.h"

namespace mmfs::cache {
namespace {

Blob PrefetchBlob(size_t n) { return std::make_shared<const std::string>(n, 'p'); }
constexpr auto kMembers = PrefetchPattern::kSampleMembers;

TEST(PrefetchBufferTest, TakeCountsUsedAndRemoves) {
  PrefetchBuffer buf(1000);
  buf.Put(1, PrefetchBlob(100), kMembers);
  EXPECT_TRUE(buf.Contains(1));
  ASSERT_NE(buf.Take(1), nullptr);
  EXPECT_EQ(buf.Take(1), nullptr);  // taken once
  PrefetchCounters c = buf.Counters(kMembers);
  EXPECT_EQ(c.issued, 1u);
  EXPECT_EQ(c.used, 1u);
  EXPECT_EQ(c.wasted, 0u);
  EXPECT_EQ(buf.bytes_held(), 0u);
}

TEST(PrefetchBufferTest, OldestUnusedArePushedOutAsWasted) {
  PrefetchBuffer buf(1000);
  for (CacheKey k = 0; k < 10; ++k) buf.Put(k, PrefetchBlob(300), PrefetchPattern::kSequential);
  PrefetchCounters c = buf.Counters(PrefetchPattern::kSequential);
  EXPECT_LE(buf.bytes_held(), 1000u);
  EXPECT_EQ(c.issued, 10u);
  EXPECT_EQ(c.wasted, 7u);
  EXPECT_EQ(buf.Take(0), nullptr);
  EXPECT_NE(buf.Take(9), nullptr);
  buf.Put(99, PrefetchBlob(5000), kMembers);  // larger than the budget: ignored
  EXPECT_FALSE(buf.Contains(99));
  EXPECT_EQ(buf.Counters(kMembers).issued, 0u);
}

TEST(PrefetchBufferTest, ReaderWaitsForALoadInFlightAndCountsLate) {
  PrefetchBuffer buf(1 << 20);
  auto fresh = buf.BeginLoad({5, 6});
  EXPECT_EQ(fresh.size(), 2u);
  EXPECT_TRUE(buf.BeginLoad({5}).empty());  // already loading
  Blob got;
  std::atomic<int> reader_tid{0};
  std::atomic<bool> load_ended{false};
  bool returned_after_the_load = false;
  std::thread reader([&] {
    reader_tid = testing::CurrentThreadId();
    got = buf.Take(5);
    returned_after_the_load = load_ended.load();
  });
  // The reader is inside Take, asleep on the load in flight: only now finish the load.
  ASSERT_TRUE(testing::WaitFor([&] { return reader_tid.load() != 0; }, 10));
  ASSERT_TRUE(testing::WaitUntilBlocked(reader_tid.load(), 10));
  buf.Put(5, PrefetchBlob(10), PrefetchPattern::kStrided);
  load_ended = true;
  buf.EndLoad({5, 6});
  reader.join();
  EXPECT_TRUE(returned_after_the_load);  // it waited for the load instead of missing
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(*got, std::string(10, 'p'));
  PrefetchCounters c = buf.Counters(PrefetchPattern::kStrided);
  EXPECT_EQ(c.used, 1u);
  EXPECT_EQ(c.late, 1u);
  // A reader that comes after the load is not late.
  buf.BeginLoad({7});
  buf.Put(7, PrefetchBlob(10), PrefetchPattern::kStrided);
  buf.EndLoad({7});
  EXPECT_NE(buf.Take(7), nullptr);
  EXPECT_EQ(buf.Counters(PrefetchPattern::kStrided).late, 1u);
  EXPECT_EQ(buf.Take(6), nullptr);  // the load gave up on 6: no wait, no blob
}

TEST(PrefetchBufferTest, OnePushClaimsABlobAtATimeAndCountsNothing) {
  PrefetchBuffer buf(1 << 20);
  buf.Put(1, PrefetchBlob(10), PrefetchPattern::kHint);
  buf.Put(2, PrefetchBlob(10), PrefetchPattern::kHint);
  EXPECT_EQ(buf.Claim(3, false), nullptr);  // not held
  Blob first = buf.Claim(1, false);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(buf.Claim(1, false), nullptr);  // claimed by the first push
  EXPECT_TRUE(buf.Contains(1));             // still there for a reader
  buf.ReleaseClaim(1);                      // that push failed: the next may try
  EXPECT_EQ(buf.Claim(1, false), first);
  // A waiting claim ends when the holder takes the blob (its push worked): nothing left to do.
  Blob waited = PrefetchBlob(1);
  std::thread second([&] { waited = buf.Claim(1, true); });
  EXPECT_EQ(buf.Take(1), first);
  second.join();
  EXPECT_EQ(waited, nullptr);
  // ... or gets the blob when the holder releases it.
  ASSERT_NE(buf.Claim(2, false), nullptr);
  std::thread third([&] { waited = buf.Claim(2, true); });
  buf.ReleaseClaim(2);
  third.join();
  EXPECT_NE(waited, nullptr);
  PrefetchCounters c = buf.Counters(PrefetchPattern::kHint);
  EXPECT_EQ(c.used, 1u);  // only the Take
  EXPECT_EQ(c.late, 0u);
  EXPECT_EQ(c.wasted, 0u);
}

TEST(PrefetchBufferTest, ShrinkingTheBudgetPushesTheOldestOut) {
  PrefetchBuffer buf(1000);
  for (CacheKey k = 1; k <= 5; ++k) buf.Put(k, PrefetchBlob(200), kMembers);
  buf.SetBudget(450);
  EXPECT_EQ(buf.budget(), 450u);
  EXPECT_LE(buf.bytes_held(), 450u);
  EXPECT_FALSE(buf.Contains(1));
  EXPECT_TRUE(buf.Contains(5));
  EXPECT_EQ(buf.Counters(kMembers).wasted, 3u);
  buf.Put(6, PrefetchBlob(500), kMembers);  // larger than the budget now: not held
  EXPECT_FALSE(buf.Contains(6));
}


TEST(PrefetchBufferTest, TakeHeldTakesALandedBlobAndNeverWaitsForOneLoading) {
  PrefetchBuffer buf(1000);
  buf.Put(1, PrefetchBlob(10), kMembers);
  bool loading = true;
  ASSERT_NE(buf.TakeHeld(1, &loading), nullptr);
  EXPECT_FALSE(loading);
  EXPECT_EQ(buf.Counters(kMembers).used, 1u);

  ASSERT_EQ(buf.BeginLoad({2}).size(), 1u);
  EXPECT_EQ(buf.TakeHeld(2, &loading), nullptr);  // would wait: not here
  EXPECT_TRUE(loading);
  buf.Put(2, PrefetchBlob(10), kMembers);
  buf.EndLoad({2});
  EXPECT_NE(buf.TakeHeld(2, &loading), nullptr);
  EXPECT_EQ(buf.TakeHeld(3, &loading), nullptr);
  EXPECT_FALSE(loading);
}

}  // namespace
}  // namespace mmfs::cache
