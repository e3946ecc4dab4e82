#include "fs/fuse/page_cache_dropper.h"

#include <utility>

namespace mmfs::fs {

PageCacheDropper::PageCacheDropper(fuse_session* session, std::function<void(bool)> counted)
    : session_(session), counted_(std::move(counted)), thread_([this] { Run(); }) {}

PageCacheDropper::~PageCacheDropper() { Stop(); }

void PageCacheDropper::Add(Due* queue, std::chrono::milliseconds delay, fuse_ino_t ino) {
  bool queued = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stop_ && queue->size() < kMaxQueued) {
      const Clock::time_point due = Clock::now() + delay;
      queue->emplace_back(due, ino);
      last_due_[ino] = due;  // the latest request decides
      queued = true;
    }
  }
  if (queued) {
    cv_.notify_one();
  } else if (counted_) {
    counted_(false);
  }
}

void PageCacheDropper::Queue(fuse_ino_t ino) { Add(&soon_, kReadDelay, ino); }

void PageCacheDropper::QueueLater(fuse_ino_t ino) { Add(&later_, kPushDelay, ino); }

void PageCacheDropper::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  // Detach (the signal thread) and Serve may both stop it: one joins, the other waits for that.
  std::call_once(joined_, [this] { thread_.join(); });
}

void PageCacheDropper::Run() {
  for (;;) {
    fuse_ino_t ino = 0;
    {
      std::unique_lock<std::mutex> lock(mu_);
      for (;;) {
        if (stop_) return;
        const Clock::time_point now = Clock::now();
        Due* due = nullptr;  // the queue whose front is due first
        for (Due* q : {&soon_, &later_}) {
          if (!q->empty() && (due == nullptr || q->front().first < due->front().first)) due = q;
        }
        if (due == nullptr) {
          cv_.wait(lock);
        } else if (due->front().first <= now) {
          const auto [when, which] = due->front();
          due->pop_front();
          // The file was queued again since: that entry drops it.
          auto last = last_due_.find(which);
          if (last == last_due_.end() || last->second != when) continue;
          last_due_.erase(last);
          ino = which;
          break;
        } else {
          cv_.wait_until(lock, due->front().first);
        }
      }
    }
    // Offset 0, length 0: every page of the file. ENOENT: the kernel forgot the inode already.
    int rc = fuse_lowlevel_notify_inval_inode(session_, ino, 0, 0);
    if (counted_) counted_(rc == 0);
  }
}

}  // namespace mmfs::fs
