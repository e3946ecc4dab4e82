#include "cache/tiered_cache.h"

#include <exception>
#include <string>
#include <type_traits>

namespace mmfs::cache {

TieredCache::TieredCache(std::vector<CacheTier*> tiers) : tiers_(std::move(tiers)) {}

Blob TieredCache::FromTiers(CacheKey key, bool counted, size_t* served_by) {
  for (size_t i = 0; i < tiers_.size(); ++i) {
    if (!counted && !tiers_[i]->Contains(key)) continue;
    if (Blob blob = tiers_[i]->Lookup(key)) {
      if (served_by != nullptr) *served_by = i;
      for (size_t j = 0; j < i; ++j) tiers_[j]->Insert(key, blob);  // promote
      return blob;
    }
  }
  return nullptr;
}

void TieredCache::Land(CacheKey key, std::promise<Result<Blob>>& promise,
                       const Result<Blob>& result) {
  if (result.ok() && *result != nullptr) {
    loads_.fetch_add(1, std::memory_order_relaxed);
    load_bytes_.fetch_add((*result)->size(), std::memory_order_relaxed);
    for (CacheTier* tier : tiers_) tier->Insert(key, *result);
  } else if (!result.ok()) {
    loads_.fetch_add(1, std::memory_order_relaxed);
    load_errors_.fetch_add(1, std::memory_order_relaxed);
  }
  // The flight ends before its waiters wake: one that looks again must not find it.
  {
    std::lock_guard<std::mutex> lock(mu_);
    in_flight_.erase(key);
  }
  promise.set_value(result);
}

namespace {

// What a loader or taker gives, or an error in place of an exception (an allocation that
// failed): a flight must always land, or its key would wait for good.
template <typename F>
auto Guarded(F&& f, CacheKey key) -> decltype(f()) {
  try {
    return f();
  } catch (const std::exception& e) {
    if constexpr (std::is_same_v<decltype(f()), Blob>) {
      return nullptr;
    } else {
      return Status::ResourceExhausted("loading cache key " + std::to_string(key) + ": " +
                                       e.what());
    }
  }
}

}  // namespace

Result<Blob> TieredCache::Get(CacheKey key, const Loader& load, size_t* served_by,
                              bool looked_up) {
  for (bool counted = !looked_up;; counted = false) {
    if (served_by != nullptr) *served_by = tiers_.size();
    if (Blob blob = FromTiers(key, counted, served_by)) return blob;
    std::promise<Result<Blob>> promise;
    {
      std::unique_lock<std::mutex> lock(mu_);
      auto it = in_flight_.find(key);
      if (it != in_flight_.end()) {
        std::shared_future<Result<Blob>> pending = it->second;
        lock.unlock();
        coalesced_.fetch_add(1, std::memory_order_relaxed);
        Result<Blob> result = pending.get();
        if (result.ok() && *result == nullptr) {
          // A TryGet's flight that found nothing: not a load waited for. Look again (the
          // tiers, then load or wait).
          coalesced_.fetch_sub(1, std::memory_order_relaxed);
          continue;
        }
        return result;
      }
      in_flight_.emplace(key, promise.get_future().share());
    }
    Result<Blob> result = Guarded(load, key);
    Land(key, promise, result);
    return result;
  }
}

std::optional<Blob> TieredCache::TryGet(CacheKey key, const Taker& take, size_t* served_by) {
  if (served_by != nullptr) *served_by = tiers_.size();
  if (Blob blob = FromTiers(key, /*counted=*/true, served_by)) return blob;
  std::promise<Result<Blob>> promise;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (in_flight_.count(key) > 0) return std::nullopt;  // someone loads it: not waited for here
    in_flight_.emplace(key, promise.get_future().share());
  }
  // In flight while `take` runs, so that a Get arriving meanwhile waits for this copy rather
  // than loading the same bytes again.
  Blob taken = Guarded(take, key);
  Land(key, promise, Result<Blob>(taken));
  if (taken == nullptr) return std::nullopt;
  return taken;
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
