#include "fs/fuse/request_offload.h"

#include <algorithm>
#include <utility>

namespace mmfs::fs {

RequestOffload::RequestOffload(unsigned max_threads) : max_threads_(std::max(1u, max_threads)) {}

RequestOffload::~RequestOffload() { Stop(); }

bool RequestOffload::Submit(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return false;
    queue_.push_back(std::move(job));
    ++pending_;
    // A new thread only when every thread is busy: a burst of cold reads gets parallelism up
    // to max_threads, a trickle keeps one or two threads.
    if (waiting_ < queue_.size() && threads_.size() < max_threads_) {
      threads_.emplace_back([this] { Run(); });
    }
  }
  work_.notify_one();
  return true;
}

void RequestOffload::Drain() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_.wait(lock, [&] { return pending_ == 0; });
}

void RequestOffload::Stop() {
  std::vector<std::thread> threads;
  {
    std::unique_lock<std::mutex> lock(mu_);
    idle_.wait(lock, [&] { return pending_ == 0; });
    stop_ = true;
    threads.swap(threads_);
  }
  work_.notify_all();
  for (std::thread& t : threads) t.join();
}

unsigned RequestOffload::threads() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<unsigned>(threads_.size());
}

void RequestOffload::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    ++waiting_;
    work_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    --waiting_;
    if (queue_.empty()) return;  // stopping, and nothing left
    std::function<void()> job = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    job();
    job = nullptr;  // what it captured goes before the job counts as done
    lock.lock();
    if (--pending_ == 0) idle_.notify_all();
  }
}

namespace {
thread_local RingThreadGuard t_ring_guard;
}  // namespace

void RingThreadGuard::Note(RequestOffload* offload) { t_ring_guard.offload_ = offload; }

RingThreadGuard::~RingThreadGuard() {
  if (offload_ != nullptr) offload_->Drain();
}

}  // namespace mmfs::fs
