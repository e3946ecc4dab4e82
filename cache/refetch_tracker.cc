#include "cache/refetch_tracker.h"

namespace mmfs::cache {

RefetchTracker::RefetchTracker(uint64_t keys)
    : keys_(keys), state_(keys > 0 ? std::make_unique<std::atomic<uint8_t>[]>(keys) : nullptr) {}

void RefetchTracker::NoteFetch(uint64_t key, uint64_t bytes) {
  if (key >= keys_) return;
  if (state_[key].exchange(kFetched, std::memory_order_relaxed) == kFetched) {
    files_.fetch_add(1, std::memory_order_relaxed);
    bytes_.fetch_add(bytes, std::memory_order_relaxed);
  }
}

void RefetchTracker::NoteDelivered(uint64_t key) {
  if (key < keys_) state_[key].store(kDelivered, std::memory_order_relaxed);
}

RefetchCounters RefetchTracker::Counters() const {
  return {files_.load(std::memory_order_relaxed), bytes_.load(std::memory_order_relaxed)};
}

}  // namespace mmfs::cache
