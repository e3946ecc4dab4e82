// manifest.json: any text either parses into a manifest that writes back to an equal one, or is
// refused with a Status; never a crash or an exception.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fs/format/manifest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto m = mmfs::format::Manifest::Parse(text, "fuzz");
  if (!m.ok()) return 0;
  auto again = mmfs::format::Manifest::Parse(m->ToJson(), "fuzz again");
  if (!again.ok() || again->ToJson() != m->ToJson()) __builtin_trap();
  return 0;
}
