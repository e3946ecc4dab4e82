#include "cache/ram_tier.h"

namespace mmfs::cache {

namespace {
// Per-entry bookkeeping charged against the budget, so a budget also bounds tiny files.
constexpr uint64_t kNodeOverhead = 96;
uint64_t Charge(const Blob& blob) { return blob->size() + kNodeOverhead; }
}  // namespace

RamTier::RamTier(uint64_t budget_bytes) : budget_(budget_bytes), shard_budget_(budget_bytes / kShards) {}

RamTier::~RamTier() {
  for (Shard& shard : shards_) {
    for (auto& [key, node] : shard.map) delete node;
  }
}

Blob RamTier::Lookup(CacheKey key) {
  lookups_.fetch_add(1, std::memory_order_relaxed);
  Shard& shard = ShardFor(key);
  std::lock_guard<std::mutex> lock(shard.mu);
  auto it = shard.map.find(key);
  if (it == shard.map.end()) return nullptr;
  it->second->visited.store(true, std::memory_order_relaxed);
  hits_.fetch_add(1, std::memory_order_relaxed);
  return it->second->blob;
}

void RamTier::Unlink(Shard& shard, Node* node) {
  if (node->newer != nullptr) node->newer->older = node->older;
  if (node->older != nullptr) node->older->newer = node->newer;
  if (shard.newest == node) shard.newest = node->older;
  if (shard.oldest == node) shard.oldest = node->newer;
}

void RamTier::EvictOne(Shard& shard) {
  Node* n = shard.hand != nullptr ? shard.hand : shard.oldest;
  while (n != nullptr && n->visited.load(std::memory_order_relaxed)) {
    n->visited.store(false, std::memory_order_relaxed);
    n = n->newer != nullptr ? n->newer : shard.oldest;
  }
  if (n == nullptr) return;
  shard.hand = n->newer;
  Unlink(shard, n);
  shard.bytes -= Charge(n->blob);
  shard.map.erase(n->key);
  shard.evictions++;
  delete n;
}

void RamTier::Insert(CacheKey key, Blob blob) {
  if (blob == nullptr) return;
  Shard& shard = ShardFor(key);
  uint64_t charge = Charge(blob);
  std::lock_guard<std::mutex> lock(shard.mu);
  if (charge > shard_budget_) {
    shard.rejected++;
    return;
  }
  if (auto it = shard.map.find(key); it != shard.map.end()) return;  // immutable: same bytes
  while (shard.bytes + charge > shard_budget_ && !shard.map.empty()) EvictOne(shard);
  Node* node = new Node;
  node->key = key;
  node->blob = std::move(blob);
  node->older = shard.newest;
  if (shard.newest != nullptr) shard.newest->newer = node;
  shard.newest = node;
  if (shard.oldest == nullptr) shard.oldest = node;
  shard.map.emplace(key, node);
  shard.bytes += charge;
  shard.inserts++;
}

TierCounters RamTier::Counters() const {
  TierCounters c;
  c.lookups = lookups_.load(std::memory_order_relaxed);
  c.hits = hits_.load(std::memory_order_relaxed);
  c.misses = c.lookups - c.hits;
  c.bytes_budget = budget_;
  for (const Shard& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard.mu);
    c.bytes_used += shard.bytes;
    c.entries += shard.map.size();
    c.evictions += shard.evictions;
    c.inserts += shard.inserts;
    c.rejected += shard.rejected;
  }
  return c;
}

}  // namespace mmfs::cache
