#include "fs/origin/failed_ranges.h"

#include <cstdio>
#include <string>

namespace mmfs::origin {

void FailedRanges::Note(ShardRef ref, uint64_t offset, uint64_t len, const Status& why,
                        Clock::time_point now) {
  if (hold_ <= Clock::duration::zero() || len == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  while (!failures_.empty() &&
         (failures_.size() >= kMaxRanges || now - failures_.front().when >= hold_)) {
    failures_.pop_front();
  }
  failures_.push_back(Failure{ref, offset, offset + len, why, now});
}

std::optional<Status> FailedRanges::Find(ShardRef ref, uint64_t offset, uint64_t len,
                                         Clock::time_point now) const {
  if (len == 0) return std::nullopt;
  const uint64_t end = offset + len;
  std::lock_guard<std::mutex> lock(mu_);
  // Newest first: the freshest failure says the most.
  for (auto it = failures_.rbegin(); it != failures_.rend(); ++it) {
    if (now - it->when >= hold_) break;  // older ones have expired too
    if (it->ref != ref || it->end <= offset || end <= it->offset) continue;
    const double ago = std::chrono::duration<double>(now - it->when).count();
    const double hold = std::chrono::duration<double>(hold_).count();
    char when[96];
    std::snprintf(when, sizeof when, " (failed %.1f s ago; these bytes are asked for again %.1f s "
                  "after a failure)", ago, hold);
    return it->why.WithNote(when);
  }
  return std::nullopt;
}

}  // namespace mmfs::origin
