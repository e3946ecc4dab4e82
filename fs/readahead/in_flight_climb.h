// InFlightClimb: how many requests the fill keeps in flight, found by climbing on the link's
// throughput. The fill (filler.h) measures each window's throughput and how many requests it
// offered the store on average; this decides the next target. Kept apart from the fill's
// threads so that the rule is a plain function of its inputs, testable window by window.
//
// The rule: grow by half (at least one) while a window's rate beats the best seen by a tenth;
// step back by one when two windows in a row fall well below the best (under 0.6 of it: one
// alone is often a neighbour's burst on a shared link); otherwise hold. The best fades by 5% a
// window, so that a lucky window does not hold the fill back for good and a step back is
// followed by new probes upward. A window in which the store was offered under three quarters
// of the target (workers reading the cluster or waiting for other hosts, places given to
// demand misses) says nothing about whether the target suits the link: it is not judged.
//
// Thread-safety: a plain value; the fill calls it under its own lock.
#pragma once

namespace mmfs::fs {

class InFlightClimb {
 public:
  // Starts at `first` requests (within [1, max]); never goes above `max` (at least 1).
  InFlightClimb(unsigned first, unsigned max);

  // One window: `bytes_per_second` moved, `offered` requests offered to the store on average.
  void Window(double bytes_per_second, double offered);

  unsigned target() const { return target_; }
  double best_rate() const { return best_rate_; }

  static constexpr double kRise = 1.1;        // a rate above best * kRise grows the target
  static constexpr double kFall = 0.6;        // below best * kFall counts towards a step back
  static constexpr double kFade = 0.95;       // the best rate, per window
  static constexpr double kJudged = 0.75;     // offered at least target * kJudged to judge
  static constexpr int kWindowsToStepBack = 2;

 private:
  unsigned max_;
  unsigned target_;
  double best_rate_ = 0;
  int windows_below_ = 0;  // windows in a row well below the best
};

}  // namespace mmfs::fs
