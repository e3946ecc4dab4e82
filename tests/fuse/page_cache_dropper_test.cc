// The dropper's schedule: a file queued several times is dropped once, when its latest request
// says. With no session every drop fails (EINVAL) but is still counted, which is what the test
// watches: when each one happened.
#include "fs/fuse/page_cache_dropper.h"

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <vector>

#include "tests/test_util.h"

namespace mmfs::fs {
namespace {

using Clock = std::chrono::steady_clock;

TEST(PageCacheDropperTest, AFileQueuedAgainIsDroppedOnceWhenItsLatestRequestSays) {
  std::mutex mu;
  std::vector<Clock::duration> drops;  // when each drop happened, from the start
  const Clock::time_point start = Clock::now();
  PageCacheDropper dropper(nullptr, [&](bool) {
    std::lock_guard<std::mutex> lock(mu);
    drops.push_back(Clock::now() - start);
  });
  dropper.Queue(7);  // READs of one file: three drops asked for, one done
  dropper.Queue(7);
  dropper.Queue(7);
  dropper.QueueLater(8);  // a later READ reaching the end brings its drop forward
  dropper.Queue(8);
  dropper.QueueLater(9);  // due after 8's first entry: once 9 is dropped, 8's was passed over
  // The soon drops come kReadDelay after the start, 9's kPushDelay after it; halfway tells them
  // apart with a margin of most of a second either way.
  const auto halfway = (PageCacheDropper::kReadDelay + PageCacheDropper::kPushDelay) / 2;
  auto late = [&] {
    std::lock_guard<std::mutex> lock(mu);
    size_t n = 0;
    for (auto d : drops) n += d >= halfway;
    return n;
  };
  ASSERT_TRUE(testing::WaitFor([&] { return late() > 0; }, 30)) << "9 was never dropped";
  dropper.Stop();
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(drops.size(), 3u) << "7 and 8 once each, then 9";
  EXPECT_LT(drops[0], halfway);
  EXPECT_LT(drops[1], halfway) << "8's drop must follow its latest request, the soon one";
  EXPECT_GE(drops[2], halfway);
}

}  // namespace
}  // namespace mmfs::fs
