// RemoteStats: what a remote origin did (requests, retries, bytes, errors) and how long its
// requests took, as a fixed-bucket histogram, for the stats to render.
//
// Thread-safety: Note* may be called from any number of threads (relaxed atomics); Snapshot
// reads each counter once, so a snapshot taken while requests run may be a request apart
// between counters.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

namespace mmfs::origin {

struct RemoteStatsSnapshot {
  // Upper bounds of the latency buckets, in microseconds; the last bucket has none.
  static constexpr std::array<uint64_t, 15> kBucketBoundsUs = {
      250,   500,    1000,   2000,   4000,    8000,    16000,  32000,
      64000, 128000, 256000, 512000, 1000000, 2000000, 4000000};
  std::string url;        // where the requests go: the dataset's base URL (no credentials)
  uint64_t requests = 0;  // every request sent, retries included
  uint64_t retries = 0;   // requests sent again after a retryable failure
  uint64_t bytes = 0;     // body bytes received
  uint64_t errors = 0;    // requests that failed for good (after their retries)
  // Reads failed at once, unsent, because their bytes failed for good a moment ago
  // (failed_ranges.h); not in `errors`.
  uint64_t failed_fast = 0;
  std::array<uint64_t, kBucketBoundsUs.size() + 1> latency{};  // requests per bucket
  uint64_t latency_sum_us = 0;  // all requests' times added up (a histogram's sum)

  // The upper bound of the bucket holding the `p`-th percentile (0 < p <= 100) of the latency,
  // in microseconds: 0 with no request, UINT64_MAX in the last bucket.
  uint64_t LatencyPercentileUs(double p) const;
};

class RemoteStats {
 public:
  void NoteRequest(std::chrono::steady_clock::duration took, uint64_t body_bytes);
  void NoteRetry() { retries_.fetch_add(1, std::memory_order_relaxed); }
  void NoteError() { errors_.fetch_add(1, std::memory_order_relaxed); }
  void NoteFailedFast() { failed_fast_.fetch_add(1, std::memory_order_relaxed); }
  RemoteStatsSnapshot Snapshot() const;

 private:
  std::atomic<uint64_t> requests_{0}, retries_{0}, bytes_{0}, errors_{0}, failed_fast_{0},
      latency_sum_us_{0};
  std::array<std::atomic<uint64_t>, RemoteStatsSnapshot::kBucketBoundsUs.size() + 1> latency_{};
};

}  // namespace mmfs::origin
