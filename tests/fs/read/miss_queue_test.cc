// The miss threads (fs/read/miss_queue.h): at most `threads` jobs at once, each with its READ's
// deadline set for its origin reads; every queued job runs, also when the queue stops.
#include "fs/read/miss_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "fs/origin/read_deadline.h"
#include "tests/test_util.h"

namespace mmfs::fs {
namespace {

using namespace std::chrono_literals;

// Jobs that wait until released, counting how many run at once.
class CountingGate {
 public:
  void Pass() {
    const int now = ++inside_;
    int seen = most_.load();
    while (now > seen && !most_.compare_exchange_weak(seen, now)) {
    }
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return open_; });
    --inside_;
  }
  void Open() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  int inside() const { return inside_.load(); }
  int most() const { return most_.load(); }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
  std::atomic<int> inside_{0}, most_{0};
};

TEST(MissQueueTest, RunsAtMostItsThreadsAtOnceAndEveryJob) {
  MissQueue queue(MissQueueOptions{.threads = 3, .bound = 30s});
  CountingGate gate;
  std::atomic<int> done{0};
  for (int i = 0; i < 10; ++i) {
    queue.Submit(MissQueue::Clock::now(), [&] {
      gate.Pass();
      done++;
    });
  }
  ASSERT_TRUE(testing::WaitFor([&] { return gate.inside() == 3; }, 10));
  MissQueueCounters c = queue.Counters();
  EXPECT_EQ(c.reads, 10u);
  EXPECT_EQ(c.running, 3u);
  EXPECT_EQ(c.waiting, 7u);
  EXPECT_EQ(c.threads, 3u);
  gate.Open();
  ASSERT_TRUE(testing::WaitFor([&] { return done.load() == 10; }, 10));
  EXPECT_EQ(gate.most(), 3);
  EXPECT_EQ(queue.Counters().late, 0u);
}

TEST(MissQueueTest, AJobReadsWithItsReadsDeadlineCountedFromItsArrival) {
  MissQueue queue(MissQueueOptions{.threads = 1, .bound = 2s});
  const auto arrived = MissQueue::Clock::now() - 500ms;  // it waited half a second already
  std::atomic<bool> ran{false};
  std::optional<MissQueue::Clock::time_point> seen;
  queue.Submit(arrived, [&] {
    seen = origin::CurrentReadDeadline();
    ran = true;
  });
  ASSERT_TRUE(testing::WaitFor([&] { return ran.load(); }, 10));
  ASSERT_TRUE(seen.has_value());
  EXPECT_EQ(*seen, arrived + 2s);
  // A job that starts past its deadline is counted late (and still runs).
  queue.Submit(MissQueue::Clock::now() - 3s, [] {});
  EXPECT_TRUE(testing::WaitFor([&] { return queue.Counters().late == 1; }, 10));
  EXPECT_FALSE(origin::CurrentReadDeadline().has_value()) << "the submitting thread has none";
}

TEST(MissQueueTest, StopRunsWhatIsQueuedWithRetriesStoppedAndLaterJobsInline) {
  auto queue = std::make_unique<MissQueue>(MissQueueOptions{.threads = 1, .bound = 30s});
  CountingGate gate;
  std::atomic<int> done{0}, stopping{0};
  queue->Submit(MissQueue::Clock::now(), [&] { gate.Pass(); });
  for (int i = 0; i < 5; ++i) {
    queue->Submit(MissQueue::Clock::now(), [&] {
      if (origin::ReadsStopping()) stopping++;
      done++;
    });
  }
  ASSERT_TRUE(testing::WaitFor([&] { return gate.inside() == 1; }, 10));
  std::thread stopper([&] { queue->Stop(); });
  // Stop has taken the threads (and set the flag before): the queued jobs run after it.
  ASSERT_TRUE(testing::WaitFor([&] { return queue->Counters().threads == 0; }, 10));
  gate.Open();
  stopper.join();
  EXPECT_EQ(done.load(), 5);
  EXPECT_EQ(stopping.load(), 5) << "their origin reads retry no more";
  const auto caller = std::this_thread::get_id();
  std::thread::id ran_on;
  queue->Submit(MissQueue::Clock::now(), [&] { ran_on = std::this_thread::get_id(); });
  EXPECT_EQ(ran_on, caller);
  queue.reset();
}

}  // namespace
}  // namespace mmfs::fs
