// The interface every cache tier implements, and the blob type the tiers store.
//
// The cache knows keys and byte blobs, nothing of FUSE or LMDB. A key names one file of one
// dataset; blobs are immutable and shared, so a tier can hand out a blob while evicting it.
//
// Each tier says what role it plays in the stack (TierRole), and the code that needs "the SSD
// tier" or "the shared tier" asks the stack by role, not by its position or name: a new tier is
// one class and one line where the stack is built, not an edit of every place that counted tiers.
//
// Thread-safety: implementations must be safe for concurrent calls from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace mmfs::cache {

using CacheKey = uint64_t;
using Blob = std::shared_ptr<const std::string>;

struct TierCounters {
  uint64_t lookups = 0;
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t inserts = 0;
  uint64_t rejected = 0;   // inserts not admitted (too large, or the tier is failing)
  uint64_t evictions = 0;
  uint64_t bytes_used = 0;
  uint64_t bytes_budget = 0;
  uint64_t entries = 0;
  uint64_t corrupt = 0;       // entries found damaged on read (served as misses, removed)
  uint64_t read_errors = 0;   // entries the disk failed to read (served as misses, removed)
  uint64_t write_errors = 0;  // failed writes (the tier pauses admission for a while)
  uint64_t dropped = 0;       // admitted inserts dropped because the write queue was full
  bool admission_paused = false;  // disk nearly full or failing: nothing new is admitted
  std::string problem;  // why inserts are not being stored (AdmissionProblem), or ""
};

// What a tier is for, which decides how the rest of mmfs uses it.
enum class TierRole {
  kMemory,     // the first, hot tier (RAM): looked up first, promoted into
  kLocalDisk,  // a durable tier on this host: the fill's target, extents' neighbours, the SSD
               // what-if curve
  kShared,     // a tier shared by the job's hosts: asked per sample or batch, not per key
};

class CacheTier {
 public:
  virtual ~CacheTier() = default;
  virtual std::string_view name() const = 0;
  virtual TierRole role() const = 0;
  // The blob stored under `key`, or nullptr.
  virtual Blob Lookup(CacheKey key) = 0;
  // Stores `blob` if the tier admits it; may evict others to stay within the byte budget.
  virtual void Insert(CacheKey key, Blob blob) = 0;
  virtual TierCounters Counters() const = 0;
  // Whether `key` is resident; not counted as a lookup, not an access for the policy.
  virtual bool Contains(CacheKey /*key*/) const { return false; }
  // Drops `key` if held (mmfs warmup --evict).
  virtual void Erase(CacheKey /*key*/) {}
  // The largest blob the tier could admit at all (its admission may still say no): the reader
  // does not load a file whole for a tier that can never keep it.
  virtual uint64_t MaxEntryBytes() const { return UINT64_MAX; }
  // Bytes admitted but not yet stored (tiers that write behind: SSD, cluster); a bulk loader
  // (warm-up) waits with Flush when they pile up, rather than have the tier drop inserts.
  virtual uint64_t pending_bytes() const { return 0; }
  // Waits until every insert queued so far is stored.
  virtual void Flush() {}
  // Why inserts are not being stored, when the cause is not the budget (a disk that is full or
  // failing, a directory that is gone); "" when there is none.
  virtual std::string AdmissionProblem() const { return ""; }
  // Admits from now on only keys below `bound`, and every key with the top bit set (a view's
  // files): the share of a dataset a fill keeps when the whole does not fit, so that the other
  // files read each epoch never push it out (fs/readahead/filler.h). kAdmitAll: every key.
  static constexpr CacheKey kAdmitAll = ~CacheKey{0};
  virtual void SetAdmitBelow(CacheKey /*bound*/) {}
  // Whether a tier with that bound admits `key`.
  static bool AdmittedBelow(CacheKey key, CacheKey bound) { return (key >> 63) != 0 || key < bound; }
};

}  // namespace mmfs::cache
