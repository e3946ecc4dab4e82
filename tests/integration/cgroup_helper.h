// A memory cgroup for a test, removed again however the test ends; and a blkio (v1) cgroup that
// throttles reads from one device, to make the test's origin slow as a disk or a network volume.
//
// Made under the v1 memory hierarchy (/sys/fs/cgroup/memory) when there is one, else under the
// v2 unified hierarchy (/sys/fs/cgroup, memory controller enabled for its children), with a
// limit. The destructor moves whatever is still in it back to the hierarchy's root and removes
// it (with a deadline: a process that is exiting leaves a moment later); tests should stop
// their processes first. cleanup_mounts.sh removes groups left by a test binary that crashed.
//
// Thread-safety: test-only.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>

namespace mmfs::testing {

class MemoryCgroup {
 public:
  // nullptr and `*error` set when no memory hierarchy is usable (or not root).
  static std::unique_ptr<MemoryCgroup> Create(const std::string& name, uint64_t limit_bytes,
                                              std::string* error);
  ~MemoryCgroup();
  MemoryCgroup(const MemoryCgroup&) = delete;
  MemoryCgroup& operator=(const MemoryCgroup&) = delete;

  const std::string& dir() const { return dir_; }
  int version() const { return version_; }
  std::string procs_file() const { return dir_ + "/cgroup.procs"; }
  bool Add(pid_t pid) const;
  // OOM kills in the group so far (v1 memory.oom_control, v2 memory.events).
  uint64_t OomKills() const;
  // Peak usage (v1 memory.max_usage_in_bytes, v2 memory.peak); 0 if the kernel has none.
  uint64_t PeakBytes() const;

 private:
  MemoryCgroup(std::string root, std::string dir, int version)
      : root_(std::move(root)), dir_(std::move(dir)), version_(version) {}
  std::string root_;  // the hierarchy's root directory
  std::string dir_;
  int version_;
};

// A v1 blkio cgroup limiting reads from the device holding a path to `iops` requests and `bps`
// bytes a second (0: no limit), for the processes added to it. Removed with its limits however
// the test ends (the destructor moves what is left back to the root).
class BlkioThrottle {
 public:
  // nullptr and `*error` set without a v1 blkio hierarchy (or not root) or a usable device.
  static std::unique_ptr<BlkioThrottle> Create(const std::string& name, const std::string& path,
                                               uint64_t iops, uint64_t bps, std::string* error);
  ~BlkioThrottle();
  BlkioThrottle(const BlkioThrottle&) = delete;
  BlkioThrottle& operator=(const BlkioThrottle&) = delete;

  std::string procs_file() const { return dir_ + "/cgroup.procs"; }

 private:
  BlkioThrottle(std::string dir, std::string device) : dir_(std::move(dir)), device_(device) {}
  std::string dir_;
  std::string device_;  // "major:minor"
};

}  // namespace mmfs::testing
