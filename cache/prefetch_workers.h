// PrefetchWorkers: a few threads that run prefetch jobs from a bounded queue.
//
// Jobs are opaque lists of keys handed to the runner given at construction; a full queue drops
// the newest job (prefetch is optional work and must never slow the readers).
//
// Thread-safety: Submit may be called from any thread; the runner runs on the worker threads.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "cache/prefetch_buffer.h"

namespace mmfs::cache {

struct PrefetchJob {
  std::vector<uint64_t> keys;
  PrefetchPattern pattern = PrefetchPattern::kSequential;
};

class PrefetchWorkers {
 public:
  using Runner = std::function<void(const PrefetchJob&)>;
  PrefetchWorkers(int threads, size_t max_queued, Runner runner);
  ~PrefetchWorkers();  // drops queued jobs, waits for running ones
  PrefetchWorkers(const PrefetchWorkers&) = delete;
  PrefetchWorkers& operator=(const PrefetchWorkers&) = delete;

  // False (and counted) if the queue is full.
  bool Submit(PrefetchJob job);
  // Waits until the queue is empty and no job runs (tests).
  void Drain();
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }

 private:
  void Loop();

  const size_t max_queued_;
  const Runner runner_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<PrefetchJob> queue_;  // guarded by mu_
  int running_ = 0;                // guarded by mu_
  bool stop_ = false;              // guarded by mu_
  std::atomic<uint64_t> dropped_{0};
  std::vector<std::thread> threads_;
};

}  // namespace mmfs::cache
