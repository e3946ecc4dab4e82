#include "fs/fuse/page_pusher.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "tests/test_util.h"

namespace mmfs::fs {
namespace {

// A push that stays in the "kernel" until the test opens the gate, as a notify_store waits for a
// page that a READ holds locked.
class Gate {
 public:
  void Pass(fuse_ino_t ino) {
    std::unique_lock<std::mutex> lock(mu_);
    ++entered_;
    cv_.notify_all();
    cv_.wait(lock, [&] { return open_; });
    pushed_.push_back(ino);
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  bool WaitEntered(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(10), [&] { return entered_ >= n; });
  }
  std::vector<fuse_ino_t> pushed() {
    std::lock_guard<std::mutex> lock(mu_);
    return pushed_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
  int entered_ = 0;
  std::vector<fuse_ino_t> pushed_;
};

TEST(PagePusherTest, QueueNeverBlocksARequestWhilePushesWaitInTheKernel) {
  Gate gate;
  PagePusher pusher([&](fuse_ino_t ino, uint64_t, bool) { gate.Pass(ino); }, 4, 1);
  for (fuse_ino_t ino = 2; ino < 12; ++ino) pusher.Queue(ino, 0);
  ASSERT_TRUE(gate.WaitEntered(1));
  EXPECT_EQ(pusher.Counters().queued, 10u);
  gate.Open();
  ASSERT_TRUE(testing::WaitFor([&] { return gate.pushed().size() == 10; }, 10));
  EXPECT_EQ(gate.pushed().front(), 2u);
}

// With one request thread, the request that would wait is the one that must answer the READ a
// push waits for: it never waits.
TEST(PagePusherTest, TheLastRequestThreadNeverWaitsForAPush) {
  Gate gate;
  PagePusher pusher([&](fuse_ino_t ino, uint64_t, bool) { gate.Pass(ino); }, 1, 1);
  EXPECT_FALSE(pusher.PushAndWait(5, 0));
  EXPECT_EQ(pusher.Counters().wait_skipped, 1u);
  EXPECT_EQ(pusher.Counters().waited, 0u);
  gate.Open();
  ASSERT_TRUE(testing::WaitFor([&] { return gate.pushed().size() == 1; }, 10));
}

// With two request threads one may wait; a second waiter at the same time would leave no thread
// for READs, so it does not wait. The waiter returns once its push has ended.
TEST(PagePusherTest, AtMostAllButOneRequestThreadWaitAndEachWaitEndsWithItsPush) {
  Gate gate;
  PagePusher pusher([&](fuse_ino_t ino, uint64_t, bool) { gate.Pass(ino); }, 2, 2);
  std::atomic<int> waiter_tid{0};
  std::atomic<bool> waited{false};
  std::thread waiter([&] {
    waiter_tid = testing::CurrentThreadId();
    waited = pusher.PushAndWait(7, 0);
  });
  ASSERT_TRUE(gate.WaitEntered(1));
  ASSERT_TRUE(testing::WaitFor([&] { return waiter_tid.load() != 0; }, 10));
  ASSERT_TRUE(testing::WaitUntilBlocked(waiter_tid.load(), 10));
  EXPECT_FALSE(pusher.PushAndWait(8, 0)) << "the second waiter would take the last thread";
  EXPECT_EQ(pusher.Counters().wait_skipped, 1u);
  gate.Open();
  waiter.join();
  // The gate held the push for longer than kMaxWait only if this machine is very slow; either
  // way the waiter came back, which is what matters.
  const PagePusherCounters c = pusher.Counters();
  EXPECT_EQ(c.waited + c.wait_expired, 1u);
  EXPECT_EQ(waited.load(), c.waited == 1);
}

TEST(PagePusherTest, AWaitForAPushStuckInTheKernelEndsAfterItsBound) {
  Gate gate;
  PagePusher pusher([&](fuse_ino_t ino, uint64_t, bool) { gate.Pass(ino); }, 16, 1);
  pusher.Queue(3, 0);
  ASSERT_TRUE(gate.WaitEntered(1));  // the only pusher is stuck
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(pusher.PushAndWait(4, 0));
  EXPECT_GE(std::chrono::steady_clock::now() - start, PagePusher::kMaxWait);
  EXPECT_EQ(pusher.Counters().wait_expired, 1u);
  gate.Open();
  // The push that was waited for still happens, after the one ahead of it.
  ASSERT_TRUE(testing::WaitFor([&] { return gate.pushed().size() == 2; }, 10));
  EXPECT_EQ(gate.pushed()[1], 4u);
}

TEST(PagePusherTest, StopDropsWhatIsQueuedAndRefusesMore) {
  Gate gate;
  PagePusher pusher([&](fuse_ino_t ino, uint64_t, bool) { gate.Pass(ino); }, 4, 1);
  pusher.Queue(2, 0);
  ASSERT_TRUE(gate.WaitEntered(1));
  pusher.Queue(3, 0);
  std::thread stopper([&] { pusher.Stop(); });
  gate.Open();
  stopper.join();
  pusher.Queue(4, 0);
  EXPECT_FALSE(pusher.PushAndWait(5, 0));
  EXPECT_LE(gate.pushed().size(), 2u);
  EXPECT_GE(pusher.Counters().dropped, 2u);
}

}  // namespace
}  // namespace mmfs::fs
