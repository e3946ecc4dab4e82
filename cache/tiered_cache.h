// TieredCache: looks a key up in each tier in order (RAM first), loads it from the origin on a
// miss, and fills the tiers it missed. Concurrent misses on one key load it once: the first caller
// loads, the others wait for its result ("single flight").
//
// Thread-safety: all methods are thread-safe. Lock order: in-flight table mutex, then (released)
// tier locks; the loader runs with no cache lock held.
#pragma once

#include <atomic>
#include <functional>
#include <future>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "cache/tier.h"

namespace mmfs::cache {

struct OriginCounters {
  uint64_t loads = 0;        // origin reads
  uint64_t bytes = 0;        // bytes read from the origin
  uint64_t errors = 0;       // loads that failed (I/O error, checksum mismatch)
  uint64_t coalesced = 0;    // misses that waited for another caller's load
};

class TieredCache {
 public:
  using Loader = std::function<Result<Blob>()>;

  // `tiers` are not owned and must outlive the cache; tiers[0] is looked up first.
  explicit TieredCache(std::vector<CacheTier*> tiers);

  // The blob for `key`, from the first tier holding it, else from `load` (run at most once at a
  // time per key). Errors from `load` are returned to every waiter and not cached.
  // `served_by` (optional) receives the index of the tier that had it, or tiers().size().
  Result<Blob> Get(CacheKey key, const Loader& load, size_t* served_by = nullptr);

  const std::vector<CacheTier*>& tiers() const { return tiers_; }
  OriginCounters origin_counters() const;

 private:
  std::vector<CacheTier*> tiers_;
  std::mutex mu_;
  std::unordered_map<CacheKey, std::shared_future<Result<Blob>>> in_flight_;  // guarded by mu_
  std::atomic<uint64_t> loads_{0};
  std::atomic<uint64_t> load_bytes_{0};
  std::atomic<uint64_t> load_errors_{0};
  std::atomic<uint64_t> coalesced_{0};
};

}  // namespace mmfs::cache
