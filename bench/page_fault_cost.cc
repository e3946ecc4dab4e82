// What a fresh page of anonymous memory costs on this machine: the first write to each 4 KiB
// page of a new mapping (a page fault), a second write to the same pages (none), the same with
// transparent huge pages asked for, and with the mapping populated up front. A cold read through
// mmfs fills memory the daemon has not touched before (a RAM-tier blob, a read buffer) besides
// the kernel's page cache; a cold read of the native folder fills only the page cache, whose
// pages the kernel allocates without a fault. On a VM whose faults are dear this is a large part
// of a cold read's cost (docs/performance.md, "Two transports").
//
//   g++ -O2 -std=c++20 bench/page_fault_cost.cc -o /tmp/page_fault_cost && /tmp/page_fault_cost
#include <sys/mman.h>

#include <chrono>
#include <cstddef>
#include <cstdio>

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kBytes = size_t{256} << 20;
constexpr size_t kPage = 4096;
constexpr size_t kPages = kBytes / kPage;

double MicrosPerPage(Clock::time_point since) {
  return std::chrono::duration<double, std::micro>(Clock::now() - since).count() / kPages;
}

// Writes one byte into each page of `p`; returns microseconds per page.
double TouchEachPage(volatile char* p, char value) {
  const Clock::time_point start = Clock::now();
  for (size_t i = 0; i < kBytes; i += kPage) p[i] = value;
  return MicrosPerPage(start);
}

char* Map(int extra_flags) {
  void* p = ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | extra_flags, -1, 0);
  return p == MAP_FAILED ? nullptr : static_cast<char*>(p);
}

}  // namespace

int main() {
  std::printf("%zu MiB, microseconds per 4 KiB page\n", kBytes >> 20);
  for (int round = 0; round < 3; ++round) {
    char* p = Map(0);
    if (p == nullptr) return 1;
    const double first = TouchEachPage(p, 1);
    const double second = TouchEachPage(p, 2);
    ::munmap(p, kBytes);
    std::printf("new mapping, round %d: first write %.2f, second write %.3f\n", round, first,
                second);
  }
  char* huge = Map(0);
  if (huge == nullptr) return 1;
  ::madvise(huge, kBytes, MADV_HUGEPAGE);
  std::printf("MADV_HUGEPAGE: first write %.2f\n", TouchEachPage(huge, 1));
  ::munmap(huge, kBytes);
  // The whole range faulted in for writing by one call (Linux 5.14), with and without huge
  // pages asked for first.
  for (const bool huge_pages : {false, true}) {
    char* prefaulted = Map(0);
    if (prefaulted == nullptr) return 1;
    if (huge_pages) ::madvise(prefaulted, kBytes, MADV_HUGEPAGE);
    const Clock::time_point advised = Clock::now();
    const bool ok = ::madvise(prefaulted, kBytes, MADV_POPULATE_WRITE) == 0;
    const double prefault = MicrosPerPage(advised);
    std::printf("%sMADV_POPULATE_WRITE: the madvise %.2f%s, then first write %.3f\n",
                huge_pages ? "MADV_HUGEPAGE + " : "", prefault, ok ? "" : " (refused)",
                TouchEachPage(prefaulted, 1));
    ::munmap(prefaulted, kBytes);
  }
  const Clock::time_point start = Clock::now();
  char* populated = Map(MAP_POPULATE);
  if (populated == nullptr) return 1;
  const double populate = MicrosPerPage(start);
  std::printf("MAP_POPULATE: the mmap %.2f, then first write %.2f\n", populate,
              TouchEachPage(populated, 1));
  ::munmap(populated, kBytes);
  return 0;
}
