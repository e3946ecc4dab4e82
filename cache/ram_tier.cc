#include "cache/ram_tier.h"

namespace mmfs::cache {

RamTier::RamTier(uint64_t budget_bytes, uint64_t expected_keys, std::function<void()> grew)
    : grew_(std::move(grew)), budget_(budget_bytes) {
  for (auto& shard : shards_) {
    shard = std::make_unique<Shard>(budget_bytes / kShards, expected_keys / kShards + 1);
  }
}

Blob RamTier::Lookup(CacheKey key) {
  lookups_.fetch_add(1, std::memory_order_relaxed);
  Shard& shard = ShardFor(key);
  std::lock_guard<std::mutex> lock(shard.mu);
  if (!shard.policy.Access(key)) return nullptr;
  hits_.fetch_add(1, std::memory_order_relaxed);
  return shard.blobs.at(key);
}

void RamTier::Insert(CacheKey key, Blob blob) {
  if (blob == nullptr) return;
  if (!AdmittedBelow(key, admit_below_.load(std::memory_order_relaxed))) {
    refused_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  Shard& shard = ShardFor(key);
  std::vector<CacheKey> evicted;
  {
    std::lock_guard<std::mutex> lock(shard.mu);
    if (shard.blobs.count(key) > 0) return;  // immutable: same bytes
    if (!shard.policy.Admit(key, blob->size() + kEntryOverhead, &evicted)) return;
    for (CacheKey k : evicted) shard.blobs.erase(k);
    shard.blobs.emplace(key, std::move(blob));
    shard.inserts++;
  }
  // A growing tier grows the heap: have the next part of it populated before it is needed.
  if (grew_) grew_();
}

uint64_t RamTier::MaxEntryBytes() const {
  uint64_t share = budget_.load(std::memory_order_relaxed) / kShards;
  return share > kEntryOverhead ? share - kEntryOverhead : 0;
}

void RamTier::SetBudget(uint64_t budget_bytes) {
  budget_.store(budget_bytes, std::memory_order_relaxed);
  for (auto& shard : shards_) {
    std::vector<CacheKey> evicted;
    std::vector<Blob> freed;  // released after the lock: freeing large blobs takes time
    std::lock_guard<std::mutex> lock(shard->mu);
    shard->policy.SetBudget(budget_bytes / kShards, &evicted);
    for (CacheKey k : evicted) {
      auto it = shard->blobs.find(k);
      if (it == shard->blobs.end()) continue;
      freed.push_back(std::move(it->second));
      shard->blobs.erase(it);
    }
  }
}

bool RamTier::Contains(CacheKey key) const {
  const Shard& shard = *shards_[(key * 0x9E3779B97F4A7C15ull) >> 60];
  std::lock_guard<std::mutex> lock(shard.mu);
  return shard.policy.Contains(key);
}

void RamTier::Erase(CacheKey key) {
  Shard& shard = ShardFor(key);
  std::lock_guard<std::mutex> lock(shard.mu);
  shard.policy.Remove(key);
  shard.blobs.erase(key);
}

TierCounters RamTier::Counters() const {
  TierCounters c;
  c.lookups = lookups_.load(std::memory_order_relaxed);
  c.hits = hits_.load(std::memory_order_relaxed);
  c.misses = c.lookups - c.hits;
  c.bytes_budget = budget_.load(std::memory_order_relaxed);
  for (const auto& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard->mu);
    c.bytes_used += shard->policy.bytes_used();
    c.entries += shard->policy.entries();
    c.evictions += shard->policy.evictions();
    c.rejected += shard->policy.rejected();
    c.inserts += shard->inserts;
  }
  c.rejected += refused_.load(std::memory_order_relaxed);
  return c;
}

}  // namespace mmfs::cache
