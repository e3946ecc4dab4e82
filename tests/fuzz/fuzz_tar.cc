// Tar (and tar.gz) members: any archive is read to its end or refused with a Status, and every
// member that comes out has a relative, normalised path without "..". The header-only pass that
// groups a tar's samples (tar_grouping.h) counts the same members as the reading pass.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "tests/fuzz/fuzz_util.h"
#include "tools/pack/tar_grouping.h"
#include "tools/pack/tar_source.h"

namespace {

// Relative, no empty, "." or ".." component. Checked per component: "1../x" is a legal name
// (a substring test for "../" once called it an escape).
bool IsNormalRelativePath(std::string_view path) {
  if (path.empty() || path.front() == '/') return false;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view part = path.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = end + 1;
  }
  return true;
}

}  // namespace

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
    if (!IsNormalRelativePath(m.path) || m.data.size() > (1 << 20)) __builtin_trap();
  }
  auto plan = pack::PlanTarSamples(path, 1 << 20);
  if (to_the_end && plan.ok() && plan->members != members) __builtin_trap();
  return 0;
}
