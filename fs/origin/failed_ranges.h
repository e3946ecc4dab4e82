// FailedRanges: the shard ranges whose reads failed for good a moment ago, remembered for a short
// hold so that a read of the same bytes fails at once with the same error instead of asking a
// failing store for another whole retry budget.
//
// Why: after a READ fails, the kernel sends it again (its readahead failed, the reader's own page
// is still wanted), and a failed extent read is read again as the sample alone; each would wait
// out the budget again, and a READ would fail in twice its bound or more. Other readers of the
// same bytes in the meantime fail as fast, so a store that is down is not asked once per reader.
// Not sticky: an entry is forgotten after the hold (a few seconds), and a read that does not
// overlap a remembered range is tried as usual, so reads go through again once the store is back.
//
// Bounded: at most kMaxRanges are kept; the oldest go first.
// Thread-safety: all methods are thread-safe (one mutex); time is passed in, for tests.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>

#include "base/status.h"
#include "fs/origin/origin.h"

namespace mmfs::origin {

class FailedRanges {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr size_t kMaxRanges = 1024;

  explicit FailedRanges(Clock::duration hold) : hold_(hold) {}

  // The read of [offset, offset + len) of `ref` failed for good at `now` with `why`.
  void Note(ShardRef ref, uint64_t offset, uint64_t len, const Status& why, Clock::time_point now);
  // The failure of a remembered range of `ref` overlapping [offset, offset + len), saying how
  // long ago it was; nullopt when there is none still held at `now`.
  std::optional<Status> Find(ShardRef ref, uint64_t offset, uint64_t len,
                             Clock::time_point now) const;
  Clock::duration hold() const { return hold_; }

 private:
  struct Failure {
    ShardRef ref;
    uint64_t offset = 0, end = 0;
    Status why;
    Clock::time_point when;
  };
  const Clock::duration hold_;
  mutable std::mutex mu_;
  std::deque<Failure> failures_;  // oldest first; guarded by mu_
};

}  // namespace mmfs::origin
