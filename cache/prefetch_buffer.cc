#include "cache/prefetch_buffer.h"

#include <chrono>

namespace mmfs::cache {

namespace {
// A reader never waits longer than this for a prefetch in flight; it then reads by itself.
constexpr auto kMaxWait = std::chrono::seconds(10);
}  // namespace

const char* PrefetchPatternName(PrefetchPattern p) {
  switch (p) {
    case PrefetchPattern::kSampleMembers: return "sample_members";
    case PrefetchPattern::kSequential: return "sequential";
    case PrefetchPattern::kStrided: return "strided";
    case PrefetchPattern::kHint: return "hint";
    case PrefetchPattern::kCount: break;
  }
  return "unknown";
}

void PrefetchBuffer::Put(CacheKey key, Blob blob, PrefetchPattern pattern) {
  if (blob == nullptr || blob->size() > budget()) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (held_.count(key) > 0) return;
  MakeRoom(blob->size());
  C(pattern).issued++;
  C(pattern).bytes_issued += blob->size();
  bytes_held_ += blob->size();
  order_.push_back(key);
  held_.emplace(key, Held{std::move(blob), pattern});
  // Keys of taken entries linger in order_; trim them so it stays proportional to held_.
  while (order_.size() > 2 * held_.size() + 64 && held_.count(order_.front()) == 0) {
    order_.pop_front();
  }
}

void PrefetchBuffer::MakeRoom(uint64_t incoming) {
  while (bytes_held_ + incoming > budget() && !order_.empty()) {
    CacheKey old = order_.front();
    order_.pop_front();
    auto it = held_.find(old);
    if (it == held_.end()) continue;  // already taken
    bytes_held_ -= it->second.blob->size();
    C(it->second.pattern).wasted++;
    C(it->second.pattern).bytes_wasted += it->second.blob->size();
    if (it->second.claimed) claim_ended_.notify_all();  // a push waiting on it gives up
    held_.erase(it);
  }
}

void PrefetchBuffer::SetBudget(uint64_t budget_bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  budget_.store(budget_bytes, std::memory_order_relaxed);
  MakeRoom(0);
}

Blob PrefetchBuffer::Take(CacheKey key) {
  std::unique_lock<std::mutex> lock(mu_);
  if (loading_.count(key) > 0) {
    bool done = loaded_.wait_for(lock, kMaxWait, [&] { return loading_.count(key) == 0; });
    auto it = held_.find(key);
    if (done && it != held_.end()) C(it->second.pattern).late++;
  }
  return TakeLocked(key);
}

Blob PrefetchBuffer::TakeHeld(CacheKey key, bool* loading) {
  std::lock_guard<std::mutex> lock(mu_);
  *loading = loading_.count(key) > 0;
  return *loading ? nullptr : TakeLocked(key);
}

Blob PrefetchBuffer::TakeLocked(CacheKey key) {
  auto it = held_.find(key);
  if (it == held_.end()) return nullptr;
  Blob blob = std::move(it->second.blob);
  C(it->second.pattern).used++;
  C(it->second.pattern).bytes_used += blob->size();
  bytes_held_ -= blob->size();
  const bool claimed = it->second.claimed;
  held_.erase(it);
  if (claimed) claim_ended_.notify_all();
  return blob;
}

bool PrefetchBuffer::Contains(CacheKey key) const {
  std::lock_guard<std::mutex> lock(mu_);
  return held_.count(key) > 0 || loading_.count(key) > 0;
}

Blob PrefetchBuffer::Claim(CacheKey key, bool wait) {
  std::unique_lock<std::mutex> lock(mu_);
  const auto deadline = std::chrono::steady_clock::now() + kMaxWait;
  for (;;) {
    auto it = held_.find(key);
    if (it == held_.end()) return nullptr;
    if (!it->second.claimed) {
      it->second.claimed = true;
      return it->second.blob;
    }
    if (!wait || claim_ended_.wait_until(lock, deadline) == std::cv_status::timeout) {
      return nullptr;
    }
  }
}

void PrefetchBuffer::ReleaseClaim(CacheKey key) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = held_.find(key);
    if (it == held_.end()) return;
    it->second.claimed = false;
  }
  claim_ended_.notify_all();
}

std::vector<CacheKey> PrefetchBuffer::BeginLoad(const std::vector<CacheKey>& keys) {
  std::vector<CacheKey> fresh;
  std::lock_guard<std::mutex> lock(mu_);
  for (CacheKey k : keys) {
    if (held_.count(k) > 0 || !loading_.insert(k).second) continue;
    fresh.push_back(k);
  }
  return fresh;
}

void PrefetchBuffer::EndLoad(const std::vector<CacheKey>& keys) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (CacheKey k : keys) loading_.erase(k);
  }
  loaded_.notify_all();
}

PrefetchCounters PrefetchBuffer::Counters(PrefetchPattern pattern) const {
  std::lock_guard<std::mutex> lock(mu_);
  return counters_[static_cast<size_t>(pattern)];
}

uint64_t PrefetchBuffer::bytes_held() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_held_;
}

}  // namespace mmfs::cache
