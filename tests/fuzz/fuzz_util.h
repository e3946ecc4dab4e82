// Shared by the fuzz targets: a scratch directory that lives for the whole fuzzing process and a
// reporter that drops what the code under test says.
//
// Thread-safety: libFuzzer runs one input at a time; so do these helpers.
#pragma once

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>

#include "base/file_util.h"
#include "tools/pack/reporter.h"

namespace mmfs::fuzz {

// Removed at exit; kept in a plain array because the atexit handler may run after static
// strings are destroyed.
inline char g_scratch[4096];

inline const char* ScratchDir() {
  if (g_scratch[0] == '\0') {
    std::string t = std::filesystem::temp_directory_path().string() + "/mmfs-fuzz-XXXXXX";
    if (t.size() >= sizeof g_scratch || ::mkdtemp(t.data()) == nullptr) ::abort();
    std::memcpy(g_scratch, t.c_str(), t.size() + 1);
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(g_scratch, ec);
    });
  }
  return g_scratch;
}

inline void WriteOrDie(const std::string& path, std::string_view data) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  auto fd = OpenFile(path, O_WRONLY | O_CREAT | O_TRUNC);
  if (!fd.ok() || !WriteFull(fd->get(), data.data(), data.size(), path).ok()) ::abort();
}

class QuietReporter final : public pack::PackReporter {
 public:
  void Warning(const std::string&) override {}
  void Phase(const std::string&) override {}
  void Progress(const pack::PackProgress&) override {}
};

}  // namespace mmfs::fuzz
