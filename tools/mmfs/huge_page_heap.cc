#include "tools/mmfs/huge_page_heap.h"

#include <gnu/libc-version.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "base/file_util.h"

namespace mmfs::cli {

namespace {

// ASan and TSan bring their own allocators, which glibc's tunables do not reach: a restart
// there would cost the mount time and change nothing.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kGlibcAllocator = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kGlibcAllocator = false;
#else
constexpr bool kGlibcAllocator = true;
#endif
#else
constexpr bool kGlibcAllocator = true;
#endif

// glibc.malloc.hugetlb came with glibc 2.35.
bool GlibcHasHugeTlbTunable() {
  unsigned major = 0, minor = 0;
  if (std::sscanf(::gnu_get_libc_version(), "%u.%u", &major, &minor) != 2) return false;
  return major > 2 || (major == 2 && minor >= 35);
}

}  // namespace

bool KernelAdvisesHugePages(const std::string& enabled_file) {
  // "always [madvise] never": the bracketed word is the kernel's setting.
  auto mode = ReadWholeFile(enabled_file, 4096);
  return mode.ok() && mode->find("[madvise]") != std::string::npos;
}

std::optional<std::string> TunablesWithHugeHeap(const std::optional<std::string>& current,
                                                const std::vector<std::string>& set_elsewhere) {
  const std::string now = current.value_or("");
  if (now.find("glibc.malloc.hugetlb=") != std::string::npos) return std::nullopt;
  // A tunable the user set keeps the user's value: only the missing ones are added.
  std::string out = now;
  std::istringstream ours(kHugeHeapTunables);
  for (std::string item; std::getline(ours, item, ':');) {
    const std::string name = item.substr(0, item.find('='));
    bool users = now.find(name + "=") != std::string::npos;
    for (const std::string& other : set_elsewhere) users |= other == name;
    if (users) continue;
    out += (out.empty() ? "" : ":") + item;
  }
  return out;
}

bool ReturnFromHugeHeapRestart() {
  const char* marker = std::getenv(kHugeHeapMarker);
  if (marker == nullptr) return false;
  // glibc filters the environment of a setuid process, and so does not restart one: a marker
  // there is somebody else's, and GLIBC_TUNABLES is not set from it.
  if (::getauxval(AT_SECURE) == 0) {
    if (marker[0] == '=') {
      ::setenv("GLIBC_TUNABLES", marker + 1, 1);
    } else {
      ::unsetenv("GLIBC_TUNABLES");
    }
  }
  ::unsetenv(kHugeHeapMarker);
  return true;
}

std::vector<std::string> SplitCommandLine(const std::string& cmdline) {
  std::vector<std::string> args;
  // NUL-terminated arguments, the last one included; an empty argument is a lone NUL.
  for (size_t start = 0; start < cmdline.size();) {
    size_t end = cmdline.find('\0', start);
    if (end == std::string::npos) end = cmdline.size();
    args.emplace_back(cmdline, start, end - start);
    start = end + 1;
  }
  return args;
}

std::vector<std::string> OwnCommandLine() {
  // ARG_MAX-sized at most (the kernel's 2 MiB default); more would not be a command line.
  auto cmdline = ReadWholeFile("/proc/self/cmdline", 8u << 20);
  return cmdline.ok() ? SplitCommandLine(*cmdline) : std::vector<std::string>{};
}

void RestartWithHugeHeap(const std::vector<std::string>& args) {
  if (!kGlibcAllocator || args.empty() || ::getauxval(AT_SECURE) != 0 ||
      !GlibcHasHugeTlbTunable() || !KernelAdvisesHugePages()) {
    return;
  }
  const char* now = std::getenv("GLIBC_TUNABLES");
  std::optional<std::string> current = now ? std::optional<std::string>(now) : std::nullopt;
  // glibc's older variables for two of the three: the user's setting, whichever way it came.
  std::vector<std::string> set_elsewhere;
  if (std::getenv("MALLOC_ARENA_MAX") != nullptr) set_elsewhere.push_back("glibc.malloc.arena_max");
  if (std::getenv("MALLOC_TOP_PAD_") != nullptr) set_elsewhere.push_back("glibc.malloc.top_pad");
  std::optional<std::string> tunables = TunablesWithHugeHeap(current, set_elsewhere);
  if (!tunables) return;
  const std::string marker = current ? "=" + *current : "-";
  if (::setenv(kHugeHeapMarker, marker.c_str(), 1) != 0) return;
  if (::setenv("GLIBC_TUNABLES", tunables->c_str(), 1) != 0) {
    ::unsetenv(kHugeHeapMarker);
    return;
  }
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::fflush(nullptr);
  ::execv("/proc/self/exe", argv.data());
  // Still here: the mount goes on with the heap as it is.
  const int err = errno;
  ReturnFromHugeHeapRestart();
  std::fprintf(stderr, "mmfs: note: could not restart with a huge-page heap (%s); going on\n",
               std::strerror(err));
}

}  // namespace mmfs::cli
