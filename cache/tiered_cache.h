// TieredCache: looks a key up in each tier in order (RAM first), loads it from the origin on a
// miss, and fills the tiers it missed. Concurrent misses on one key load it once: the first caller
// loads, the others wait for its result ("single flight").
//
// TryGet is the same lookup for a thread that must not wait (a FUSE request thread, which cache
// hits need): it takes what the tiers hold or a copy already at hand, and never waits for a load,
// its own or another caller's. A caller it turns away goes on with Get elsewhere, telling it that
// the tiers were looked up already, so that one read's miss is not counted twice (a tier that
// gained the key in between is looked up again, and counts that hit).
//
// Thread-safety: all methods are thread-safe. Lock order: in-flight table mutex, then (released)
// tier locks; the loader runs with no cache lock held.
#pragma once

#include <atomic>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
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
  // A copy at hand without waiting (a prefetched blob that is loaded already), or nullptr.
  using Taker = std::function<Blob()>;

  // `tiers` are not owned and must outlive the cache; tiers[0] is looked up first.
  explicit TieredCache(std::vector<CacheTier*> tiers);

  // The blob for `key`, from the first tier holding it, else from `load` (run at most once at a
  // time per key). Errors from `load` are returned to every waiter and not cached.
  // `served_by` (optional) receives the index of the tier that had it, or tiers().size(); ask
  // the tier's role (TierStack::RoleOf) rather than read meaning into the index.
  // `looked_up`: the caller's TryGet missed every tier a moment ago (its lookups are counted),
  // so a tier is looked up again only if it has the key now.
  Result<Blob> Get(CacheKey key, const Loader& load, size_t* served_by = nullptr,
                   bool looked_up = false);
  // The blob for `key` from the first tier holding it, else from `take` (filled into the tiers as
  // a load's result is); nullopt when neither has it or another caller is loading it. Never
  // waits. `served_by` as for Get.
  std::optional<Blob> TryGet(CacheKey key, const Taker& take, size_t* served_by = nullptr);

  const std::vector<CacheTier*>& tiers() const { return tiers_; }
  OriginCounters origin_counters() const;

 private:
  // The first tier holding `key` (promoted into the tiers above it), or nullptr; `counted`: a
  // lookup of every tier, else only of a tier that Contains it.
  Blob FromTiers(CacheKey key, bool counted, size_t* served_by);
  // Fills every tier with a loaded `result`, counts it, hands it to the waiters and ends the
  // flight of `key`.
  void Land(CacheKey key, std::promise<Result<Blob>>& promise, const Result<Blob>& result);

  std::vector<CacheTier*> tiers_;
  std::mutex mu_;
  // Guarded by mu_. A flight that ends with an OK null blob found nothing (a TryGet's): its
  // waiters look again.
  std::unordered_map<CacheKey, std::shared_future<Result<Blob>>> in_flight_;
  std::atomic<uint64_t> loads_{0};
  std::atomic<uint64_t> load_bytes_{0};
  std::atomic<uint64_t> load_errors_{0};
  std::atomic<uint64_t> coalesced_{0};
};

}  // namespace mmfs::cache
