// Memory budget: how much memory the mount daemon may use, how it splits that between its RAM
// tier and its buffers, and the signals that say it must use less.
//
// The default RAM budget used to be 1/8 of physical memory whatever container the daemon ran in;
// in a memory cgroup smaller than that (a Kubernetes pod, a systemd slice) the daemon grew into
// the limit and was OOM-killed, taking the mount with it. Here:
//
// - ReadMemoryLimit finds the limit that applies: the smaller of physical memory and the memory
//   cgroup's limit, found through /proc/self/cgroup and /proc/self/mountinfo (v1:
//   hierarchical_memory_limit or memory.limit_in_bytes; v2: the smallest memory.max of the cgroup
//   and its ancestors).
// - PlanMemoryBudget reserves what the daemon needs besides its RAM tier (base and per-thread
//   memory, the mapped index, the prefetch and read buffers, the fill's reads in flight, the SSD
//   and cluster write queues)
//   and what others in the same limit already use, and sizes the RAM tier in what is left: by
//   default 1/8 of the limit (64 MiB to 8 GiB) but at most half of what is left; an explicit
//   --ram-cache larger than what is left is clamped, and the budget says so.
// - Shared-limit mode: with --memory (BudgetRequest::memory_bytes), or by default when the limit
//   is a memory cgroup's (a container, a systemd unit's MemoryMax=, a Kubernetes pod) and neither
//   --memory nor --ram-cache is given, the mount is given the memory it may use in all, page
//   cache included (for a loader and a mount that share one limit); by default that is what
//   others left of the limit at mount. The plan
//   splits it between the daemon's own needs, the prefetch and read buffers, a share left to the
//   kernel for the mount's page cache (pushed files waiting for their reader, files the RAM tier
//   does not hold, READs in flight) and the RAM tier, which gets the rest. The governor then
//   keeps the cgroup's unreclaimable memory (neither page cache nor reclaimable kernel objects)
//   within the limit less that page-cache share, instead of 80% of the limit: in a container
//   the loader shares the limit, and the page cache is what gives way. As the loader grows
//   (workers fork, batches pile up) the governor gives way to it; nothing is computed by hand.
//   Outside any cgroup limit the default stays a modest RAM tier beside the page cache.
// - SampleMemory and AssessPressure read and judge the pressure signals (the working set against
//   the limit, limit hits, OOM kills, PSI where the cgroup has it), for fs/memory/memory_governor.
//
// Every reader takes a root directory ("/" in the daemon) under which it reads proc/... and
// sys/..., so that tests feed it fake trees.
//
// Thread-safety: pure functions and plain structs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/status.h"

