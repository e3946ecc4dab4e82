#include "fs/origin/remote_stats.h"

#include <cmath>
#include <limits>

namespace mmfs::origin {

uint64_t RemoteStatsSnapshot::LatencyPercentileUs(double p) const {
  uint64_t total = 0;
  for (uint64_t n : latency) total += n;
  if (total == 0) return 0;
  const auto rank = static_cast<uint64_t>(std::ceil(p / 100.0 * static_cast<double>(total)));
  uint64_t seen = 0;
  for (size_t i = 0; i < latency.size(); ++i) {
    seen += latency[i];
    if (seen >= rank && latency[i] != 0) {
      return i < kBucketBoundsUs.size() ? kBucketBoundsUs[i] : std::numeric_limits<uint64_t>::max();
    }
  }
  return std::numeric_limits<uint64_t>::max();
}

void RemoteStats::NoteRequest(std::chrono::steady_clock::duration took, uint64_t body_bytes) {
  requests_.fetch_add(1, std::memory_order_relaxed);
  bytes_.fetch_add(body_bytes, std::memory_order_relaxed);
  const auto us =
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(took).count());
  size_t bucket = 0;
  while (bucket < RemoteStatsSnapshot::kBucketBoundsUs.size() &&
         us > RemoteStatsSnapshot::kBucketBoundsUs[bucket]) {
    ++bucket;
  }
  latency_[bucket].fetch_add(1, std::memory_order_relaxed);
  latency_sum_us_.fetch_add(us, std::memory_order_relaxed);
}

RemoteStatsSnapshot RemoteStats::Snapshot() const {
  RemoteStatsSnapshot s;
  s.requests = requests_.load(std::memory_order_relaxed);
  s.retries = retries_.load(std::memory_order_relaxed);
  s.bytes = bytes_.load(std::memory_order_relaxed);
  s.errors = errors_.load(std::memory_order_relaxed);
  s.failed_fast = failed_fast_.load(std::memory_order_relaxed);
  s.latency_sum_us = latency_sum_us_.load(std::memory_order_relaxed);
  for (size_t i = 0; i < latency_.size(); ++i) {
    s.latency[i] = latency_[i].load(std::memory_order_relaxed);
  }
  return s;
}

}  // namespace mmfs::origin
