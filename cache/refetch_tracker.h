// RefetchTracker: counts origin re-reads, files fetched from the origin again before the bytes
// of their previous fetch reached a reader.
//
// Bytes the daemon fetched once should not be fetched again before they are used: a re-read
// means a copy was lost on the way (a prefetched file pushed out of the buffer before its reader
// came, a sample member dropped, a file read in several READs loaded again for each because
// neither the RAM tier nor the read buffer kept it, a tier or buffer shrunk by the memory
// governor in between). Per file one state: fetched and not yet delivered, or delivered (served
// to its end by a READ, or pushed into the page cache). A fetch of a file still in the first
// state is a re-read. A file delivered and fetched again is not: that is the next pass, or the
// kernel dropping pages it had (which the daemon cannot tell apart), or a file the RAM tier
// would not keep, whose later fetches the hit ratio already shows.
//
// Memory: one byte per key (1 MB per million files), allocated at construction.
// Thread-safety: all methods are thread-safe (relaxed atomics; the counts are statistics).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace mmfs::cache {

struct RefetchCounters {
  uint64_t files = 0;  // fetches that were re-reads
  uint64_t bytes = 0;  // their bytes
};

class RefetchTracker {
 public:
  // Keys are in [0, keys).
  explicit RefetchTracker(uint64_t keys);

  // `key`'s `bytes` were fetched from the origin (and passed their check).
  void NoteFetch(uint64_t key, uint64_t bytes);
  // `key` reached a reader: served to its end, or pushed into the page cache.
  void NoteDelivered(uint64_t key);
  RefetchCounters Counters() const;

 private:
  enum State : uint8_t { kNone = 0, kFetched = 1, kDelivered = 2 };
  const uint64_t keys_;
  std::unique_ptr<std::atomic<uint8_t>[]> state_;
  std::atomic<uint64_t> files_{0};
  std::atomic<uint64_t> bytes_{0};
};

}  // namespace mmfs::cache
