// RequestOffload: runs request handlers that may block (a READ that may go to the origin) on
// threads of its own, for requests that came over io_uring.
//
// Over io_uring a request is handled on the ring thread of the CPU it was sent from, and that
// thread serves every later request from that CPU only once the handler returns: a READ that
// waits 50 ms on an object store would stall every reader on the CPU for 50 ms. A ring thread
// therefore answers what it can from memory at once and hands the rest here; an offload thread
// replies when the bytes are there (libfuse takes replies from any thread).
//
// libfuse frees the rings when its loop ends, so no reply may come after that: Drain, called as
// each ring thread ends (RingThreadGuard) and before the rings go, waits for every job.
//
// Threads are started as jobs need them, up to max_threads, and kept until Stop.
// Ownership: owns its threads. Thread-safety: every method is thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace mmfs::fs {

class RequestOffload {
 public:
  explicit RequestOffload(unsigned max_threads);
  ~RequestOffload();  // Stop
  RequestOffload(const RequestOffload&) = delete;
  RequestOffload& operator=(const RequestOffload&) = delete;

  // Runs `job` on an offload thread. False once stopped: the caller runs it itself.
  bool Submit(std::function<void()> job);
  // Returns once every job submitted so far has run.
  void Drain();
  // Drain, then end the threads; later Submits return false.
  void Stop();

  unsigned threads() const;

 private:
  void Run();

  const unsigned max_threads_;
  mutable std::mutex mu_;
  std::condition_variable work_;  // a job queued, or stopping
  std::condition_variable idle_;  // a job finished
  std::deque<std::function<void()>> queue_;
  std::vector<std::thread> threads_;
  unsigned waiting_ = 0;  // threads waiting for a job
  uint64_t pending_ = 0;  // queued or running
  bool stop_ = false;
};

// Lives in a ring thread's thread-local storage from its first offloaded job: when the ring
// thread ends (libfuse joins it before freeing its ring), every offloaded job has replied.
class RingThreadGuard {
 public:
  static void Note(RequestOffload* offload);
  ~RingThreadGuard();

 private:
  RequestOffload* offload_ = nullptr;
};

}  // namespace mmfs::fs
