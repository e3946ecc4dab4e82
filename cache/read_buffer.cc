#include "cache/read_buffer.h"

#include <vector>

namespace mmfs::cache {

std::optional<ReadBuffer::Span> ReadBuffer::Find(CacheKey key, uint64_t offset, uint64_t len) {
  if (empty_.load(std::memory_order_relaxed)) return std::nullopt;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = held_.find(key);
  if (it == held_.end()) return std::nullopt;
  const Span& s = it->second.span;
  if (offset < s.base || offset + len > s.base + s.blob->size()) return std::nullopt;
  lru_.splice(lru_.begin(), lru_, it->second.lru);
  ++hits_;
  return s;
}

void ReadBuffer::EraseLocked(std::unordered_map<CacheKey, Held>::iterator it,
                             std::vector<Blob>* freed) {
  bytes_held_ -= it->second.span.blob->size();
  lru_.erase(it->second.lru);
  freed->push_back(std::move(it->second.span.blob));
  held_.erase(it);
  empty_.store(held_.empty(), std::memory_order_relaxed);
}

void ReadBuffer::MakeRoom(uint64_t incoming, std::vector<Blob>* freed) {
  while (!lru_.empty() && bytes_held_ + incoming > budget()) {
    EraseLocked(held_.find(lru_.back()), freed);
    ++evictions_;
  }
}

void ReadBuffer::Put(CacheKey key, uint64_t base, Blob blob) {
  if (blob == nullptr || blob->empty() || blob->size() > budget()) return;
  std::vector<Blob> freed;  // released after the lock: freeing large blobs takes time
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = held_.find(key); it != held_.end()) {
    if (it->second.span.blob == blob && it->second.span.base == base) return;  // racing READs
    EraseLocked(it, &freed);
  }
  MakeRoom(blob->size(), &freed);
  lru_.push_front(key);
  bytes_held_ += blob->size();
  held_.emplace(key, Held{Span{std::move(blob), base}, lru_.begin()});
  ++inserts_;
  empty_.store(false, std::memory_order_relaxed);
}

void ReadBuffer::Erase(CacheKey key) {
  std::vector<Blob> freed;
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = held_.find(key); it != held_.end()) EraseLocked(it, &freed);
}

void ReadBuffer::SetBudget(uint64_t budget_bytes) {
  std::vector<Blob> freed;
  std::lock_guard<std::mutex> lock(mu_);
  budget_.store(budget_bytes, std::memory_order_relaxed);
  MakeRoom(0, &freed);
}

ReadBufferCounters ReadBuffer::Counters() const {
  std::lock_guard<std::mutex> lock(mu_);
  ReadBufferCounters c;
  c.hits = hits_;
  c.inserts = inserts_;
  c.evictions = evictions_;
  c.bytes_held = bytes_held_;
  c.budget = budget();
  return c;
}

}  // namespace mmfs::cache
