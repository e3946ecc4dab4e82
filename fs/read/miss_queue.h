// MissQueue: the READs that must wait on the origin, served on threads of their own, so that the
// FUSE request threads stay free for the READs the cache answers at once.
//
// Over /dev/fuse a request thread tries each READ without waiting (FileReader::TryRead); one that
// needs the origin, or a load another caller has in flight, is handed here and its reply is sent
// from a miss thread. However many readers wait on a store that fails or crawls, a file the RAM
// or SSD tier holds is served in the time a hit takes, and the store sees at most `threads`
// demand requests at once (bounded per origin; the rest wait here, in arrival order).
//
// Each job runs with its READ's deadline (its arrival plus `bound`) set for the origin reads it
// makes (fs/origin/read_deadline.h): a READ that waited here for its turn has only what is left
// of its bound to retry in, so a failing read fails within about the bound however long the
// queue (one short try past it).
//
// Threads are started on demand, up to `threads`, and kept (idle ones cost a stack).
//
// Thread-safety: all methods are thread-safe. Jobs run with no lock held. Stop (and the
// destructor) runs every job still queued, with the stop flag set so their origin reads retry no
// more, then joins the threads: each job answers a request, so none is dropped.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace mmfs::fs {

struct MissQueueOptions {
  unsigned threads = 16;                    // at most this many jobs run at once
  std::chrono::milliseconds bound{30000};   // a READ's deadline: its arrival plus this
};

struct MissQueueCounters {
  uint64_t reads = 0;    // READs handed to the miss threads
  uint64_t late = 0;     // of them, started past their deadline (the queue was long)
  uint64_t waiting = 0;  // queued now, not started
  uint64_t running = 0;  // being served now
  uint64_t threads = 0;  // miss threads running (0 once stopped)
};

class MissQueue {
 public:
  using Clock = std::chrono::steady_clock;
  using Job = std::function<void()>;

  explicit MissQueue(MissQueueOptions options);
  ~MissQueue();
  MissQueue(const MissQueue&) = delete;
  MissQueue& operator=(const MissQueue&) = delete;

  // Runs `job` on a miss thread, with the deadline `arrived` + bound for its origin reads. After
  // Stop the job runs at once on the caller's thread (with the stop flag set). `job` must not
  // throw.
  void Submit(Clock::time_point arrived, Job job);
  // Sets the stop flag, runs what is queued, joins the threads. Idempotent.
  void Stop();
  MissQueueCounters Counters() const;

 private:
  struct Queued {
    Clock::time_point arrived;
    Job job;
  };
  void Work();
  // Runs one job with its deadline.
  void Run(Queued& q);

  const MissQueueOptions options_;
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::deque<Queued> queue_;          // guarded by mu_
  std::vector<std::thread> threads_;  // guarded by mu_
  unsigned idle_ = 0;                 // threads waiting for a job; guarded by mu_
  bool stopping_ = false;             // guarded by mu_
  std::atomic<uint64_t> reads_{0}, late_{0}, running_{0};
};

}  // namespace mmfs::fs
