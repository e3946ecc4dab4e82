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

HeapPrefaulter::HeapPrefaulter(Edge edge, bool advise_huge_pages)
    : edge_(std::move(edge)), advise_huge_pages_(advise_huge_pages), done_(edge_()) {
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

bool HeapPrefaulter::Supported() {
  // The kernel checks the advice, then the alignment, then returns early for an empty range.
  static char probe;
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  void* aligned = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(&probe) & ~(page - 1));
  return ::madvise(aligned, 0, MADV_POPULATE_WRITE) == 0;
}

void HeapPrefaulter::Nudge() {
  if (edge_() == done_.load(std::memory_order_relaxed)) return;
  // One wake-up per growth: later nudges before the thread runs find the flag set.
  if (nudged_.exchange(true, std::memory_order_acq_rel)) return;
  {
    std::lock_guard<std::mutex> lock(mu_);  // the thread is waiting or will see the flag
  }
  cv_.notify_one();
}

HeapPrefaulter::Counters HeapPrefaulter::counters() const {
  Counters c;
  c.rounds = rounds_.load(std::memory_order_acquire);
  c.populated_bytes = populated_bytes_.load(std::memory_order_relaxed);
  return c;
}

void HeapPrefaulter::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || nudged_.load(std::memory_order_acquire); });
    if (stop_) return;
    lock.unlock();
    // Cleared before the edge is read (a read-modify-write, so not reordered after that read):
    // a nudge for a growth this round misses sets it again.
    nudged_.exchange(false, std::memory_order_acq_rel);
    CatchUp();
    lock.lock();
  }
}

void HeapPrefaulter::CatchUp() {
  const uintptr_t edge = edge_();
  const uintptr_t done = done_.load(std::memory_order_relaxed);
  if (edge == done) return;
  // A region that shrank (the allocator gave memory back) is followed down, so that growing
  // again populates from there.
  done_.store(edge < done ? edge : Populate(done, edge), std::memory_order_relaxed);
  // Counted when the round ends (release: a reader that sees it sees the round's bytes).
  rounds_.fetch_add(1, std::memory_order_release);
}

uintptr_t HeapPrefaulter::Populate(uintptr_t from, uintptr_t to) {
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  from &= ~(page - 1);
  while (from < to) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_) return from;
    }
    to = std::min(to, edge_());  // the region may have shrunk meanwhile
    if (from >= to) return to;
    const uintptr_t end = std::min(to, (from + kStep) & ~(kStep - 1));
    void* addr = reinterpret_cast<void*>(from);
    // The allocator advises each growth itself, but only after moving the edge: a nudge in
    // between would populate that step with small pages.
    if (advise_huge_pages_) ::madvise(addr, end - from, MADV_HUGEPAGE);
    if (::madvise(addr, end - from, MADV_POPULATE_WRITE) != 0) {
      // ENOMEM: part of the range is no longer mapped (the heap shrank), or memory is short;
      // EINVAL: a mapping the advice does not apply to; EFAULT, EHWPOISON. Not populated: the
      // allocator's own first touch does it, as it would without this thread.
      return from;
    }
    populated_bytes_.fetch_add(end - from, std::memory_order_relaxed);
    from = end;
  }
  return from;
}

HeapPrefaulter* HeapPrefaulter::InstallForHeap() {
  if (!Supported()) return nullptr;
  // Never destroyed: its thread ends with the process.
  static HeapPrefaulter* const heap = new HeapPrefaulter(&HeapPrefaulter::ProgramBreak, true);
  return heap;
}

uintptr_t HeapPrefaulter::ProgramBreak() { return reinterpret_cast<uintptr_t>(::sbrk(0)); }

}  // namespace mmfs
