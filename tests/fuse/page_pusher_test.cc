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

PagePusherOptions Options(unsigned request_threads, unsigned threads,
                          std::chrono::milliseconds max_wait = std::chrono::seconds(60)) {
  PagePusherOptions o;
  o.request_threads = request_threads;
  o.threads = threads;
  o.max_wait = max_wait;
  return o;
}

TEST(PagePusherTest, QueueNeverBlocksARequestWhilePushesWaitInTheKernel) {
  Gate gate;
  PagePusher pusher([&](fuse_ino_t ino, uint64_t, bool) { gate.Pass(ino); }, Options(4, 1));
  for (fuse_ino_t ino = 2; ino < 12; ++ino) pusher.Queue(ino, 0);
  ASSERT_TRUE(gate.WaitEntered(1));
  EXPECT_EQ(pusher.Counters().queued, 10u);
  gate.Open();
  ASSERT_TRUE(testing::WaitFor([&] { return gate.pushed().size() == 10; }, 10));
  EXPECT_EQ(gate.pushed().front(), 2u);
}

TEST(PagePusherTest, AFullQueueDropsAndSaysSo) {
  Gate gate;
  PagePusherOptions o = Options(4, 1);
  o.max_queued = 2;
  std::atomic<int> full{0};
  PagePusher pusher([&](fuse_ino_t ino, uint64_t, bool) { gate.Pass(ino); }, o,
                    [&](PushQueueEvent e) { full += e == PushQueueEvent::kQueueFull; });
  pusher.Queue(2, 0);
  ASSERT_TRUE(gate.WaitEntered(1));  // 2 is out of the queue, in the "kernel"
  pusher.Queue(3, 0);
  pusher.Queue(4, 0);
  pusher.Queue(5, 0);  // the queue holds 3 and 4
  EXPECT_EQ(full.load(), 1);
  EXPECT_EQ(pusher.Counters().dropped, 1u);
  gate.Open();
  ASSERT_TRUE(testing::WaitFor([&] { return gate.pushed().size() == 3; }, 10));
  EXPECT_EQ(gate.pushed(), (std::vector<fuse_ino_t>{2, 3, 4}));
}

// With one request thread, the request that would wait is the one that must answer the READ a
// push waits for: it never waits.
TEST(PagePusherTest, TheLastRequestThreadNeverWaitsForAPush) {
  Gate gate;
  std::atomic<int> skipped_events{0};
  PagePusher pusher([&](fuse_ino_t ino, uint64_t, bool) { gate.Pass(ino); }, Options(1, 1),
                    [&](PushQueueEvent e) { skipped_events += e == PushQueueEvent::kWaitSkipped; });
  EXPECT_FALSE(pusher.PushAndWait(5, 0));
  EXPECT_EQ(pusher.Counters().wait_skipped, 1u);
  EXPECT_EQ(skipped_events.load(), 1) << "the stats hear of it too";
  EXPECT_EQ(pusher.Counters().waited, 0u);
  gate.Open();
  ASSERT_TRUE(testing::WaitFor([&] { return gate.pushed().size() == 1; }, 10));
}

// With two request threads one may wait; a second waiter at the same time would leave no thread
// for READs, so it does not wait. The waiter returns once its push has ended.
TEST(PagePusherTest, AtMostAllButOneRequestThreadWaitAndEachWaitEndsWithItsPush) {
  Gate gate;
  PagePusher pusher([&](fuse_ino_t ino, uint64_t, bool) { gate.Pass(ino); }, Options(2, 2));
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
  EXPECT_FALSE(waited.load());
  gate.Open();
  waiter.join();
  EXPECT_TRUE(waited.load());
  EXPECT_EQ(pusher.Counters().waited, 1u);
  EXPECT_EQ(pusher.Counters().wait_expired, 0u);
}

TEST(PagePusherTest, AWaitForAPushStuckInTheKernelEndsAfterItsBound) {
  Gate gate;
  const auto bound = std::chrono::milliseconds(50);
  PagePusher pusher([&](fuse_ino_t ino, uint64_t, bool) { gate.Pass(ino); },
                    Options(16, 1, bound));
  pusher.Queue(3, 0);
  ASSERT_TRUE(gate.WaitEntered(1));  // the only pusher is stuck
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(pusher.PushAndWait(4, 0));
  EXPECT_GE(std::chrono::steady_clock::now() - start, bound);
  EXPECT_EQ(pusher.Counters().wait_expired, 1u);
  gate.Open();
  // The push that was waited for still happens, after the one ahead of it.
  ASSERT_TRUE(testing::WaitFor([&] { return gate.pushed().size() == 2; }, 10));
  EXPECT_EQ(gate.pushed()[1], 4u);
}

TEST(PagePusherTest, StopDropsWhatIsQueuedAndRefusesMore) {
  Gate gate;
  PagePusher pusher([&](fuse_ino_t ino, uint64_t, bool) { gate.Pass(ino); }, Options(4, 1));
  pusher.Queue(2, 0);
  ASSERT_TRUE(gate.WaitEntered(1));
  pusher.Queue(3, 0);  // queued behind the push stuck in the "kernel"
  std::thread stopper([&] { pusher.Stop(); });
  // Stop has taken effect once the pusher refuses new work; only then does the stuck push end.
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        pusher.Queue(9, 0);
        return pusher.Counters().dropped > 0;
      },
      10));
  gate.Open();
  stopper.join();
  EXPECT_FALSE(pusher.PushAndWait(5, 0));
  EXPECT_EQ(gate.pushed(), (std::vector<fuse_ino_t>{2})) << "3 was dropped, not pushed";
}

}  // namespace
}  // namespace mmfs::fs
