// ReadBuffer: verified bytes of files that no cache tier keeps, held while their reader is
// still working through them.
//
// The kernel asks for a file in READs of at most the mount's read-ahead (1 MiB), so a 50 MiB
// file takes 50 READs. A file the tiers keep is loaded once and every READ is served from the
// tier; one they will not keep (larger than the RAM tier admits, or refused by its admission
// policy) would be loaded again for every READ. This buffer holds such a file (or, for a file
// too large to hold, the span of it that was read while checking its checksum) so that each of
// its bytes is read from the origin about once per pass, whatever the tiers' sizes.
//
// It is not a cache tier: it admits without a policy, evicts the least recently used span, and
// holds only files read in more than one READ. Its budget is part of the daemon's memory budget
// and shrinks under memory pressure (SetBudget).
//
// Ownership: spans are shared blobs; a reader keeps its blob alive after eviction.
// Thread-safety: all methods are thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "cache/tier.h"

namespace mmfs::cache {

struct ReadBufferCounters {
  uint64_t hits = 0;       // READs answered from a held span
  uint64_t inserts = 0;    // spans put in
  uint64_t evictions = 0;  // spans pushed out by newer ones or a smaller budget
  uint64_t bytes_held = 0;
  uint64_t budget = 0;
};

class ReadBuffer {
 public:
  // Bytes [base, base + blob->size()) of one file.
  struct Span {
    Blob blob;
    uint64_t base = 0;
  };

  explicit ReadBuffer(uint64_t budget_bytes) : budget_(budget_bytes) {}

  // The span held for `key` if it covers [offset, offset + len); counted as a hit.
  std::optional<Span> Find(CacheKey key, uint64_t offset, uint64_t len);
  // Holds `blob` as bytes [base, ...) of `key` (replacing what was held for it), pushing out
  // the least recently used spans to stay within the budget; ignored if larger than the budget.
  void Put(CacheKey key, uint64_t base, Blob blob);
  void Erase(CacheKey key);
  // Changes the budget; shrinking evicts at once.
  void SetBudget(uint64_t budget_bytes);
  uint64_t budget() const { return budget_.load(std::memory_order_relaxed); }
  ReadBufferCounters Counters() const;

 private:
  struct Held {
    Span span;
    std::list<CacheKey>::iterator lru;  // position in lru_
  };
  // Evicts least recently used spans until `incoming` more bytes fit. REQUIRES: mu_ held.
  void MakeRoom(uint64_t incoming, std::vector<Blob>* freed);
  void EraseLocked(std::unordered_map<CacheKey, Held>::iterator it, std::vector<Blob>* freed);

  std::atomic<uint64_t> budget_;
  mutable std::mutex mu_;
  std::unordered_map<CacheKey, Held> held_;  // guarded by mu_
  std::list<CacheKey> lru_;                  // most recent first; guarded by mu_
  uint64_t bytes_held_ = 0;                  // guarded by mu_
  uint64_t hits_ = 0, inserts_ = 0, evictions_ = 0;  // guarded by mu_
  // Whether anything is held, read without the lock: most READs are of files that never come here.
  std::atomic<bool> empty_{true};
};

}  // namespace mmfs::cache
