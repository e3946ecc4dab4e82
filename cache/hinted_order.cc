#include "cache/hinted_order.h"

#include <algorithm>

namespace mmfs::cache {

HintedOrder::HintedOrder(uint64_t key_space, uint32_t window, uint32_t batch)
    : key_space_(key_space),
      window_(std::max<uint32_t>(window, 1)),
      batch_(std::clamp<uint32_t>(batch, 1, window_)) {}

void HintedOrder::Begin() {
  std::lock_guard<std::mutex> lock(mu_);
  for (uint64_t k : order_) position_of_[k] = kNotInOrder;
  order_.clear();
  ++counters_.orders;
  counters_.positions = 0;
  counters_.cursor = 0;
  counters_.issued_to = 0;
}

std::vector<uint64_t> HintedOrder::Append(const std::vector<uint64_t>& keys) {
  std::lock_guard<std::mutex> lock(mu_);
  if (position_of_.empty() && key_space_ > 0) position_of_.assign(key_space_, kNotInOrder);
  for (uint64_t k : keys) {
    // A key listed twice keeps its first position; positions must fit the 32-bit slots.
    if (k >= key_space_ || position_of_[k] != kNotInOrder || order_.size() >= kNotInOrder) continue;
    position_of_[k] = static_cast<uint32_t>(order_.size());
    order_.push_back(k);
  }
  counters_.positions = order_.size();
  return DueLocked();
}

void HintedOrder::CountUnknown(uint64_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  counters_.unknown += n;
}

std::vector<uint64_t> HintedOrder::OnRead(uint64_t key) {
  std::lock_guard<std::mutex> lock(mu_);
  if (order_.empty()) return {};
  uint32_t pos = key < position_of_.size() ? position_of_[key] : kNotInOrder;
  if (pos == kNotInOrder) {
    ++counters_.off_order_reads;
    return {};
  }
  counters_.cursor = std::max<uint64_t>(counters_.cursor, pos + 1ull);
  return DueLocked();
}

std::vector<uint64_t> HintedOrder::DueLocked() {
  uint64_t until = std::min<uint64_t>(order_.size(), counters_.cursor + window_);
  std::vector<uint64_t> due;
  // Positions the readers already passed are not worth loading any more.
  uint64_t from = std::max(counters_.issued_to, counters_.cursor);
  const bool readers_waiting = counters_.issued_to <= counters_.cursor;
  if (!readers_waiting && until < order_.size() && until < from + batch_) return due;
  for (uint64_t p = from; p < until; ++p) due.push_back(order_[p]);
  counters_.issued_to = std::max(counters_.issued_to, until);
  return due;
}

bool HintedOrder::active() const {
  std::lock_guard<std::mutex> lock(mu_);
  return !order_.empty();
}

HintCounters HintedOrder::Counters() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counters_;
}

}  // namespace mmfs::cache
