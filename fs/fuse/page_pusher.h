// PagePusher: stores prefetched files into the kernel's page cache on threads of its own, never
// on a request thread.
//
// A push (FUSE notify_store) waits in the kernel for every page of the file that a READ holds
// locked, and only a request thread can answer that READ. Pushed from request threads, a few
// readers could put every request thread into such a wait and hang the mount for good (readers
// in D state, SIGTERM ignored; only an abort of the connection frees it). Here the request
// threads only queue pushes; the pushers may wait on a locked page, but the READ it waits for
// always finds a request thread free.
//
// A request may still wait for a push (the ioctl Python's open() sends before its first read:
// the read then finds the pages): PushAndWait. It waits at most max_wait, and never when it
// could be the last request thread left to answer READs (request_threads - 1 waiters at most),
// so that a push waiting on a READ's page always has a thread to answer that READ.
//
// Ownership: owns its threads; `push` must stay callable until Stop returns.
// Thread-safety: Queue, PushAndWait, Stop and Counters are thread-safe.
#pragma once

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "fs/names/fs_types.h"

namespace mmfs::fs {

struct PagePusherCounters {
  uint64_t queued = 0;        // pushes taken into the queue
  uint64_t dropped = 0;       // not queued: the queue was full or the pusher stopping
  uint64_t waited = 0;        // requests that waited for their push to end
  uint64_t wait_skipped = 0;  // requests that did not wait: they could be the last free thread
  uint64_t wait_expired = 0;  // requests that stopped waiting after max_wait
};

struct PagePusherOptions {
  unsigned request_threads = 16;  // the most request threads the FUSE loop runs (max_threads)
  unsigned threads = 2;           // pushers
  // The longest a request waits for its push: long enough for a push that waits on a READ a
  // free request thread is answering, short next to a reader's patience.
  std::chrono::milliseconds max_wait{100};
  size_t max_queued = 4096;
};

class PagePusher {
 public:
  // Pushes `ino` for `stream` (the reader's thread id, 0 if unknown); `wait`: a push of the
  // same file already under way is waited for (bounded by the caller), else the file is left.
  using PushFn = std::function<void(fuse_ino_t ino, uint64_t stream, bool wait)>;

  // `counted` (may be empty) hears of each full queue and each wait's outcome.
  PagePusher(PushFn push, PagePusherOptions options,
             std::function<void(PushQueueEvent)> counted = {});
  ~PagePusher();
  PagePusher(const PagePusher&) = delete;
  PagePusher& operator=(const PagePusher&) = delete;

  // Queues a push of `ino` behind the others; never blocks.
  void Queue(fuse_ino_t ino, uint64_t stream);
  // Queues a push of `ino` ahead of the others and waits for it to end, at most max_wait and
  // only while other request threads stay free. True when the push ended before returning.
  bool PushAndWait(fuse_ino_t ino, uint64_t stream);
  // Ends the threads (what is still queued is not pushed; waiters return). Idempotent; two
  // threads may call it at once (both return once it has ended).
  void Stop();
  PagePusherCounters Counters() const;

 private:
  struct Job {
    fuse_ino_t ino = 0;
    uint64_t stream = 0;
    bool wait = false;  // the push of a waiting request: waits for another push's claim
    bool done = false;  // guarded by mu_
  };
  void Run();
  bool Add(const std::shared_ptr<Job>& job, bool front);
  void Count(PushQueueEvent e) {
    if (counted_) counted_(e);
  }

  const PushFn push_;
  const PagePusherOptions options_;
  const std::function<void(PushQueueEvent)> counted_;
  mutable std::mutex mu_;
  std::condition_variable work_;  // a job was queued, or stop
  std::condition_variable ended_;  // a job ended, or stop
  std::deque<std::shared_ptr<Job>> queue_;  // guarded by mu_
  unsigned waiters_ = 0;                    // guarded by mu_
  bool stop_ = false;                       // guarded by mu_
  PagePusherCounters counters_;             // guarded by mu_
  std::once_flag joined_;
  std::vector<std::thread> threads_;
};

}  // namespace mmfs::fs
