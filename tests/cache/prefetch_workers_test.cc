// PrefetchWorkers (cache/prefetch_workers.h): jobs run, a full queue drops the newest, Drain and
// the destructor wait for what runs.
#include "cache/prefetch_workers.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "tests/test_util.h"

namespace mmfs::cache {
namespace {

PrefetchJob Job(uint64_t key, PrefetchPattern pattern = PrefetchPattern::kSequential) {
  PrefetchJob j;
  j.keys = {key, key + 1000};
  j.pattern = pattern;
  return j;
}

// A latch the runner waits on until the test opens it.
class Gate {
 public:
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return open_; });
  }
  void Open() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

TEST(PrefetchWorkersTest, RunsEveryJobWithItsKeysAndDrainWaitsForThemAll) {
  std::mutex mu;
  std::multiset<uint64_t> seen;
  std::atomic<int> strided{0};
  PrefetchWorkers workers(3, 100, [&](const PrefetchJob& job) {
    ASSERT_EQ(job.keys.size(), 2u);
    EXPECT_EQ(job.keys[1], job.keys[0] + 1000);
    if (job.pattern == PrefetchPattern::kStrided) strided++;
    std::lock_guard<std::mutex> lock(mu);
    seen.insert(job.keys[0]);
  });
  for (uint64_t k = 0; k < 50; ++k) {
    ASSERT_TRUE(workers.Submit(Job(k, k % 2 ? PrefetchPattern::kStrided
                                            : PrefetchPattern::kSequential)));
  }
  workers.Drain();
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(seen.size(), 50u);
  for (uint64_t k = 0; k < 50; ++k) EXPECT_EQ(seen.count(k), 1u) << k;
  EXPECT_EQ(strided.load(), 25);
  EXPECT_EQ(workers.dropped(), 0u);
}

// Prefetch must never slow the readers: a full queue refuses the newest job at once.
TEST(PrefetchWorkersTest, AFullQueueDropsTheNewestJobAndCountsIt) {
  Gate gate;
  std::atomic<bool> first_started{false};
  std::mutex mu;
  std::vector<uint64_t> ran;
  PrefetchWorkers workers(1, 2, [&](const PrefetchJob& job) {
    if (job.keys[0] == 1) {
      first_started = true;
      gate.Wait();
    }
    std::lock_guard<std::mutex> lock(mu);
    ran.push_back(job.keys[0]);
  });
  ASSERT_TRUE(workers.Submit(Job(1)));
  ASSERT_TRUE(testing::WaitFor([&] { return first_started.load(); }, 10));
  // The one worker is busy: two jobs fit in the queue, the third does not.
  EXPECT_TRUE(workers.Submit(Job(2)));
  EXPECT_TRUE(workers.Submit(Job(3)));
  EXPECT_FALSE(workers.Submit(Job(4)));
  EXPECT_FALSE(workers.Submit(Job(5)));
  EXPECT_EQ(workers.dropped(), 2u);
  gate.Open();
  workers.Drain();
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(ran, (std::vector<uint64_t>{1, 2, 3}));
  // Room again once the queue has emptied.
  EXPECT_TRUE(workers.Submit(Job(6)));
}

// Stopping (unmount) drops the queued jobs but waits for the one running, which may still use
// what the owner is about to free.
TEST(PrefetchWorkersTest, DestructorDropsQueuedJobsAndWaitsForTheRunningOne) {
  Gate gate;
  std::atomic<bool> first_started{false};
  std::atomic<bool> first_finished{false};
  std::atomic<int> runs{0};
  auto workers = std::make_unique<PrefetchWorkers>(1, 10, [&](const PrefetchJob& job) {
    runs++;
    if (job.keys[0] == 1) {
      first_started = true;
      gate.Wait();
      first_finished = true;
    }
  });
  ASSERT_TRUE(workers->Submit(Job(1)));
  ASSERT_TRUE(testing::WaitFor([&] { return first_started.load(); }, 10));
  ASSERT_TRUE(workers->Submit(Job(2)));
  ASSERT_TRUE(workers->Submit(Job(3)));
  std::atomic<int> stopper_tid{0};
  bool finished_when_destroyed = false;
  std::thread stopper([&] {
    stopper_tid = testing::CurrentThreadId();
    workers.reset();
    finished_when_destroyed = first_finished.load();
  });
  // The stopper has cleared the queue and is joining the busy worker: only now let it finish.
  ASSERT_TRUE(testing::WaitFor([&] { return stopper_tid.load() != 0; }, 10));
  ASSERT_TRUE(testing::WaitUntilBlocked(stopper_tid.load(), 10));
  gate.Open();
  stopper.join();
  EXPECT_TRUE(finished_when_destroyed);
  EXPECT_EQ(runs.load(), 1);  // jobs 2 and 3 were dropped, never run
}

}  // namespace
}  // namespace mmfs::cache
