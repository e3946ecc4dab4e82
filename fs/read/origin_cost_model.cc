#include "fs/read/origin_cost_model.h"

#include <algorithm>
#include <cmath>

namespace mmfs::fs {

namespace {
constexpr double kMiB = 1024.0 * 1024.0;
}

OriginCostModel::OriginCostModel(OriginCostOptions options)
    : options_(options), decay_(std::pow(0.5, 1.0 / std::max(1.0, options.half_life))) {}

void OriginCostModel::Observe(uint64_t bytes, double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds)) return;
  // In MiB, so that the sums stay well inside a double's precision.
  const double x = static_cast<double>(bytes) / kMiB;
  std::lock_guard<std::mutex> lock(mu_);
  w_ = w_ * decay_ + 1;
  x_ = x_ * decay_ + x;
  y_ = y_ * decay_ + seconds;
  xx_ = xx_ * decay_ + x * x;
  xy_ = xy_ * decay_ + x * seconds;
  yy_ = yy_ * decay_ + seconds * seconds;
  max_x_ = std::max(x, max_x_ * decay_);
  ++reads_;
}

OriginCostEstimate OriginCostModel::Estimate() const {
  OriginCostEstimate e;
  e.extent_bytes = options_.min_extent;
  double w, x, y, xx, xy, yy, max_x;
  {
    std::lock_guard<std::mutex> lock(mu_);
    e.reads = reads_;
    w = w_, x = x_, y = y_, xx = xx_, xy = xy_, yy = yy_, max_x = max_x_;
  }
  if (e.reads < options_.min_reads || w <= 0) return e;
  const double mean_x = x / w, mean_y = y / w;
  e.mean_seconds = mean_y;
  const double var_x = xx / w - mean_x * mean_x;    // MiB^2
  const double cov = xy / w - mean_x * mean_y;       // MiB x seconds
  // Reads of one size cannot tell latency from bandwidth.
  if (!(var_x > 1e-12) || !(mean_y > 0)) return e;
  const double seconds_per_mib = cov / var_x;
  // The slope's standard error, from what the line leaves unexplained (the weights' sum stands
  // for the number of reads): a few large reads among many small ones are enough leverage.
  const double var_y = yy / w - mean_y * mean_y;
  const double unexplained = std::max(0.0, var_y - cov * seconds_per_mib);
  const double slope_error = std::sqrt(unexplained / (w * var_x));
  const bool slope_seen = seconds_per_mib > 3 * slope_error && cov > 0;
  if (!slope_seen) {
    // No slope: flat if even its upper bound would make the largest read's transfer under a
    // tenth of a request; else not known yet (too little spread for the noise).
    // A request of a millisecond or more is expensive whatever the bandwidth (a disk's seek; an
    // IOPS-throttled volume, whose throttle answers in bursts, so that single reads' times say
    // little): treated as flat too, so that larger reads are tried and show the slope if any.
    const double transfer_bound = (std::abs(seconds_per_mib) + 3 * slope_error) * max_x;
    // Times that fall as reads grow (beyond noise and rounding): no origin model fits.
    const bool falling = seconds_per_mib * max_x < -(3 * slope_error * max_x + 0.01 * mean_y);
    if (falling ||
        (transfer_bound > 0.1 * mean_y && mean_y < options_.expensive_request_seconds)) {
      return e;
    }
    // Flat: every read so far cost a request and no transfer that can be told from noise.
    e.known = true;
    e.latency_bound = true;
    e.latency_seconds = mean_y;
    // Bytes over all the time they took, latency included: a lower bound of the bandwidth (a
    // burst's best read would overstate it, and make every extent look as if it paid).
    e.bandwidth_bytes_per_second = y > 0 ? x / y * kMiB : 0;
    uint64_t extent = static_cast<uint64_t>(
        std::clamp(2 * max_x * kMiB, static_cast<double>(options_.min_extent),
                   static_cast<double>(options_.max_extent)));
    if (options_.align > 0) extent -= extent % options_.align;
    e.extent_bytes = std::max(extent, options_.min_extent);
    return e;
  }
  const double latency = mean_y - seconds_per_mib * mean_x;
  e.bandwidth_bytes_per_second = kMiB / seconds_per_mib;
  // Noise can put the intercept below zero on a fast origin: then requests cost nothing worth
  // amortizing.
  e.latency_seconds = std::max(0.0, latency);
  e.known = true;
  const double ideal = e.bandwidth_bytes_per_second * e.latency_seconds;
  uint64_t extent = static_cast<uint64_t>(
      std::clamp(ideal, static_cast<double>(options_.min_extent),
                 static_cast<double>(options_.max_extent)));
  if (options_.align > 0) extent -= extent % options_.align;
  e.extent_bytes = std::max(extent, options_.min_extent);
  return e;
}

}  // namespace mmfs::fs
