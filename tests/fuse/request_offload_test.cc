#include "fs/fuse/request_offload.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace mmfs::fs {
namespace {

TEST(RequestOffloadTest, JobsRunOnOtherThreadsAndDrainWaitsForThem) {
  RequestOffload offload(4);
  std::atomic<int> ran{0};
  std::mutex mu;
  std::set<std::thread::id> ids;
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(offload.Submit([&] {
      {
        std::lock_guard<std::mutex> lock(mu);
        ids.insert(std::this_thread::get_id());
      }
      ran.fetch_add(1);
    }));
  }
  offload.Drain();
  EXPECT_EQ(ran.load(), 100);
  EXPECT_EQ(ids.count(std::this_thread::get_id()), 0u);
  EXPECT_LE(offload.threads(), 4u);
}

// A job that blocks (a read waiting on a slow origin) does not hold back the next one: the
// reason the ring threads hand READs here.
TEST(RequestOffloadTest, ABlockedJobDoesNotHoldBackTheNext) {
  RequestOffload offload(2);
  std::mutex mu;
  std::condition_variable cv;
  bool release = false, second_ran = false;
  ASSERT_TRUE(offload.Submit([&] {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return release; });
  }));
  ASSERT_TRUE(offload.Submit([&] {
    std::lock_guard<std::mutex> lock(mu);
    second_ran = true;
    cv.notify_all();
  }));
  {
    std::unique_lock<std::mutex> lock(mu);
    EXPECT_TRUE(cv.wait_for(lock, std::chrono::seconds(30), [&] { return second_ran; }));
    release = true;
  }
  cv.notify_all();
  offload.Drain();
  EXPECT_EQ(offload.threads(), 2u);
}

TEST(RequestOffloadTest, AfterStopSubmitSaysSoAndTheCallerRunsTheJob) {
  RequestOffload offload(2);
  std::atomic<int> ran{0};
  ASSERT_TRUE(offload.Submit([&] { ran.fetch_add(1); }));
  offload.Stop();
  EXPECT_EQ(ran.load(), 1);  // Stop drains first
  EXPECT_FALSE(offload.Submit([&] { ran.fetch_add(1); }));
  EXPECT_EQ(ran.load(), 1);
  offload.Stop();  // again: nothing left to do
}

// libfuse frees a ring once its thread has ended: a thread that handed jobs on does not end
// before they have run (their replies go into that ring).
TEST(RequestOffloadTest, ARingThreadEndsOnlyAfterItsJobsHaveRun) {
  RequestOffload offload(2);
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  std::atomic<bool> job_done{false}, thread_ended{false};
  std::thread ring([&] {
    RingThreadGuard::Note(&offload);
    ASSERT_TRUE(offload.Submit([&] {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return release; });
      job_done.store(true);
    }));
  });
  // The ring thread's function has returned; its guard now waits for the job.
  std::this_thread::yield();
  EXPECT_FALSE(job_done.load());
  std::thread closer([&] {
    ring.join();
    thread_ended.store(true);
    EXPECT_TRUE(job_done.load());  // the guard waited
  });
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
  closer.join();
  EXPECT_TRUE(thread_ended.load());
  EXPECT_TRUE(job_done.load());
}

}  // namespace
}  // namespace mmfs::fs
