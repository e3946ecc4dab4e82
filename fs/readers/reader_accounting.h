// ReaderAccounting: which reader processes wait on mmfs, and for how long.
//
// Every request a FUSE thread serves is bracketed by Begin/End with the caller's TID (the kernel
// puts the calling *thread's* id in the request header: pid_nr_ns(task_pid(current)), not the
// Tgid; a DataLoader worker's reads come from its main thread, so TID == PID there). Per thread
// the accounting keeps the time during which at least one of its requests was in mmfs (overlap
// counted once: the kernel's asynchronous readahead may have several READs of one thread in
// flight), the requests and the READ bytes served. That is the hot path: two clock reads per
// request (its start and end; one cannot bound an interval), one lock of 16 striped by TID (no
// lock shared by all threads), no allocation but for a thread's first request, no /proc.
//
// The sampler (Tick, once per tick on its own thread, and Snapshot) does the rest under its own
// lock: maps each new thread to its process (ProcReader::ReadTask), samples each process's CPU
// time and rchar (ProcReader::ReadProcess), folds exited threads into their process and exited
// processes into one "finished" aggregate, and records every reader's cumulative counters at
// each tick. A window's value is now minus the value at now - window, interpolated between the
// two ticks around that instant, so windows up to max_window_seconds() cost no per-request
// buckets. A reader is observed from its first sample (the first tick or snapshot after its
// first request); CPU time a process spends between its last tick and its exit is not seen.
//
// A reader is shown (and judged) for a window in which it sent mmfs a request, or read at least
// kActiveReadBytes from anything (rchar: a loader whose files all come from the page cache sends
// no request); a process that once looked at the mount and now reads a pipe now and then (a
// shell, a test, DataLoader's main process) is tracked but not shown.
//
// Bounds: max_threads thread slots (requests of threads beyond it are only counted as
// untracked), max_processes processes (an inactive one is folded into "finished" to make room),
// max_commands command names in the totals (the rest under "other").
//
// Thread-safety: all methods are thread-safe. Lock order: sampler_mu_ before a stripe's mu; the
// hot path takes one stripe's mu alone.
#pragma once

#include <array>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "fs/readers/proc_reader.h"
#include "fs/readers/reader_stats.h"

namespace mmfs::fs {

// Monotonic nanoseconds; tests inject a fake.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual int64_t NowNs() const = 0;
};
// std::chrono::steady_clock.
const Clock& SteadyClock();

inline constexpr uint64_t kActiveReadBytes = 64 << 10;

struct ReaderAccountingOptions {
  int64_t tick_ns = 1'000'000'000;  // sampler period; windows are interpolated between ticks
  int history_ticks = 64;           // ticks kept: windows up to history_ticks - 2 ticks
  size_t max_threads = 1024;
  size_t max_processes = 256;
  size_t max_commands = 32;
  uint64_t ignore_tgid = 0;  // the daemon itself
};

class ReaderAccounting {
 public:
  // `clock` is not owned and must outlive this.
  ReaderAccounting(ReaderAccountingOptions options, const Clock* clock,
                   std::unique_ptr<ProcReader> proc);
  ~ReaderAccounting();
  ReaderAccounting(const ReaderAccounting&) = delete;
  ReaderAccounting& operator=(const ReaderAccounting&) = delete;

  int64_t Now() const { return clock_->NowNs(); }
  // A request of thread `tid` (not 0) starts. False when the thread has no slot (the table is
  // full): then End must not be called for it.
  bool Begin(uint64_t tid, int64_t now_ns);
  // It ends, having returned `bytes` (READ data; 0 for other requests).
  void End(uint64_t tid, int64_t now_ns, uint64_t bytes);

  // One sampler step at the clock's now.
  void Tick();
  // Calls Tick every tick_ns on a thread, until StopSampler or destruction.
  void StartSampler();
  void StopSampler();

  // The readers over the last `window_seconds` (clamped to [tick, max_window_seconds()]), the
  // top `top` processes by stall. Fills everything but `advice`.
  ReadersStats Snapshot(double window_seconds, size_t top);
  double max_window_seconds() const;

