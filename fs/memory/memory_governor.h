// MemoryGovernor: keeps the daemon from growing into its memory limit.
//
// Every 100 ms it samples the memory signals of the daemon's cgroup (or of the host) and sets
// the RAM tier's budget, the prefetch and read buffers' budgets and whether prefetched files may
// be pushed into the page cache:
//
// - the RAM tier may grow only by the headroom left below 80% of the limit (working set, i.e.
//   usage less inactive file pages), and by at most 1/16 of the limit per sample: between two
//   samples it never takes more than there is, and what others allocate meanwhile finds room
//   (a 192 MiB cgroup filled at 300 MB/s: without the step the tier took 75 MiB in one sample
//   and the daemon was OOM-killed when the reader allocated 64 MiB);
//   above 80% it gives back the excess at once (evicting), and on critical pressure (95%, an OOM
//   kill in the cgroup, PSI full stalls) half of what it holds;
// - the buffers halve on high pressure (down to 1 MiB) and come back to their planned size when
//   the pressure is low again;
// - the push is off unless pressure is low: pushed pages are page cache charged to the daemon.
//
// In shared-limit mode (MemoryBudget::shared_limit: --memory, or the default under a memory
// cgroup's limit) the mount shares its limit with others (the loader in a container) and the
// page cache is what gives way: the level and the headroom are
// judged on unreclaimable memory (neither page cache nor the reclaimable kernel objects, the
// dentries and inodes of the files read) against the limit less the plan's page-cache share,
// and on all memory but page cache against the limit less a quarter of that share (the excess
// over either goes); critical past half the share on the first, past all but a sixteenth of it
// on the second, or on an OOM kill. (Counting the mount's 56 MiB of dentries and inodes as
// unreclaimable made the governor give back tier memory in every run of the equal-memory bench:
// files it then read again.)
//
// Nothing ever goes above the plan (fs/memory/memory_budget.h), which stats show with the targets
// of the moment.
//
// Ownership: the hooks act on the filesystem, which must outlive the governor (destroy the
// governor first; its destructor stops the thread).
// Thread-safety: all methods are thread-safe; Step runs on the governor's thread (or a test's).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "fs/memory/memory_budget.h"

namespace mmfs::fs {

struct MemoryTargets {
  uint64_t ram_cache_bytes = 0;
  uint64_t prefetch_bytes = 0;
  uint64_t read_buffer_bytes = 0;
  bool push = true;
  bool operator==(const MemoryTargets&) const = default;
};

struct GovernorCounters {
  Pressure level = Pressure::kLow;
  uint64_t samples = 0;
  uint64_t shrinks = 0;  // samples after which a budget went below what it was (memory released)
  MemorySample last;     // the latest sample
  MemoryTargets targets; // in force now
};

class MemoryGovernor {
 public:
  struct Hooks {
    std::function<void(const MemoryTargets&)> apply;  // resize the tier and buffers, gate push
    std::function<uint64_t()> ram_used;               // bytes the RAM tier holds now
  };

  // `push_wanted`: whether the push is on at all (-o push). `root` as for SampleMemory.
  MemoryGovernor(MemoryLimit limit, MemoryBudget plan, bool push_wanted, Hooks hooks,
                 std::string root = "/");
  ~MemoryGovernor();
  MemoryGovernor(const MemoryGovernor&) = delete;
  MemoryGovernor& operator=(const MemoryGovernor&) = delete;

  // Samples every `interval` on a thread of its own until destroyed.
  void Start(std::chrono::milliseconds interval = kInterval);
  // One step of the control loop on `sample` (the thread's body; tests call it directly).
  void Step(const MemorySample& sample);

  GovernorCounters Counters() const;
  const MemoryBudget& plan() const { return plan_; }

  static constexpr std::chrono::milliseconds kInterval{100};
  static constexpr uint64_t kGrowthStepDivisor = 16;
  static constexpr uint64_t kMinBufferBytes = 1ull << 20;

 private:
  // Shared-limit mode: the most memory other than page cache (kernel objects included) the cgroup
  // may hold, the limit less a quarter of the page-cache share: a second ceiling in case the
  // kernel objects counted as reclaimable are not (on cgroup v1 they are an estimate).
  uint64_t KernelCeiling() const;
  // How far a sample is past the two ceilings (0 if within both), and the room left below them.
  struct Room {
    uint64_t over = 0;
    uint64_t headroom = 0;
  };
  Room WithinRoom(const MemorySample& s) const;
  // Shared-limit mode: the level a sample means against the plan's held limit and KernelCeiling.
  Pressure AssessWithin(const MemorySample& prev, const MemorySample& cur) const;

  const MemoryLimit limit_;
  const MemoryBudget plan_;
  const bool push_wanted_;
  const Hooks hooks_;
  const std::string root_;

  mutable std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stop_ = false;             // guarded by mu_
  bool have_prev_ = false;        // guarded by mu_
  GovernorCounters counters_;     // guarded by mu_
  std::thread thread_;
};

}  // namespace mmfs::fs
