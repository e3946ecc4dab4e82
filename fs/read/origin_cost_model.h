// OriginCostModel: what one read of the origin costs, learnt from the daemon's own reads, and the
// read size that pays on it (used by the extent plan, fs/read/extent_plan.h).
//
// Each origin read is an observation (bytes, seconds). The model fits seconds = latency +
// bytes / bandwidth by least squares over the recent reads (weights halve every `half_life`
// reads, so it follows an origin that changes: a volume's burst credits running out, a cache in
// front of it warming up). From the two it derives the extent that pays: bandwidth x latency
// bytes, the size at which the transfer costs as long as the request itself, clamped to
// [min_extent, max_extent] and rounded down to a multiple of `align`. A fast local origin (tens
// of microseconds a request) gets the minimum; a hard disk (5 ms, 200 MB/s) about 1 MiB; an
// object store (20 ms, 400 MB/s) the maximum.
//
// The estimate is `known` once the slope is plain: more than three standard errors above zero
// (the error from what the fitted line leaves unexplained, so a few large reads among many
// small ones are leverage enough). Same-sized reads (a dataset of equal samples read one at a
// time), too few reads or times that fall as reads grow are not known, and nothing should
// depend on them.
//
// An origin whose reads all take the same time whatever their size (an IOPS-throttled volume,
// a disk seeking for every small read) shows no slope to fit. When even the slope's upper bound
// (slope + 3 standard errors) makes the largest read's transfer under a tenth of a request, or
// when requests take a millisecond or more on average (an IOPS throttle answers in bursts, so
// that single reads' times are mostly noise: 0.1 ms or 300 ms at 100 IOPS), the estimate is
// `latency_bound`: the latency is the mean time, the bandwidth the bytes read over the time
// they took (a lower bound), and the extent twice the largest read seen, so that reads of that
// size, once made, show where the transfer starts to count.
//
// Thread-safety: all methods are thread-safe (one mutex, taken once per origin read).
#pragma once

#include <cstdint>
#include <mutex>

namespace mmfs::fs {

struct OriginCostOptions {
  double half_life = 512;            // reads after which an observation's weight has halved
  uint64_t min_extent = 64ull << 10;
  uint64_t max_extent = 8ull << 20;
  uint64_t align = 64ull << 10;
  uint64_t min_reads = 16;           // observations before the estimate can be known
  // Without a slope in sight, a mean request this slow is latency-bound all the same.
  double expensive_request_seconds = 0.001;
};

struct OriginCostEstimate {
  bool known = false;
  bool latency_bound = false;         // no slope seen yet: the bandwidth is a lower bound
  double latency_seconds = 0;         // per request
  double bandwidth_bytes_per_second = 0;
  uint64_t extent_bytes = 0;          // the read size that pays (min_extent while not known)
  uint64_t reads = 0;                 // observations so far
  double mean_seconds = 0;            // a read's mean time (set once there are min_reads)
};

class OriginCostModel {
 public:
  explicit OriginCostModel(OriginCostOptions options = {});

  // One origin read of `bytes` that took `seconds`, end to end.
  void Observe(uint64_t bytes, double seconds);
  OriginCostEstimate Estimate() const;

 private:
  const OriginCostOptions options_;
  const double decay_;  // per observation: 0.5^(1 / half_life)
  mutable std::mutex mu_;
  // Decayed sums over the observations (x = MiB read, y = seconds), guarded by mu_.
  double w_ = 0, x_ = 0, y_ = 0, xx_ = 0, xy_ = 0, yy_ = 0;
  double max_x_ = 0;  // the largest read seen (MiB), decayed like the sums
  uint64_t reads_ = 0;
};

}  // namespace mmfs::fs
