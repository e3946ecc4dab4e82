// Mounting a dataset for a test with the real `mmfs` binary, and always unmounting it again.
//
// The daemon runs in the foreground as a child of the test with PR_SET_PDEATHSIG, so if the test
// process dies the daemon gets SIGTERM and unmounts itself; the destructor stops it, waits with a
// deadline, and falls back to a lazy unmount and SIGKILL. ctest's cleanup fixture
// (cleanup_mounts.sh) catches anything left after a hard crash.
//
// Thread-safety: test-only.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

// The ASan and TSan builds: their daemon carries the sanitizer's shadow memory and allocator, so
// bounds on its memory describe the release build only (kSanitizedBuild skips them there).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define MMFS_TESTS_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define MMFS_TESTS_SANITIZED 1
#endif
#endif

namespace mmfs::testing {

#ifdef MMFS_TESTS_SANITIZED
inline constexpr bool kSanitizedBuild = true;
#else
inline constexpr bool kSanitizedBuild = false;
#endif

class ForegroundMount {
 public:
  // Starts `mmfs mount -f DATASET MNT [extra...]` and waits until MNT is a mount point. With
  // `cgroup_procs`, the daemon joins that cgroup (writes its pid there) before it starts, so it
  // plans its memory inside it.
  ForegroundMount(const std::string& dataset, const std::string& mountpoint,
                  const std::vector<std::string>& extra = {},
                  const std::string& cgroup_procs = "");
  ~ForegroundMount();
  ForegroundMount(const ForegroundMount&) = delete;
  ForegroundMount& operator=(const ForegroundMount&) = delete;

  bool mounted() const { return mounted_; }
  pid_t pid() const { return pid_; }
  // Sends `sig` and waits (with a deadline) for the daemon to exit; returns its exit code, or
  // -1 if it did not exit in time or died by a signal.
  int StopWith(int sig, double timeout_seconds = 20);

 private:
  void CheckExpectedTransport(const std::vector<std::string>& extra) const;

  std::string mountpoint_;
  pid_t pid_ = -1;
  bool mounted_ = false;
};

// PIDs of processes whose command line mentions `mountpoint` and "mount" (daemonized mounts).
std::vector<pid_t> FindDaemons(const std::string& mountpoint);
// Best effort: unmount `mountpoint` lazily and kill any daemon serving it.
void ForceCleanup(const std::string& mountpoint);

// The bytes of `path` now in the page cache, by mincore(2) over a mapping of it: nothing is
// read and no page is brought in (fincore's way, without a process per file). 0 if it cannot
// be mapped; an empty file has none.
uint64_t PageCacheBytes(const std::string& path);

// The memory of a mount's daemon (`pid`) once MNT answers a request (statfs, a round trip
// through a FUSE thread, so its threads are up) and its status is readable: polled with a
// deadline, all zero if that never happens. `peak` (VmHWM) covers everything until then.
struct DaemonMemory {
  uint64_t rss = 0;   // VmRSS
  uint64_t peak = 0;  // VmHWM
  uint64_t anon = 0;  // RssAnon: its own, not shared libraries or mapped files
};
DaemonMemory MemoryWhenServing(pid_t pid, const std::string& mountpoint);

// `mmfs stats --json MNT`, parsed; a failed command or unparsable output fails the test (non-
// fatally: the caller's lookups then throw or compare against null) and returns a discarded value.
nlohmann::json StatsJson(const std::string& mountpoint);

}  // namespace mmfs::testing
