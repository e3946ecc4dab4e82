#include "fs/fuse/page_pusher.h"

#include <algorithm>
#include <utility>

namespace mmfs::fs {

PagePusher::PagePusher(PushFn push, PagePusherOptions options,
                       std::function<void(PushQueueEvent)> counted)
    : push_(std::move(push)), options_(options), counted_(std::move(counted)) {
  for (unsigned i = 0; i < std::max(1u, options_.threads); ++i) {
    threads_.emplace_back([this] { Run(); });
  }
}

PagePusher::~PagePusher() { Stop(); }

bool PagePusher::Add(const std::shared_ptr<Job>& job, bool front) {
  // Called with mu_ held.
  if (stop_ || queue_.size() >= options_.max_queued) {
    counters_.dropped++;
    if (!stop_) Count(PushQueueEvent::kQueueFull);
    return false;
  }
  if (front) {
    queue_.push_front(job);
  } else {
    queue_.push_back(job);
  }
  counters_.queued++;
  return true;
}

void PagePusher::Queue(fuse_ino_t ino, uint64_t stream) {
  auto job = std::make_shared<Job>();
  job->ino = ino;
  job->stream = stream;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!Add(job, /*front=*/false)) return;
  }
  work_.notify_one();
}

bool PagePusher::PushAndWait(fuse_ino_t ino, uint64_t stream) {
  auto job = std::make_shared<Job>();
  job->ino = ino;
  job->stream = stream;
  job->wait = true;
  std::unique_lock<std::mutex> lock(mu_);
  // Waiting is allowed while at least one other request thread is not waiting here: it answers
  // the READ a push may be waiting on. With one request thread nobody waits.
  const bool may_wait = waiters_ + 1 < options_.request_threads;
  if (!Add(job, /*front=*/may_wait)) return false;
  work_.notify_one();
  if (!may_wait) {
    counters_.wait_skipped++;
    Count(PushQueueEvent::kWaitSkipped);
    return false;
  }
  ++waiters_;
  const bool ended =
      ended_.wait_for(lock, options_.max_wait, [&] { return job->done || stop_; });
  --waiters_;
  if (ended && job->done) {
    counters_.waited++;
    Count(PushQueueEvent::kWaited);
    return true;
  }
  if (!ended) {
    counters_.wait_expired++;
    Count(PushQueueEvent::kWaitExpired);
  }
  return false;
}

void PagePusher::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    queue_.clear();
  }
  work_.notify_all();
  ended_.notify_all();
  // The server's Detach (signal thread) and Serve may both stop it: one joins, the other waits.
  std::call_once(joined_, [this] {
    for (std::thread& t : threads_) t.join();
  });
}

PagePusherCounters PagePusher::Counters() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counters_;
}

void PagePusher::Run() {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    push_(job->ino, job->stream, job->wait);
    {
      std::lock_guard<std::mutex> lock(mu_);
      job->done = true;
    }
    ended_.notify_all();
  }
}

}  // namespace mmfs::fs
