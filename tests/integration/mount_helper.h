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

#include <string>
#include <vector>

namespace mmfs::testing {

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
  std::string mountpoint_;
  pid_t pid_ = -1;
  bool mounted_ = false;
};

// PIDs of processes whose command line mentions `mountpoint` and "mount" (daemonized mounts).
std::vector<pid_t> FindDaemons(const std::string& mountpoint);
// Best effort: unmount `mountpoint` lazily and kill any daemon serving it.
void ForceCleanup(const std::string& mountpoint);

}  // namespace mmfs::testing
