// WhatIf: the hit ratio a cache tier would have had at other sizes, from a sample of its
// accesses, so `mmfs stats --what-if` can tell a user where adding memory stops paying.
//
// Spatial sampling as in SHARDS (Waldspurger et al., FAST 2015): a key is in the sample when a
// hash of it falls below rate x 2^64, so every access of a sampled key is seen and a sampled
// key's reuse behaves as the whole population's. The rate is chosen at construction so that at
// most `max_keys` keys are ever sampled (rate = max_keys / expected keys, at most 1), which bounds
// memory whatever the dataset size. Each sampled access is replayed into miniature caches (the
// "miniature simulation" variant, Waldspurger et al., ATC 2017), one per candidate size, each
// `size x rate` bytes and running the tier's own policy (SIEVE with TinyLFU admission), so the
// curve is for mmfs's policy, not LRU. Accuracy against exact simulation: docs/cache.md.
//
// Also estimated: the working set of the last epoch (distinct bytes read in the last
// `expected keys` reads).
//
// Thread-safety: all methods are thread-safe (one mutex, taken only for sampled keys).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "cache/sieve_policy.h"
#include "cache/tier.h"

namespace mmfs::cache {

class WhatIf {
 public:
  struct Point {
    double fraction = 0;    // of the current budget
    uint64_t bytes = 0;     // the simulated size
    double hit_ratio = 0;   // predicted, by file reads
  };

  // The sizes simulated, as fractions of the budget, and the most keys ever sampled.
  static constexpr std::initializer_list<double> kFractions = {0.1, 0.25, 0.5, 0.75,
                                                               1.0, 1.5,  2.0};
  static constexpr size_t kMaxKeys = 8192;

  // `entry_overhead`: bytes the tier charges per entry besides the data (as the tier does).
  // `shards`: a power of two; the tier's budget is split over that many independent policies
  // (keys assigned as RamTier does), so the miniature caches are built the same way.
  WhatIf(uint64_t budget_bytes, uint64_t expected_keys, uint64_t entry_overhead,
         std::vector<double> fractions = kFractions, size_t max_keys = kMaxKeys,
         unsigned shards = 1);
  ~WhatIf();

  // One read of `key` (a file of `size` bytes).
  void Record(CacheKey key, uint64_t size);

  std::vector<Point> Curve() const;
  uint64_t WorkingSetBytes() const;
  double sampling_rate() const { return rate_; }
  uint64_t budget() const { return budget_; }
  uint64_t sampled_reads() const;

 private:
  struct Mini;
  struct Sampled {
    uint64_t size = 0;
    uint64_t last = 0;  // sequence number of its last read
  };

  const uint64_t budget_;
  const uint64_t expected_keys_;
  const uint64_t overhead_;
  unsigned shard_bits_ = 0;
  double rate_ = 1;
  uint64_t threshold_ = UINT64_MAX;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Mini>> minis_;          // guarded by mu_
  std::unordered_map<CacheKey, Sampled> sampled_;     // guarded by mu_
  uint64_t reads_ = 0;                                // sampled reads; guarded by mu_
};

}  // namespace mmfs::cache
