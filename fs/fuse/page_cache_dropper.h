// PageCacheDropper: drops a file's pages from the kernel's page cache of the mount once the RAM
// tier holds the file, so that a hot byte is held once under a shared memory limit
// (docs/cache.md "Where each byte lives").
//
// With no_open the kernel keeps every page a READ returned (keep_cache). For a file the RAM tier
// holds that is a second copy of the same bytes, charged to the same memory cgroup: under a
// shared limit it pushes out page cache that held files the tier does not have. After each READ
// of such a file the FUSE layer queues its inode here, and a delay later a thread of its own
// calls fuse_lowlevel_notify_inval_inode (never a request thread: the kernel waits there for
// pages still locked by READs in flight, which only request threads answer). The delay matters:
// dropping the pages while the reader is still copying them makes the kernel find them gone and
// READ them again, and dropping again at once made a storm of READs (1,024 READs for 4 files,
// measured). So a file is dropped once, and the latest request decides when: kReadDelay after
// the READ that reaches the end (Queue), kPushDelay after any other READ (QueueLater: its reader
// may still be reading the pages around it; such a READ may also be the only one the daemon
// sees, when the kernel evicted part of the file and kept the rest, and that rest must go too).
// The next read of the file comes back to the daemon and is served from the tier: a READ round
// trip (and a GETATTR, since the kernel forgets the attributes too) instead of holding the bytes
// twice. Files the tier does not hold keep their pages: the kernel's LRU keeps what fits. A
// file pushed into the page cache (prefetcher.h) that the tier keeps goes kPushDelay later
// (QueueLater): its reader, which opens it as it is pushed, has read it by then.
//
// Ownership: borrows the session, which must outlive the dropper (Stop first).
// Thread-safety: Queue and Stop are thread-safe; `counted` is called from any thread.
#pragma once

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>

namespace mmfs::fs {

class PageCacheDropper {
 public:
  // `counted(true)` after each drop, `counted(false)` for a request not queued (the queue was
  // full) or a drop that failed (the kernel forgot the inode).
  PageCacheDropper(fuse_session* session, std::function<void(bool)> counted);
  ~PageCacheDropper();
  PageCacheDropper(const PageCacheDropper&) = delete;
  PageCacheDropper& operator=(const PageCacheDropper&) = delete;

  // Drops `ino`'s pages kReadDelay (Queue) or kPushDelay (QueueLater) from now, unless it is
  // queued again before then (the latest call decides); never blocks.
  void Queue(fuse_ino_t ino);
  void QueueLater(fuse_ino_t ino);
  // Ends the thread (what is still queued is dropped unprocessed); called before the session
  // goes away. Idempotent; two threads may call it at once (both return once it has ended).
  void Stop();

  // Per queue (16 bytes an entry): a reader going through files in path order pushes about 10,000
  // a second, all of them due 2 s later; at 4,096 most drops were skipped.
  static constexpr size_t kMaxQueued = 1 << 16;
  static constexpr std::chrono::milliseconds kReadDelay{200};
  static constexpr std::chrono::milliseconds kPushDelay{2000};

 private:
  void Run();

  fuse_session* const session_;
  const std::function<void(bool)> counted_;
  std::mutex mu_;
  std::condition_variable cv_;
  using Clock = std::chrono::steady_clock;
  using Due = std::deque<std::pair<Clock::time_point, fuse_ino_t>>;
  // Each in due order (one delay per queue); both guarded by mu_.
  void Add(Due* queue, std::chrono::milliseconds delay, fuse_ino_t ino);
  Due soon_;           // after READs
  Due later_;          // after pushes
  // Each queued inode's due time from its latest call: only the entry with it drops; the others
  // are skipped when they come due (guarded by mu_; as many entries as the queues at most).
  std::unordered_map<fuse_ino_t, Clock::time_point> last_due_;
  bool stop_ = false;  // guarded by mu_
  std::once_flag joined_;
  std::thread thread_;
};

}  // namespace mmfs::fs
