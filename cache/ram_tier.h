// RAM tier: a byte-budgeted in-memory cache of blobs.
//
// Which blobs stay is SievePolicy's decision (SIEVE eviction, TinyLFU admission: see
// cache/sieve_policy.h). The key space is split into shards, each with its own lock, policy and
// an equal share of the budget, so 2-16 concurrent readers rarely contend.
//
// A growing tier grows the process's heap: the hook given at construction (the daemon's heap
// prefaulter, base/heap_prefaulter.h) is called after each insert, so that the next part of the
// heap is populated before a READ needs it.
//
// Thread-safety: all methods are thread-safe. Lock order: one shard mutex at a time.
#pragma once

#include <array>
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "cache/sieve_policy.h"
#include "cache/tier.h"

namespace mmfs::cache {

class RamTier final : public CacheTier {
 public:
  // `expected_keys`: about how many distinct keys will be asked for (sizes the sketch).
  // `grew`: called after each insert that added a blob (may be empty), from the inserting
  // thread, no lock held.
  RamTier(uint64_t budget_bytes, uint64_t expected_keys, std::function<void()> grew = {});

  std::string_view name() const override { return "ram"; }
  TierRole role() const override { return TierRole::kMemory; }
  Blob Lookup(CacheKey key) override;
  void Insert(CacheKey key, Blob blob) override;
  TierCounters Counters() const override;
  // True if `key` is resident; unlike Lookup, not counted and not an access.
  bool Contains(CacheKey key) const override;
  void SetAdmitBelow(CacheKey bound) override { admit_below_.store(bound); }
  void Erase(CacheKey key) override;
  // A shard's share of the budget, less the bookkeeping: no larger file can ever be admitted.
  uint64_t MaxEntryBytes() const override;
  // Changes the budget (memory pressure shrinks it, calm grows it back); shrinking evicts at
  // once, so the memory is released before this returns.
  void SetBudget(uint64_t budget_bytes);

  // Per-entry bookkeeping charged against the budget, so a budget also bounds tiny files.
  static constexpr uint64_t kEntryOverhead = 96;
  // Independent policies the budget is split over (by a multiplicative hash of the key).
  static constexpr size_t kShards = 16;

 private:
  struct Shard {
    Shard(uint64_t budget, uint64_t expected_keys) : policy(budget, expected_keys) {}
    mutable std::mutex mu;
    SievePolicy policy;                         // guarded by mu
    std::unordered_map<CacheKey, Blob> blobs;   // guarded by mu
    uint64_t inserts = 0;                       // guarded by mu
  };

  Shard& ShardFor(CacheKey key) { return *shards_[(key * 0x9E3779B97F4A7C15ull) >> 60]; }

  const std::function<void()> grew_;
  std::atomic<uint64_t> budget_;
  std::atomic<CacheKey> admit_below_{kAdmitAll};
  std::atomic<uint64_t> refused_{0};  // inserts outside the admitted keys (SetAdmitBelow)
  std::array<std::unique_ptr<Shard>, kShards> shards_;
  std::atomic<uint64_t> lookups_{0};
  std::atomic<uint64_t> hits_{0};
};

}  // namespace mmfs::cache
