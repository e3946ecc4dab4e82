// RAM tier: a byte-budgeted in-memory cache of blobs with SIEVE eviction.
//
// SIEVE (Zhang et al., NSDI'24) keeps one "visited" bit per entry and a hand that sweeps from the
// oldest entry, sparing visited ones once; hits cost a relaxed bit store and no list move, so hits
// take no exclusive lock on the list order. The key space is split into shards, each with its own
// lock and an equal share of the budget, so 2-16 concurrent readers rarely contend.
//
// Thread-safety: all methods are thread-safe. Lock order: one shard mutex at a time.
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "cache/tier.h"

namespace mmfs::cache {

class RamTier final : public CacheTier {
 public:
  explicit RamTier(uint64_t budget_bytes);
  ~RamTier() override;

  std::string_view name() const override { return "ram"; }
  Blob Lookup(CacheKey key) override;
  void Insert(CacheKey key, Blob blob) override;
  TierCounters Counters() const override;

 private:
  static constexpr size_t kShards = 16;
  struct Node {
    CacheKey key;
    Blob blob;
    std::atomic<bool> visited{false};
    Node* newer = nullptr;
    Node* older = nullptr;
  };
  struct Shard {
    mutable std::mutex mu;
    std::unordered_map<CacheKey, Node*> map;  // owns the nodes
    Node* newest = nullptr;
    Node* oldest = nullptr;
    Node* hand = nullptr;  // next eviction candidate; moves from oldest towards newest
    uint64_t bytes = 0;
    uint64_t evictions = 0;
    uint64_t inserts = 0;
    uint64_t rejected = 0;
  };

  Shard& ShardFor(CacheKey key) { return shards_[(key * 0x9E3779B97F4A7C15ull) >> 60]; }
  // REQUIRES: shard.mu held.
  void EvictOne(Shard& shard);
  void Unlink(Shard& shard, Node* node);

  const uint64_t budget_;
  const uint64_t shard_budget_;
  std::array<Shard, kShards> shards_;
  std::atomic<uint64_t> lookups_{0};
  std::atomic<uint64_t> hits_{0};
};

}  // namespace mmfs::cache
