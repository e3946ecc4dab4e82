// The mount daemon's malloc heap on transparent huge pages.
//
// Every cold read copies a file into the RAM tier, and while the tier grows each 4 KiB of it is a
// page fault. Under virtualisation a fault can cost 10-30 us (bench/page_fault_cost.cc), more
// than the rest of the read. glibc's allocator advises MADV_HUGEPAGE on its heap as it grows
// (glibc.malloc.hugetlb=1, glibc 2.35 and later, when the kernel's THP setting is `madvise`), but
// only through GLIBC_TUNABLES, read once when a process starts; and it reaches only the main
// arena's heap, which takes whole huge pages only when it grows in large steps. So `mmfs mount`
// starts itself again (execv of /proc/self/exe with the same arguments) with
//     glibc.malloc.hugetlb=1:glibc.malloc.arena_max=1:glibc.malloc.top_pad=33554432
// added to GLIBC_TUNABLES, and the new process puts the variable back as it was, so that what
// it starts (fusermount3, the auto-unmount watcher) inherits the user's environment. The heap
// then grows 32 MiB at a time, whole huge pages, and the daemon's prefaulter
// (base/heap_prefaulter.h) populates each step on a thread of its own, mostly before the RAM
// tier reaches it: a READ still faults the step's first huge page, and any the thread has not
// reached yet.
//
// Only where it pays and is safe: the kernel's THP setting is `madvise` (measured there; under
// `always` glibc gives no advice and the kernel already uses huge pages where it can), glibc has
// the tunable, the mount is not in shared-limit mode (there memory is short, and the allocator is
// tuned to give memory back instead: daemonize.h, TuneAllocator), the user did not say
// `-o huge_pages=off` or set glibc.malloc.hugetlb themselves, the binary is not setuid (glibc
// ignores GLIBC_TUNABLES there) and not built with ASan or TSan (their allocators are not
// glibc's). The restart costs the mount about 60 ms (the binary is loaded again).
//
// Thread-safety: call from the main thread before any other thread starts (execv and setenv).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mmfs::cli {

// What is added to GLIBC_TUNABLES, and its top_pad: the heap's growth step, which the memory
// plan reserves (populated ahead, it may be resident before the tier uses it).
inline constexpr char kHugeHeapTunables[] =
    "glibc.malloc.hugetlb=1:glibc.malloc.arena_max=1:glibc.malloc.top_pad=33554432";
inline constexpr uint64_t kHugeHeapStepBytes = 33554432;

// Whether /sys/kernel/mm/transparent_hugepage/enabled (`enabled_file`) selects madvise.
bool KernelAdvisesHugePages(const std::string& enabled_file =
                                "/sys/kernel/mm/transparent_hugepage/enabled");

// GLIBC_TUNABLES for the restarted daemon: `current` (the variable, if set) with those of the
// huge-page tunables that neither it nor `set_elsewhere` (tunable names the user set through
// glibc's older variables, MALLOC_ARENA_MAX and MALLOC_TOP_PAD_) sets added: the user's values
// win. nullopt when `current` already sets glibc.malloc.hugetlb (the user's choice, either way).
std::optional<std::string> TunablesWithHugeHeap(const std::optional<std::string>& current,
                                                const std::vector<std::string>& set_elsewhere = {});

// The environment variable that tells the restarted process what GLIBC_TUNABLES was: "=" and
// the value, or "-" when it was not set.
inline constexpr char kHugeHeapMarker[] = "MMFS_HUGE_HEAP_RESTARTED";

// In a process restarted by RestartWithHugeHeap: puts GLIBC_TUNABLES back as it was, drops the
// marker and returns true (in a setuid process it only drops the marker). Otherwise returns
// false and changes nothing.
bool ReturnFromHugeHeapRestart();

// Starts this process again with the huge-page tunables (see above) and does not return; returns
// only when that is not wanted or not possible (no /proc/self/exe, execv failed: the mount goes
// on with the heap as it is, which costs only speed). `args` is this process's command line.
void RestartWithHugeHeap(const std::vector<std::string>& args);

// The arguments in the contents of /proc/PID/cmdline (each one NUL-terminated).
std::vector<std::string> SplitCommandLine(const std::string& cmdline);
// This process's command line, from /proc/self/cmdline; empty if it cannot be read.
std::vector<std::string> OwnCommandLine();

}  // namespace mmfs::cli
