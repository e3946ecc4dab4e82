#include "tools/mmfs/huge_page_heap.h"

#include <sys/auxv.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

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

}  // namespace

bool KernelOffersHugePages(const std::string& enabled_file) {
  std::ifstream in(enabled_file);
  std::string line;
  if (!std::getline(in, line)) return false;
  // "always [madvise] never": the bracketed word is the kernel's setting.
  return line.find("[always]") != std::string::npos ||
         line.find("[madvise]") != std::string::npos;
}

std::optional<std::string> TunablesWithHugeHeap(const std::optional<std::string>& current) {
  const std::string now = current.value_or("");
  if (now.find("glibc.malloc.hugetlb=") != std::string::npos) return std::nullopt;
  // A tunable the user set keeps the user's value: only the missing ones are added.
  std::string out = now;
  std::istringstream ours(kHugeHeapTunables);
  for (std::string item; std::getline(ours, item, ':');) {
    if (now.find(item.substr(0, item.find('=') + 1)) != std::string::npos) continue;
    out += (out.empty() ? "" : ":") + item;
  }
  return out;
}

bool ReturnFromHugeHeapRestart() {
  const char* marker = std::getenv(kHugeHeapMarker);
  if (marker == nullptr) return false;
  if (marker[0] == '=') {
    ::setenv("GLIBC_TUNABLES", marker + 1, 1);
  } else {
    ::unsetenv("GLIBC_TUNABLES");
  }
  ::unsetenv(kHugeHeapMarker);
  return true;
}

std::vector<std::string> OwnCommandLine() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  for (size_t start = 0; start < all.size();) {
    size_t end = all.find('\0', start);
    if (end == std::string::npos) end = all.size();
    args.emplace_back(all, start, end - start);
    start = end + 1;
  }
  return args;
}

void RestartWithHugeHeap(const std::vector<std::string>& args) {
  if (!kGlibcAllocator || args.empty() || ::getauxval(AT_SECURE) != 0 ||
      !KernelOffersHugePages()) {
    return;
  }
  const char* now = std::getenv("GLIBC_TUNABLES");
  std::optional<std::string> current = now ? std::optional<std::string>(now) : std::nullopt;
  std::optional<std::string> tunables = TunablesWithHugeHeap(current);
  if (!tunables) return;
  const std::string marker = current ? "=" + *current : "-";
  if (::setenv(kHugeHeapMarker, marker.c_str(), 1) != 0 ||
      ::setenv("GLIBC_TUNABLES", tunables->c_str(), 1) != 0) {
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
