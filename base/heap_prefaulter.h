// HeapPrefaulter: populates the memory just below the malloc heap's end before the allocator
// hands it out, on a thread of its own.
//
// While the RAM tier fills, every new piece of heap is zeroed by the kernel on its first write,
// in the thread that wrote it: a daemon thread in the middle of a READ, with the reader waiting.
// Under virtualisation that first touch is slow (bench: 580 MiB took 0.4-2 s here, where
// writing it again took 0.03 s). When the heap grows in large steps (the huge-page heap's
// top_pad, tools/mmfs/huge_page_heap.h) the allocator asks the kernel for several MiB more than
// it needs at once; this thread populates that part (MADV_POPULATE_WRITE, Linux 5.14) while the
// allocator is still using what lies below it, so the READs find it ready. The advice never
// changes what memory holds (a populated page stays as it is; a new one reads as zeros, as it
// would have at its first write), so it is safe on memory the allocator owns; a range the heap
// gave back in the meantime is not populated (the kernel answers ENOMEM) until the heap grows
// over it again. The thread may fall behind a tier that fills fast: a READ then faults the
// pages itself, as it would without it.
//
// Whoever grows the heap calls Nudge() (the daemon hands the RAM tier a hook that does, at every
// insert), which costs a comparison when the heap did not grow.
//
// Ownership: the prefaulter owns its thread, stopped and joined by the destructor. The process's
// heap prefaulter (InstallForHeap) lives until the process exits.
// Thread-safety: Nudge and counters from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

namespace mmfs {

class HeapPrefaulter {
 public:
  // The end of the region kept populated (for the heap: the program break, sbrk(0)).
  using Edge = std::function<uintptr_t()>;

  struct Counters {
    uint64_t populated_bytes = 0;  // bytes the kernel populated at the thread's request
    uint64_t rounds = 0;           // rounds ended that found the region grown or shrunk
  };

  // Starts the thread. Memory below edge() now is left as it is: only later growth is
  // populated. `advise_huge_pages`: each step is advised MADV_HUGEPAGE before it is populated.
  explicit HeapPrefaulter(Edge edge, bool advise_huge_pages = false);
  // Stops the thread (between two steps of at most 2 MiB) and joins it.
  ~HeapPrefaulter();
  HeapPrefaulter(const HeapPrefaulter&) = delete;
  HeapPrefaulter& operator=(const HeapPrefaulter&) = delete;

  // Wakes the thread if the region grew past what it populated, or shrank below it.
  void Nudge();
  Counters counters() const;

  // Whether the kernel knows MADV_POPULATE_WRITE (Linux 5.14).
  static bool Supported();
  // Starts the process's prefaulter for its heap (the program break, steps advised for huge
  // pages) and returns it; later calls return the same one. Null, and nothing started, where
  // !Supported().
  static HeapPrefaulter* InstallForHeap();
  // The program break, sbrk(0).
  static uintptr_t ProgramBreak();

 private:
  void Run();
  // Brings what is populated to the edge as it is now: up (Populate) or down.
  void CatchUp();
  // Populates [from, to) in steps of at most kStep, stopping early when asked to stop, when the
  // edge came down, or when the kernel refused a step; returns how far it got.
  uintptr_t Populate(uintptr_t from, uintptr_t to);

  static constexpr uintptr_t kStep = uintptr_t{2} << 20;  // a huge page

  const Edge edge_;
  const bool advise_huge_pages_;
  std::atomic<uintptr_t> done_;  // populated up to here (only the thread writes it)
  std::atomic<uint64_t> populated_bytes_{0};
  std::atomic<uint64_t> rounds_{0};
  std::atomic<bool> nudged_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace mmfs