namespace mmfs {

enum class LimitSource { kPhysical, kCgroupV1, kCgroupV2 };
// "physical", "cgroup v1", "cgroup v2".
const char* LimitSourceName(LimitSource source);

struct MemoryLimit {
  uint64_t physical_bytes = 0;  // MemTotal
  uint64_t cgroup_bytes = 0;    // the memory cgroup's effective limit; 0: none
  int cgroup_version = 0;       // 1 or 2 when a memory cgroup was found, else 0
  // The directory (with the root prefix) of the cgroup whose limit binds: the daemon's own or an
  // ancestor's (a pod's, a slice's), whose usage counts the daemon's and its neighbours'; the
  // daemon's own when the limit is only known through v1's hierarchical_memory_limit. Empty:
  // none found.
  std::string cgroup_dir;
  // The smaller of the two, and which one it is.
  uint64_t bytes() const;
  LimitSource source() const;
};

// Physical memory from ROOT/proc/meminfo; the memory cgroup from ROOT/proc/self/cgroup and
// ROOT/proc/self/mountinfo. No cgroup (or an unlimited one) is not an error; an unreadable
// meminfo is.
Result<MemoryLimit> ReadMemoryLimit(const std::string& root = "/");

// One reading of the signals: for the cgroup when its limit is the one that applies, else for
// the host (usage = MemTotal - MemAvailable, PSI of /proc/pressure/memory).
struct MemorySample {
  uint64_t usage_bytes = 0;        // what counts against the limit (page cache included)
  uint64_t reclaimable_bytes = 0;  // of which inactive file pages, which the kernel drops first
  uint64_t active_file_bytes = 0;  // and active file pages (dropped after the inactive ones)
  uint64_t limit_events = 0;       // times usage hit the limit (v1 failcnt; v2 events max + high)
  uint64_t oom_kills = 0;          // v1 memory.oom_control oom_kill; v2 memory.events oom_kill
  bool has_psi = false;            // PSI of the cgroup (v2) or of the host (no cgroup)
  double psi_some_avg10 = 0;       // % of the last 10 s some task stalled on memory
  double psi_full_avg10 = 0;       // % of the last 10 s all tasks did
  // Kernel objects in the usage that reclaim frees as it frees page cache: the dentries and
  // inodes of the files looked up (about 1.4 KiB a file on a FUSE mount, 56 MiB for a mount of
  // 40,000 files read once). v2: memory.stat slab_reclaimable. v1 (kernel 5.9 and later) has no
  // slab counter for a cgroup (memory.kmem.slabinfo is empty), so it is all of
  // memory.kmem.usage_in_bytes, which also holds a little that is not reclaimable (kernel
  // stacks, page tables): non_file_bytes() keeps it for the checks that must not err.
  uint64_t kernel_reclaimable_bytes = 0;
  // Memory that is in use and not readily reclaimable.
  uint64_t working_bytes() const {
    return usage_bytes > reclaimable_bytes ? usage_bytes - reclaimable_bytes : 0;
  }
  // Memory that is no page cache at all (anonymous memory and every kernel object).
  uint64_t non_file_bytes() const {
    const uint64_t file = reclaimable_bytes + active_file_bytes;
    return usage_bytes > file ? usage_bytes - file : 0;
  }
  // What reclaim cannot take back without swap: neither page cache nor reclaimable kernel
  // objects (mostly anonymous memory).
  uint64_t unreclaimable_bytes() const {
    const uint64_t rest = non_file_bytes();
    return rest > kernel_reclaimable_bytes ? rest - kernel_reclaimable_bytes : 0;
  }
};
MemorySample SampleMemory(const MemoryLimit& limit, const std::string& root = "/");

// This process's resident set (VmRSS) and, of it, the pages of mapped files (RssFile + RssShmem):
// for the daemon its libraries' code (about 6 MiB) and the mapped index, page cache rather than
// memory of its own. One read of /proc/self/statm; zeros if unreadable.
struct ResidentMemory {
  uint64_t bytes = 0;
  uint64_t file_bytes = 0;
};
ResidentMemory ProcessResident();

struct BudgetRequest {
  std::optional<uint64_t> memory_bytes;     // --memory: all the mount may use; nullopt: derived
                                            // (shared-limit mode under a cgroup limit)
  std::optional<uint64_t> ram_cache_bytes;  // --ram-cache; nullopt: the default
  uint64_t index_bytes = 0;                 // the mapped index file
  std::optional<bool> lock_index;           // -o lock_index; nullopt: locked in shared-limit mode
  unsigned threads = 16;                    // FUSE worker threads at most
  bool ssd_tier = false;                    // its write queue holds up to 64 MiB
  bool cluster_tier = false;                // its fill queue holds up to 64 MiB
  // A dataset from a URL fetched ahead (fs/readahead/filler.h): the size of one of its reads
  // (-o fill_chunk), whose bytes it holds while in flight; 0: no fill.
  uint64_t fill_chunk_bytes = 0;
  uint64_t in_use_bytes = 0;                // others' use under the same limit at mount
  // Heap the allocator holds beyond what it handed out, populated ahead of it (the huge-page
  // heap's growth step, tools/mmfs/huge_page_heap.h); 0 on small pages.
  uint64_t heap_slack_bytes = 0;
};

struct MemoryBudget {
  uint64_t limit_bytes = 0;
  LimitSource limit_source = LimitSource::kPhysical;
  std::string cgroup_dir;
  uint64_t reserved_bytes = 0;  // what the daemon needs besides its RAM tier
  uint64_t in_use_bytes = 0;    // others' working set at mount
  uint64_t ram_cache_bytes = 0;
  uint64_t prefetch_bytes = 0;
  uint64_t read_buffer_bytes = 0;
  uint64_t fill_bytes = 0;  // the fill's reads in flight at most (part of the reserve); 0: none
  // Shared-limit mode: the memory the mount may use in all (--memory, or by default what others
  // left of a cgroup limit at mount; clamped to what is left) and the share of it left to the
  // kernel for the mount's page cache. 0 in the other modes.
  uint64_t memory_bytes = 0;
  uint64_t requested_memory_bytes = 0;
  uint64_t page_cache_bytes = 0;
  bool memory_given = false;  // --memory was given (else shared-limit mode is the default's)
  // Shared-limit mode with the index locked: its pages are not reserved up front but counted as
  // they are read. Locked pages leave the kernel's file LRU lists (they go on the unevictable
  // list), so the governor's samples count them as unreclaimable memory, and the tier gives way
  // as the index fills in; an epoch over part of a large dataset touches part of its index.
  bool index_counted_as_read = false;
  bool shared_limit() const { return memory_bytes > 0; }
  // Shared-limit mode: the most unreclaimable memory the limit may hold, the limit less the
  // page-cache share (the governor's target; stats show it beside what it judges).
  uint64_t held_limit_bytes() const {
    return limit_bytes > page_cache_bytes ? limit_bytes - page_cache_bytes : 0;
  }
  bool explicit_ram = false;        // --ram-cache given
  uint64_t requested_ram_bytes = 0; // what --ram-cache asked for
  bool clamped = false;             // it did not fit and was lowered
  // "memory" with --memory, "shared" in the default shared-limit mode, "explicit" when
  // --ram-cache was given, else the limit's source.
  const char* source() const {
    if (shared_limit()) return memory_given ? "memory" : "shared";
    return explicit_ram ? "explicit" : LimitSourceName(limit_source);
  }
  // One line for people: the budget and why ("RAM tier 64 MiB (1/8 of the cgroup v1 limit ...").
  std::string Explain() const;
  // The warning for a clamped --ram-cache; empty when it fit.
  std::string Warning() const;
};

// Memory the daemon needs besides its tiers and buffers: allocator, libfuse, logging, the
// sketches and per-file tables, and per FUSE thread the part of its request buffer it touches
// (READ replies point into cached blobs, nothing is copied). Measured (10,000 samples):
// 10 MiB resident with the caches empty, about 23 MiB beyond the RAM tier's bytes under three
// shuffled epochs with 16 threads; these leave a margin over that.
inline constexpr uint64_t kBaseBytes = 16ull << 20;
// In shared-limit mode, the page-cache share: an eighth of the memory, 16 MiB to 512 MiB.
inline constexpr uint64_t kMinPageCacheBytes = 16ull << 20;
inline constexpr uint64_t kMaxPageCacheBytes = 512ull << 20;
inline constexpr uint64_t kPerThreadBytes = 512ull << 10;
inline constexpr uint64_t kQueueBytes = 64ull << 20;  // SSD write queue, cluster fill queue

// Whether `request` leads to shared-limit mode by default: no --memory, no --ram-cache, and the
// limit is a memory cgroup's. Others' use at mount is then their unreclaimable memory (page
// cache, say of a dataset just copied, gives way).
bool SharedLimitByDefault(const MemoryLimit& limit, const BudgetRequest& request);
MemoryBudget PlanMemoryBudget(const MemoryLimit& limit, const BudgetRequest& request);

enum class Pressure { kLow, kModerate, kHigh, kCritical };
const char* PressureName(Pressure p);
// Thresholds on working set / limit: moderate from 70%, high from 80% (the governor keeps the
// working set below it), critical from 95% or on a new OOM kill in the cgroup.
inline constexpr double kModerateFraction = 0.70;
inline constexpr double kHighFraction = 0.80;
inline constexpr double kCriticalFraction = 0.95;
// `prev`: the previous sample (for counters that only grow); `limit_bytes` > 0.
Pressure AssessPressure(uint64_t limit_bytes, const MemorySample& prev, const MemorySample& cur);

}  // namespace mmfs
