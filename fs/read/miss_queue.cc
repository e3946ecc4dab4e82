#include "fs/read/miss_queue.h"

#include <system_error>
#include <utility>

#include "fs/origin/read_deadline.h"

namespace mmfs::fs {

MissQueue::MissQueue(MissQueueOptions options) : options_(options) {}

MissQueue::~MissQueue() { Stop(); }

void MissQueue::Submit(Clock::time_point arrived, Job job) {
  reads_.fetch_add(1, std::memory_order_relaxed);
  Queued q{arrived, std::move(job)};
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stopping_) {
      queue_.push_back(std::move(q));
      // More jobs waiting than threads waiting for one (a woken thread counts as waiting until
      // it has taken its job): another thread, while there may be more.
      if (queue_.size() > idle_ && threads_.size() < options_.threads) {
        try {
          threads_.emplace_back([this] { Work(); });
        } catch (const std::system_error&) {
          // No thread to be had: the threads there are take the job in turn.
        }
      }
      if (!threads_.empty()) {
        wake_.notify_one();
        return;
      }
      q = std::move(queue_.back());
      queue_.pop_back();
    }
  }
  Run(q);  // stopping, or not one thread could be started: served here rather than dropped
}

void MissQueue::Run(Queued& q) {
  const Clock::time_point deadline = q.arrived + options_.bound;
  if (Clock::now() > deadline) late_.fetch_add(1, std::memory_order_relaxed);
  running_.fetch_add(1, std::memory_order_relaxed);
  origin::ScopedReadDeadline scope(deadline, &stop_);
  q.job();  // jobs do not throw (Filesystem::FinishLater's turns an exception into an error)
  running_.fetch_sub(1, std::memory_order_relaxed);
}

void MissQueue::Work() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    ++idle_;
    wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    --idle_;
    if (queue_.empty()) return;  // stopping, and nothing left to answer
    Queued q = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    Run(q);
    q.job = nullptr;  // what the job holds goes before the lock is taken again
    lock.lock();
  }
}

void MissQueue::Stop() {
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_.store(true, std::memory_order_relaxed);
    stopping_ = true;
    threads.swap(threads_);
  }
  wake_.notify_all();
  for (std::thread& t : threads) t.join();
}

MissQueueCounters MissQueue::Counters() const {
  MissQueueCounters c;
  c.reads = reads_.load(std::memory_order_relaxed);
  c.late = late_.load(std::memory_order_relaxed);
  c.running = running_.load(std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(mu_);
  c.waiting = queue_.size();
  c.threads = threads_.size();
  return c;
}

}  // namespace mmfs::fs
