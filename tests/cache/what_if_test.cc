// The what-if curve against an exact simulation of the same policy, on synthetic traces.

#include "cache/what_if.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

namespace mmfs::cache {
namespace {

constexpr uint64_t kKeys = 20000;
constexpr uint64_t kOverhead = 96;

struct Access {
  CacheKey key;
  uint64_t size;
};

std::vector<uint64_t> Sizes() {
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<uint64_t> d(500, 5000);
  std::vector<uint64_t> s(kKeys);
  for (auto& x : s) x = d(rng);
  return s;
}

std::vector<Access> EpochTrace(int epochs) {
  auto sizes = Sizes();
  std::vector<CacheKey> order(kKeys);
  for (CacheKey k = 0; k < kKeys; ++k) order[k] = k;
  std::mt19937_64 rng(11);
  std::vector<Access> t;
  for (int e = 0; e < epochs; ++e) {
    std::shuffle(order.begin(), order.end(), rng);
    for (CacheKey k : order) t.push_back({k, sizes[k]});
  }
  return t;
}

std::vector<Access> ZipfTrace(size_t n, double s) {
  auto sizes = Sizes();
  std::vector<double> cdf(kKeys);
  double sum = 0;
  for (uint64_t i = 0; i < kKeys; ++i) cdf[i] = (sum += 1.0 / std::pow(i + 1.0, s));
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(0, sum);
  std::vector<Access> t;
  for (size_t i = 0; i < n; ++i) {
    auto k = static_cast<CacheKey>(std::lower_bound(cdf.begin(), cdf.end(), u(rng)) - cdf.begin());
    // Popular keys spread over the key space, as entry numbers of popular files would be.
    CacheKey key = (k * 7919) % kKeys;
    t.push_back({key, sizes[key]});
  }
  return t;
}

double Exact(const std::vector<Access>& trace, uint64_t bytes) {
  SievePolicy p(bytes, kKeys);
  uint64_t hits = 0;
  std::vector<uint64_t> evicted;
  for (const Access& a : trace) {
    if (p.Access(a.key)) {
      ++hits;
    } else {
      evicted.clear();
      p.Admit(a.key, a.size + kOverhead, &evicted);
    }
  }
  return static_cast<double>(hits) / static_cast<double>(trace.size());
}

// Largest absolute error of the sampled curve over every size, printed for docs/cache.md.
double MaxError(const std::vector<Access>& trace, const char* name) {
  uint64_t dataset = 0;
  for (uint64_t s : Sizes()) dataset += s + kOverhead;
  const uint64_t budget = dataset * 4 / 10;  // today's tier: 40% of the dataset
  WhatIf w(budget, kKeys, kOverhead, {0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 2.5}, 2048);
  for (const Access& a : trace) w.Record(a.key, a.size);
  double worst = 0;
  for (const WhatIf::Point& p : w.Curve()) {
    double exact = Exact(trace, p.bytes);
    std::printf("%s: size %.2fx budget: predicted %.3f, exact %.3f\n", name, p.fraction,
                p.hit_ratio, exact);
    worst = std::max(worst, std::abs(p.hit_ratio - exact));
  }
  EXPECT_NEAR(w.sampling_rate(), 2048.0 / kKeys, 1e-9);
  return worst;
}

TEST(WhatIfTest, EpochCurveWithinFivePointsOfExactSimulation) {
  EXPECT_LT(MaxError(EpochTrace(5), "epochs"), 0.05);
}

TEST(WhatIfTest, ZipfCurveWithinFivePointsOfExactSimulation) {
  EXPECT_LT(MaxError(ZipfTrace(200000, 0.9), "zipf"), 0.05);
}

TEST(WhatIfTest, WorkingSetOfTheLastEpoch) {
  auto sizes = Sizes();
  uint64_t half = 0;
  WhatIf w(1 << 20, kKeys, kOverhead, {1.0}, 4096);
  // An epoch over every key, then one over the first half only: the last epoch's working set
  // (the last kKeys reads) is everything, and after a second half-epoch it is about half.
  for (CacheKey k = 0; k < kKeys; ++k) w.Record(k, sizes[k]);
  for (int rep = 0; rep < 2; ++rep) {
    for (CacheKey k = 0; k < kKeys / 2; ++k) w.Record(k, sizes[k]);
  }
  for (CacheKey k = 0; k < kKeys / 2; ++k) half += sizes[k];
  double est = static_cast<double>(w.WorkingSetBytes());
  EXPECT_NEAR(est / static_cast<double>(half), 1.0, 0.15);
}

}  // namespace
}  // namespace mmfs::cache
