// PrefetchBuffer: where data loaded ahead of demand waits for its first reader.
//
// Kept apart from the cache tiers on purpose: a prediction may be wrong, so prefetched bytes never
// push out what the tiers' policy chose to keep; they live here, in a small byte-budgeted FIFO,
// until a reader takes them (counted as used) or newer prefetches push them out (wasted).
// Taking an entry removes it: from then on the normal tiers decide whether it stays. A reader
// asking for a key whose prefetch is still loading waits for it (counted as late) rather than
// reading the same bytes a second time.
//
// Thread-safety: all methods are thread-safe.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cache/tier.h"

namespace mmfs::cache {

// Why a blob was prefetched.
enum class PrefetchPattern : int { kSampleMembers = 0, kSequential, kStrided, kHint, kCount };
const char* PrefetchPatternName(PrefetchPattern p);

struct PrefetchCounters {
  uint64_t issued = 0;  // blobs put in the buffer
  uint64_t used = 0;    // taken by a reader before being pushed out
  uint64_t wasted = 0;  // pushed out unused
  uint64_t late = 0;    // a reader arrived while the prefetch was still loading
  uint64_t bytes_issued = 0;
  uint64_t bytes_used = 0;
  uint64_t bytes_wasted = 0;
};

class PrefetchBuffer {
 public:
  explicit PrefetchBuffer(uint64_t budget_bytes) : budget_(budget_bytes) {}

  // Holds `blob` for `key` until taken or pushed out; ignored if larger than the budget.
  void Put(CacheKey key, Blob blob, PrefetchPattern pattern);
  // Removes and returns the blob for `key`, waiting if it is being loaded; nullptr if absent.
  Blob Take(CacheKey key);
  // The same without waiting: nullptr if absent or still loading (then `*loading` is set, and
  // the caller waits for it elsewhere, off a thread that must stay free).
  Blob TakeHeld(CacheKey key, bool* loading);
  bool Contains(CacheKey key) const;  // held or loading
  // Pushing a blob to its reader ahead of the request (fs/fuse/fuse_ops.cc): the blob for
  // `key` if it is held and no other push has claimed it, now claimed; nullptr otherwise. With
  // `wait`, a claim held by another push is waited for (bounded) until the blob is taken or
  // released. Counts nothing: the pusher then Takes the blob, or releases the claim.
  Blob Claim(CacheKey key, bool wait);
  void ReleaseClaim(CacheKey key);

  // Prefetch loads announce the keys they will Put (or give up on) so readers can wait.
  // Returns the keys that were not already held or loading (the ones the caller should load).
  std::vector<CacheKey> BeginLoad(const std::vector<CacheKey>& keys);
  void EndLoad(const std::vector<CacheKey>& keys);

  PrefetchCounters Counters(PrefetchPattern pattern) const;
  uint64_t bytes_held() const;
  uint64_t budget() const { return budget_.load(std::memory_order_relaxed); }
  // Changes the budget (memory pressure); shrinking pushes the oldest blobs out (wasted).
  void SetBudget(uint64_t budget_bytes);

 private:
  struct Held {
    Blob blob;
    PrefetchPattern pattern;
    bool claimed = false;
  };
  PrefetchCounters& C(PrefetchPattern p) { return counters_[static_cast<size_t>(p)]; }
  // Pushes the oldest blobs out until `incoming` more bytes fit. REQUIRES: mu_ held.
  void MakeRoom(uint64_t incoming);
  // Removes and returns the blob held for `key`, counted used; nullptr if none. REQUIRES: mu_.
  Blob TakeLocked(CacheKey key);

  std::atomic<uint64_t> budget_;
  mutable std::mutex mu_;
  std::condition_variable loaded_;
  std::condition_variable claim_ended_;
  std::unordered_map<CacheKey, Held> held_;  // guarded by mu_
  std::unordered_set<CacheKey> loading_;     // guarded by mu_
  std::deque<CacheKey> order_;  // insertion order; may hold keys already taken; guarded by mu_
  uint64_t bytes_held_ = 0;     // guarded by mu_
  std::array<PrefetchCounters, static_cast<size_t>(PrefetchPattern::kCount)> counters_{};
};

}  // namespace mmfs::cache
