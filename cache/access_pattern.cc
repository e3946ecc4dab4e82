#include "cache/access_pattern.h"

#include <algorithm>
#include <cstdlib>

namespace mmfs::cache {

AccessPatternDetector::AccessPatternDetector(ReadaheadConfig config) : config_(config) {}

std::vector<int64_t> AccessPatternDetector::OnRead(uint64_t stream, int64_t position) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = streams_.find(stream);
  if (it == streams_.end()) {
    if (streams_.size() >= config_.max_streams) {
      streams_.erase(lru_.back());
      lru_.pop_back();
    }
    lru_.push_front(stream);
    it = streams_.emplace(stream, Stream{}).first;
    it->second.lru = lru_.begin();
  } else {
    lru_.splice(lru_.begin(), lru_, it->second.lru);
  }
  Stream& s = it->second;
  std::vector<int64_t> out;
  if (position == s.last) return out;  // another member or chunk of the same sample
  int64_t delta = s.last < 0 ? 0 : position - s.last;
  s.last = position;
  if (delta != 0 && delta == s.stride && std::llabs(delta) <= config_.max_stride) {
    ++s.steps;
  } else {
    // A jump: the run (if any) is over; this may be the first step of a new one.
    s.stride = delta;
    s.steps = delta == 0 ? 0 : 1;
    s.window = 0;
    s.predicted_to = position;
    return out;
  }
  if (s.steps < 2) return out;
  if (s.window == 0) {
    s.window = config_.initial_window;
    ++runs_;
  } else {
    s.window = std::min(s.window * 2, config_.max_window);
  }
  // Issue in batches, as the kernel's async readahead does: top the window up only once half
  // of it has been consumed, so that each prefetch covers many neighbouring samples and becomes
  // one large read (a one-sample step per read would cost the origin as many requests as the
  // demand reads it replaces).
  int64_t ahead = (s.predicted_to - position) / s.stride;
  if (ahead > static_cast<int64_t>(s.window / 2)) return out;
  int64_t horizon = position + s.stride * static_cast<int64_t>(s.window);
  int64_t from = std::max(s.predicted_to, position);
  if (s.stride < 0) from = std::min(s.predicted_to, position);
  for (int64_t p = from + s.stride; s.stride > 0 ? p <= horizon : p >= horizon; p += s.stride) {
    if (p >= 0) out.push_back(p);
  }
  if (!out.empty()) s.predicted_to = out.back();
  return out;
}

uint64_t AccessPatternDetector::runs_detected() const {
  std::lock_guard<std::mutex> lock(mu_);
  return runs_;
}

}  // namespace mmfs::cache