 private:
  // Cumulative amounts of a reader since its first sample (all in doubles: ns, counts, bytes).
  struct Amounts {
    double alive_ns = 0, stall_ns = 0, cpu_ns = 0, runq_ns = 0, requests = 0, bytes = 0,
           rchar = 0;
    Amounts& operator+=(const Amounts& o);
    Amounts operator-(const Amounts& o) const;
  };
  struct Slot {
    int inflight = 0;
    int64_t busy_since = 0, first_ns = 0, last_ns = 0;
    int64_t stall_ns = 0;
    uint64_t requests = 0, bytes = 0;
  };
  struct alignas(64) Stripe {
    std::mutex mu;
    std::unordered_map<uint64_t, Slot> slots;  // by TID; guarded by mu
    uint64_t untracked = 0;                    // guarded by mu
  };
  // A slot as the sampler sees it: stall includes a request still in flight, up to now.
  struct ThreadView {
    uint64_t tid = 0;
    Amounts raw;
    int64_t first_ns = 0, last_ns = 0;
    int inflight = 0;
  };
  struct Process {
    uint64_t tgid = 0, start_ticks = 0;
    std::string comm;
    int64_t first_ns = 0, last_seen_ns = 0;
    uint64_t first_tick = 0;       // the first tick that recorded it
    Amounts base;                  // raw amounts at the first sample
    bool based = false;            // base holds the threads' amounts too
    Amounts retired;               // raw amounts of its exited threads
    Amounts live;                  // raw amounts of its live threads, as of the last refresh
    double cpu_ns = 0, runq_ns = 0, rchar = 0;  // as of the last sample
    bool has_io = false;
    std::vector<uint64_t> tids;    // its live threads
    std::vector<Amounts> history;  // by tick % history_ticks
  };
  struct KnownThread {
    uint64_t tgid = 0, start_ticks = 0;
  };

  Stripe& StripeOf(uint64_t tid) { return stripes_[tid % stripes_.size()]; }
  std::vector<ThreadView> CollectThreads(int64_t now);
  // Removes `tid`'s slot (if no request is in flight) and returns its final view.
  bool RemoveThread(uint64_t tid, ThreadView* out);
  // Discovery, /proc samples, folding; everything a tick does but recording history.
  void RefreshLocked(int64_t now);
  Amounts CurrentLocked(const Process& p, int64_t now) const;
  Amounts ValueAtLocked(const Process& p, int64_t now, int64_t t) const;
  Amounts FinishedAtLocked(int64_t now, int64_t t) const;
  void FoldProcessLocked(Process& p);
  void FoldOrphanLocked(const ThreadView& t);  // a thread gone before its process was known
  void AddCommandLocked(const std::string& comm, const Amounts& a);
  bool MakeRoomLocked();
  static ReaderRow RowOf(const Amounts& a);

  const ReaderAccountingOptions options_;
  const Clock* const clock_;
  const int64_t start_ns_;
  std::array<Stripe, 16> stripes_;

  std::mutex sampler_mu_;
  std::unique_ptr<ProcReader> proc_;                 // guarded by sampler_mu_
  std::unordered_map<uint64_t, KnownThread> known_;  // by TID; guarded by sampler_mu_
  std::map<uint64_t, Process> processes_;            // by Tgid; guarded by sampler_mu_
  std::vector<int64_t> tick_ns_;                     // by tick % history_ticks
  uint64_t ticks_ = 0;                               // ticks recorded
  Amounts finished_total_;
  std::vector<Amounts> finished_history_;
  std::vector<int64_t> exits_;                         // exit times, the last history span
  std::map<std::string, Amounts> retired_by_command_;  // exited readers' amounts

  std::mutex thread_mu_;
  std::condition_variable thread_cv_;
  bool stop_ = false;  // guarded by thread_mu_
  std::thread thread_;
};

}  // namespace mmfs::fs
