// Member path normalisation and sample keys: a normalised path never escapes, never holds an
// empty, "." or ".." component, and no component is longer than a kernel name.
#include <cstddef>
#include <cstdint>
#include <string>

#include "tools/pack/source_tree.h"
#include "tools/pack/tar_source.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  (void)mmfs::pack::SampleKeyOf(in);
  auto p = mmfs::pack::NormaliseMemberPath(in);
  if (!p.ok()) return 0;
  const std::string& s = *p;
  if (s.empty() || s.front() == '/' || s.back() == '/') __builtin_trap();
  size_t start = 0;
  while (start <= s.size()) {
    size_t slash = s.find('/', start);
    if (slash == std::string::npos) slash = s.size();
    std::string_view part(s.data() + start, slash - start);
    if (part.empty() || part == "." || part == ".." || part.size() > 255) __builtin_trap();
    start = slash + 1;
  }
  return 0;
}
