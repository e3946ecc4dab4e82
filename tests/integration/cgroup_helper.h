// A memory cgroup for a test, removed again however the test ends.
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

}  // namespace mmfs::testing
