// ReadDeadline: the time by which the origin reads a thread makes must be answered, and whether
// they should stop early (the daemon is going away).
//
// A READ that needs the origin is served on a miss thread (fs/read/miss_queue.h), which sets the
// READ's deadline for the time it serves it: the READ's arrival plus the mount's bound on a
// failing read. A remote origin (http_origin.h) retries only while it lasts and gives each try
// no more than what is left of it (a try past it gets a short floor), so a READ fails within
// about its bound whether it waited in the queue first or its load took several requests. Threads that set none (the prefetcher, warm-up, the tools) get each
// request's own retry budget, as does work that many READs share (ScopedNoReadDeadline: the
// check of a file too large to load whole, which no one READ's bound could hold).
//
// Thread-safety: the deadline is the calling thread's own (thread-local); a ScopedReadDeadline
// must be destroyed on the thread that made it. The stop flag it points at may be set from any
// thread.
#pragma once

#include <atomic>
#include <chrono>
#include <optional>

namespace mmfs::origin {

class ScopedReadDeadline {
 public:
  // Until destroyed, origin reads on this thread end by `deadline`, and retry no more once
  // `*stop` (if given; it must outlive this) is true. Nests: the earlier deadline holds.
  explicit ScopedReadDeadline(std::chrono::steady_clock::time_point deadline,
                              const std::atomic<bool>* stop = nullptr);
  ~ScopedReadDeadline();
  ScopedReadDeadline(const ScopedReadDeadline&) = delete;
  ScopedReadDeadline& operator=(const ScopedReadDeadline&) = delete;

 private:
  struct Saved {
    std::optional<std::chrono::steady_clock::time_point> deadline;
    const std::atomic<bool>* stop = nullptr;
  };
  Saved saved_;
};

// Until destroyed, origin reads on this thread have no READ deadline (each request its own
// budget); the stop flag stays.
class ScopedNoReadDeadline {
 public:
  ScopedNoReadDeadline();
  ~ScopedNoReadDeadline();
  ScopedNoReadDeadline(const ScopedNoReadDeadline&) = delete;
  ScopedNoReadDeadline& operator=(const ScopedNoReadDeadline&) = delete;

 private:
  std::optional<std::chrono::steady_clock::time_point> saved_;
};

// Until destroyed, origin reads on this thread retry no more once `*stop` is true (work of the
// daemon's own that has no READ waiting, stopped with the daemon); the deadline stays.
class ScopedReadStop {
 public:
  explicit ScopedReadStop(const std::atomic<bool>* stop);
  ~ScopedReadStop();
  ScopedReadStop(const ScopedReadStop&) = delete;
  ScopedReadStop& operator=(const ScopedReadStop&) = delete;

 private:
  const std::atomic<bool>* saved_;
};

// This thread's deadline for origin reads, if one is set.
std::optional<std::chrono::steady_clock::time_point> CurrentReadDeadline();
// Whether this thread's reads were asked to stop retrying.
bool ReadsStopping();

}  // namespace mmfs::origin
