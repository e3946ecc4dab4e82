#include "base/heap_prefaulter.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; glibc 2.36's headers are the first to name it
#endif

namespace mmfs {

std::atomic<HeapPrefaulter*> HeapPrefaulter::heap_{nullptr};

HeapPrefaulter::HeapPrefaulter(Edge edge) : edge_(std::move(edge)), done_(edge_()) {
  thread_ = std::thread([this] { Run(); });
  ::pthread_setname_np(thread_.native_handle(), "mmfs-prefault");
}

HeapPrefaulter::~HeapPrefaulter() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_one();
  thread_.join();
}

void HeapPrefaulter::Nudge() {
  if (edge_() == done_.load(std::memory_order_relaxed)) return;
  if (unsupported_.load(std::memory_order_relaxed)) return;
  // One wake-up per growth: later nudges before the thread runs find the flag set.
  if (nudged_.exchange(true, std::memory_order_acq_rel)) return;
  {
    std::lock_guard<std::mutex> lock(mu_);  // the thread is waiting or will see the flag
  }
  cv_.notify_one();
}

HeapPrefaulter::Counters HeapPrefaulter::counters() const {
  Counters c;
  c.populated_bytes = populated_bytes_.load(std::memory_order_relaxed);
  c.rounds = rounds_.load(std::memory_order_relaxed);
  c.unsupported = unsupported_.load(std::memory_order_relaxed);
  return c;
}

void HeapPrefaulter::Run() {
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || nudged_.load(std::memory_order_acquire); });
      if (stop_) return;
    }
    nudged_.store(false, std::memory_order_release);
    const uintptr_t edge = edge_();
    const uintptr_t done = done_.load(std::memory_order_relaxed);
    if (edge == done) continue;
    rounds_.fetch_add(1, std::memory_order_relaxed);
    if (edge < done) {  // the region shrank (the allocator gave memory back)
      done_.store(edge, std::memory_order_relaxed);
      continue;
    }
    if (!Populate(done, edge)) {
      unsupported_.store(true, std::memory_order_relaxed);
      return;
    }
    done_.store(edge, std::memory_order_relaxed);
  }
}

bool HeapPrefaulter::Populate(uintptr_t from, uintptr_t to) {
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  from &= ~(page - 1);
  while (from < to) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_) return true;
    }
    const uintptr_t end = std::min(to, (from + kStep) & ~(kStep - 1));
    if (::madvise(reinterpret_cast<void*>(from), end - from, MADV_POPULATE_WRITE) != 0) {
      if (errno == EINVAL) return false;  // a kernel without the advice
      // ENOMEM: part of the range is no longer mapped (the heap shrank), or memory is short;
      // EFAULT/EHWPOISON: not populated. The allocator's own first touch deals with it.
      return true;
    }
    populated_bytes_.fetch_add(end - from, std::memory_order_relaxed);
    from = end;
  }
  return true;
}

void HeapPrefaulter::InstallForHeap() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Never destroyed: its thread ends with the process.
    heap_.store(new HeapPrefaulter(&HeapPrefaulter::ProgramBreak), std::memory_order_release);
  });
}

uintptr_t HeapPrefaulter::ProgramBreak() { return reinterpret_cast<uintptr_t>(::sbrk(0)); }

}  // namespace mmfs
