// FrequencySketch: approximate access counts for admission decisions (TinyLFU, Einziger et al.).
//
// A count-min sketch of 4-bit counters in four rows. Every Increment adds one to a key's four
// counters (saturating at 15); Estimate is the minimum of the four. After `sample_size`
// increments every counter is halved, so the sketch forgets old popularity. Memory is fixed at
// construction: 4 rows x `width` counters x 4 bits.
//
// Thread-safety: not thread-safe; the owning tier guards it with its own lock.
#pragma once

#include <cstdint>
#include <vector>

namespace mmfs::cache {

class FrequencySketch {
 public:
  // `expected_keys`: how many distinct keys to tell apart. The row width is the next power of
  // two at or above 4x that (few collisions, so ties stay ties), at least 64, at most 2^18:
  // at most 512 KiB per sketch.
  explicit FrequencySketch(uint64_t expected_keys);

  void Increment(uint64_t key);
  uint32_t Estimate(uint64_t key) const;
  uint64_t width() const { return width_; }

 private:
  static constexpr int kRows = 4;
  uint64_t Index(uint64_t key, int row) const;
  uint32_t Get(uint64_t counter) const;
  void Halve();

  uint64_t width_;
  uint64_t mask_;
  uint64_t sample_size_;
  uint64_t additions_ = 0;
  std::vector<uint64_t> words_;  // 16 counters per word; rows laid out one after another
};

}  // namespace mmfs::cache
