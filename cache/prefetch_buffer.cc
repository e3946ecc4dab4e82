#include "cache/prefetch_buffer.h"

namespace mmfs::cache {

void PrefetchBuffer::Put(CacheKey key, Blob blob) {
  if (blob == nullptr || blob->size() > budget_) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (blobs_.count(key) > 0) return;
  while (counters_.bytes_held + blob->size() > budget_ && !order_.empty()) {
    CacheKey old = order_.front();
    order_.pop_front();
    auto it = blobs_.find(old);
    if (it == blobs_.end()) continue;  // already taken
    counters_.bytes_held -= it->second->size();
    counters_.wasted++;
    blobs_.erase(it);
  }
  counters_.issued++;
  counters_.bytes_issued += blob->size();
  counters_.bytes_held += blob->size();
  order_.push_back(key);
  blobs_.emplace(key, std::move(blob));
  // Keys of taken entries linger in order_; trim them so it stays proportional to blobs_.
  while (order_.size() > 2 * blobs_.size() + 64 && blobs_.count(order_.front()) == 0) {
    order_.pop_front();
  }
}

Blob PrefetchBuffer::Take(CacheKey key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = blobs_.find(key);
  if (it == blobs_.end()) return nullptr;
  Blob blob = std::move(it->second);
  blobs_.erase(it);
  counters_.bytes_held -= blob->size();
  counters_.used++;
  return blob;
}

bool PrefetchBuffer::Contains(CacheKey key) const {
  std::lock_guard<std::mutex> lock(mu_);
  return blobs_.count(key) > 0;
}

PrefetchCounters PrefetchBuffer::Counters() const {
  std::lock_guard<std::mutex> lock(mu_);
  PrefetchCounters c = counters_;
  c.budget = budget_;
  return c;
}

}  // namespace mmfs::cache
