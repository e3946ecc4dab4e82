// PrefetchBuffer: where data loaded ahead of demand waits for its first reader.
//
// Kept apart from the cache tiers on purpose: a prediction may be wrong, so prefetched bytes never
// push out what the tiers' policy chose to keep; they live here, in a small byte-budgeted FIFO,
// until a reader takes them (counted as used) or newer prefetches push them out (wasted).
// Taking an entry removes it: from then on the normal tiers decide whether it stays.
//
// Thread-safety: all methods are thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>

#include "cache/tier.h"

namespace mmfs::cache {

struct PrefetchCounters {
  uint64_t issued = 0;  // blobs put in the buffer
  uint64_t used = 0;    // taken by a reader before being pushed out
  uint64_t wasted = 0;  // pushed out unused
  uint64_t bytes_issued = 0;
  uint64_t bytes_held = 0;
  uint64_t budget = 0;
};

class PrefetchBuffer {
 public:
  explicit PrefetchBuffer(uint64_t budget_bytes) : budget_(budget_bytes) {}

  // Holds `blob` for `key` until taken or pushed out; ignored if larger than the budget.
  void Put(CacheKey key, Blob blob);
  // Removes and returns the blob for `key`, or nullptr.
  Blob Take(CacheKey key);
  bool Contains(CacheKey key) const;
  PrefetchCounters Counters() const;

 private:
  const uint64_t budget_;
  mutable std::mutex mu_;
  std::unordered_map<CacheKey, Blob> blobs_;  // guarded by mu_
  std::deque<CacheKey> order_;  // insertion order; may hold keys already taken; guarded by mu_
  PrefetchCounters counters_;   // guarded by mu_
};

}  // namespace mmfs::cache
