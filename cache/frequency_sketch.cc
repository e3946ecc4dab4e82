#include "cache/frequency_sketch.h"

#include <algorithm>
#include <bit>

namespace mmfs::cache {

namespace {
uint64_t Mix(uint64_t x, uint64_t seed) {
  x ^= seed;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
constexpr uint64_t kSeeds[4] = {0x9E3779B97F4A7C15ull, 0xC2B2AE3D27D4EB4Full,
                                0x165667B19E3779F9ull, 0xD6E8FEB86659FD93ull};
}  // namespace

FrequencySketch::FrequencySketch(uint64_t expected_keys) {
  width_ = std::bit_ceil(std::clamp<uint64_t>(expected_keys * 4, 64, 1ull << 18));
  mask_ = width_ - 1;
  sample_size_ = 10 * width_;
  words_.assign(kRows * width_ / 16, 0);
}

uint64_t FrequencySketch::Index(uint64_t key, int row) const {
  return static_cast<uint64_t>(row) * width_ + (Mix(key, kSeeds[row]) & mask_);
}

uint32_t FrequencySketch::Get(uint64_t counter) const {
  return static_cast<uint32_t>((words_[counter / 16] >> ((counter % 16) * 4)) & 0xF);
}

void FrequencySketch::Increment(uint64_t key) {
  bool added = false;
  for (int row = 0; row < kRows; ++row) {
    uint64_t c = Index(key, row);
    if (Get(c) < 15) {
      words_[c / 16] += uint64_t{1} << ((c % 16) * 4);
      added = true;
    }
  }
  if (added && ++additions_ >= sample_size_) Halve();
}

uint32_t FrequencySketch::Estimate(uint64_t key) const {
  uint32_t est = 15;
  for (int row = 0; row < kRows; ++row) est = std::min(est, Get(Index(key, row)));
  return est;
}

void FrequencySketch::Halve() {
  // Shift every 4-bit counter right by one: drop each counter's low bit, then shift the word.
  for (uint64_t& w : words_) w = (w >> 1) & 0x7777777777777777ull;
  additions_ /= 2;
}

}  // namespace mmfs::cache
