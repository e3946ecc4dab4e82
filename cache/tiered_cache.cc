#include "cache/tiered_cache.h"

namespace mmfs::cache {

TieredCache::TieredCache(std::vector<CacheTier*> tiers) : tiers_(std::move(tiers)) {}

Result<Blob> TieredCache::Get(CacheKey key, const Loader& load, size_t* served_by) {
  if (served_by != nullptr) *served_by = tiers_.size();
  for (size_t i = 0; i < tiers_.size(); ++i) {
    if (Blob blob = tiers_[i]->Lookup(key)) {
      if (served_by != nullptr) *served_by = i;
      for (size_t j = 0; j < i; ++j) tiers_[j]->Insert(key, blob);  // promote
      return blob;
    }
  }
  std::promise<Result<Blob>> promise;
  {
    std::unique_lock<std::mutex> lock(mu_);
    auto it = in_flight_.find(key);
    if (it != in_flight_.end()) {
      std::shared_future<Result<Blob>> pending = it->second;
      lock.unlock();
      coalesced_.fetch_add(1, std::memory_order_relaxed);
      return pending.get();
    }
    in_flight_.emplace(key, promise.get_future().share());
  }
  Result<Blob> result = load();
  loads_.fetch_add(1, std::memory_order_relaxed);
  if (result.ok()) {
    load_bytes_.fetch_add((*result)->size(), std::memory_order_relaxed);
    for (CacheTier* tier : tiers_) tier->Insert(key, *result);
  } else {
    load_errors_.fetch_add(1, std::memory_order_relaxed);
  }
  promise.set_value(result);
  {
    std::lock_guard<std::mutex> lock(mu_);
    in_flight_.erase(key);
  }
  return result;
}

OriginCounters TieredCache::origin_counters() const {
  OriginCounters c;
  c.loads = loads_.load(std::memory_order_relaxed);
  c.bytes = load_bytes_.load(std::memory_order_relaxed);
  c.errors = load_errors_.load(std::memory_order_relaxed);
  c.coalesced = coalesced_.load(std::memory_order_relaxed);
  return c;
}

}  // namespace mmfs::cache
