#include "fs/readahead/in_flight_climb.h"

#include <algorithm>

namespace mmfs::fs {

InFlightClimb::InFlightClimb(unsigned first, unsigned max)
    : max_(std::max(1u, max)), target_(std::clamp(first, 1u, max_)) {}

void InFlightClimb::Window(double bytes_per_second, double offered) {
  best_rate_ *= kFade;
  if (offered < kJudged * static_cast<double>(target_)) return;
  if (bytes_per_second > best_rate_ * kRise) {
    best_rate_ = bytes_per_second;
    windows_below_ = 0;
    target_ = std::min(max_, target_ + std::max(1u, target_ / 2));
  } else if (bytes_per_second < best_rate_ * kFall) {
    if (++windows_below_ >= kWindowsToStepBack && target_ > 1) {
      --target_;
      windows_below_ = 0;
    }
  } else {
    windows_below_ = 0;
  }
}

}  // namespace mmfs::fs
