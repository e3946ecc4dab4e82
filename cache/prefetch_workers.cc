#include "cache/prefetch_workers.h"

namespace mmfs::cache {

PrefetchWorkers::PrefetchWorkers(int threads, size_t max_queued, Runner runner)
    : max_queued_(max_queued), runner_(std::move(runner)) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Loop(); });
}

PrefetchWorkers::~PrefetchWorkers() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    queue_.clear();
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

bool PrefetchWorkers::Submit(PrefetchJob job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_ || queue_.size() >= max_queued_) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    queue_.push_back(std::move(job));
  }
  cv_.notify_all();
  return true;
}

void PrefetchWorkers::Drain() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return queue_.empty() && running_ == 0; });
}

void PrefetchWorkers::Loop() {
  for (;;) {
    PrefetchJob job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
      ++running_;
    }
    runner_(job);
    {
      std::lock_guard<std::mutex> lock(mu_);
      --running_;
    }
    cv_.notify_all();
  }
}

}  // namespace mmfs::cache
