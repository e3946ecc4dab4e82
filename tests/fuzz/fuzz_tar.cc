// Tar (and tar.gz) members: any archive is read to its end or refused with a Status, and every
// member that comes out has a relative, normalised path without "..". The header-only pass that
// groups a tar's samples (tar_grouping.h) counts the same members as the reading pass.
#include <cstddef>
#include <cstdint>
#include <string>

#include "tests/fuzz/fuzz_util.h"
#include "tools/pack/tar_grouping.h"
#include "tools/pack/tar_source.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mmfs;
  std::string path = std::string(fuzz::ScratchDir()) + "/input.tar";
  fuzz::WriteOrDie(path, std::string_view(reinterpret_cast<const char*>(data), size));
  fuzz::QuietReporter r;
  auto reader = pack::TarReader::Open(path, r, 1 << 20);
  if (!reader.ok()) return 0;
  pack::TarMember m;
  uint64_t members = 0;
  bool to_the_end = false;
  for (int n = 0; n < 10000; ++n) {
    auto more = (*reader)->Next(&m);
    if (!more.ok()) break;
    if (!*more) {
      to_the_end = true;
      break;
    }
    ++members;
    if (m.path.empty() || m.path.front() == '/' || m.path == ".." ||
        m.path.find("../") != std::string::npos || m.path.find("/..") != std::string::npos ||
        m.path.find("//") != std::string::npos || m.data.size() > (1 << 20)) {
      __builtin_trap();
    }
  }
  auto plan = pack::PlanTarSamples(path, 1 << 20);
  if (to_the_end && plan.ok() && plan->members != members) __builtin_trap();
  return 0;
}
