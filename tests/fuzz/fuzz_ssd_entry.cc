// SSD cache entries: whatever bytes sit in an entry file, a lookup returns nothing or exactly
// the payload that the entry's header (magic, key, length, checksum) vouches for.
#include <xxhash.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "cache/ssd_tier.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mmfs;
  constexpr cache::CacheKey kKey = 0x1234;
  std::string dir = std::string(fuzz::ScratchDir()) + "/ssd";
  std::string entry = dir + "/mmfs-cache-v1/fuzz/34/0000000000001234";
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  fuzz::WriteOrDie(entry, bytes);
  cache::SsdTierOptions o;
  o.dir = dir;
  o.name_space = "fuzz";
  o.budget_bytes = 64 << 20;
  o.min_free_fraction = 0;
  auto tier = cache::SsdTier::Open(o);
  if (!tier.ok()) return 0;
  cache::Blob b = (*tier)->Lookup(kKey);
  if (b != nullptr) {
    if (size < cache::SsdTier::kHeaderBytes || b->size() != size - cache::SsdTier::kHeaderBytes ||
        std::memcmp(b->data(), data + cache::SsdTier::kHeaderBytes, b->size()) != 0) {
      __builtin_trap();
    }
    uint64_t sum;
    std::memcpy(&sum, data + 24, sizeof sum);
    if (XXH3_64bits(b->data(), b->size()) != sum) __builtin_trap();
  }
  return 0;
}
