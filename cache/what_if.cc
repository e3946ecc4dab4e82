#include "cache/what_if.h"

#include <algorithm>
#include <cmath>

namespace mmfs::cache {

namespace {
// splitmix64: spreads entry numbers (consecutive integers) uniformly over 64 bits.
uint64_t Mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
}  // namespace

struct WhatIf::Mini {
  Mini(double f, uint64_t full_bytes, uint64_t scaled_bytes, uint64_t keys, unsigned shards)
      : fraction(f), bytes(full_bytes) {
    for (unsigned i = 0; i < shards; ++i) {
      policies.push_back(std::make_unique<SievePolicy>(scaled_bytes / shards, keys / shards + 1));
    }
  }
  double fraction;
  uint64_t bytes;
  std::vector<std::unique_ptr<SievePolicy>> policies;
  uint64_t hits = 0;
};

WhatIf::WhatIf(uint64_t budget_bytes, uint64_t expected_keys, uint64_t entry_overhead,
               std::vector<double> fractions, size_t max_keys, unsigned shards)
    : budget_(budget_bytes), expected_keys_(std::max<uint64_t>(1, expected_keys)),
      overhead_(entry_overhead) {
  while ((1u << shard_bits_) < shards) ++shard_bits_;
  rate_ = std::min(1.0, static_cast<double>(max_keys) / static_cast<double>(expected_keys_));
  threshold_ = rate_ >= 1.0 ? UINT64_MAX
                            : static_cast<uint64_t>(rate_ * 18446744073709551615.0);
  uint64_t sampled_keys = std::max<uint64_t>(1, static_cast<uint64_t>(
                                                    std::ceil(rate_ * expected_keys_)));
  for (double f : fractions) {
    auto full = static_cast<uint64_t>(f * static_cast<double>(budget_bytes));
    auto scaled = static_cast<uint64_t>(f * static_cast<double>(budget_bytes) * rate_);
    minis_.push_back(std::make_unique<Mini>(f, full, scaled, sampled_keys, 1u << shard_bits_));
  }
}

WhatIf::~WhatIf() = default;

void WhatIf::Record(CacheKey key, uint64_t size) {
  if (Mix(key) > threshold_) return;
  std::lock_guard<std::mutex> lock(mu_);
  ++reads_;
  Sampled& s = sampled_[key];
  s.size = size;
  s.last = reads_;
  std::vector<uint64_t> evicted;
  // The same assignment of keys to shards as RamTier's.
  size_t shard = shard_bits_ == 0 ? 0 : (key * 0x9E3779B97F4A7C15ull) >> (64 - shard_bits_);
  for (auto& m : minis_) {
    SievePolicy& p = *m->policies[shard];
    if (p.Access(key)) {
      ++m->hits;
    } else {
      evicted.clear();
      p.Admit(key, size + overhead_, &evicted);
    }
  }
}

std::vector<WhatIf::Point> WhatIf::Curve() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Point> out;
  for (const auto& m : minis_) {
    Point p;
    p.fraction = m->fraction;
    p.bytes = m->bytes;
    p.hit_ratio = reads_ > 0 ? static_cast<double>(m->hits) / static_cast<double>(reads_) : 0;
    out.push_back(p);
  }
  return out;
}

uint64_t WhatIf::WorkingSetBytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  // The last epoch: as many reads as the dataset has files, in sampled reads.
  auto window = static_cast<uint64_t>(std::ceil(rate_ * static_cast<double>(expected_keys_)));
  uint64_t since = reads_ > window ? reads_ - window : 0;
  double bytes = 0;
  for (const auto& [key, s] : sampled_) {
    if (s.last > since) bytes += static_cast<double>(s.size);
  }
  return static_cast<uint64_t>(bytes / rate_);
}

uint64_t WhatIf::sampled_reads() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reads_;
}

}  // namespace mmfs::cache
