#include "tests/integration/cgroup_helper.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/test_util.h"

namespace mmfs::testing {

namespace {

bool Write(const std::string& path, const std::string& value) {
  std::ofstream out(path);
  out << value;
  out.flush();
  return static_cast<bool>(out);
}

uint64_t KeyValue(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string k;
  uint64_t v = 0;
  while (in >> k >> v) {
    if (k == key) return v;
  }
  return 0;
}

// Moves whatever is left in the group `dir` back to `root`'s, then removes the group once the
// kernel has let go of it (polled with a deadline).
void EmptyAndRemove(const std::string& dir, const std::string& root) {
  WaitFor(
      [&] {
        std::istringstream in(ReadFile(dir + "/cgroup.procs"));
        std::string pid;
        while (in >> pid) Write(root + "/cgroup.procs", pid);
        return ::rmdir(dir.c_str()) == 0 || errno == ENOENT;
      },
      20);
}

}  // namespace

std::unique_ptr<MemoryCgroup> MemoryCgroup::Create(const std::string& name, uint64_t limit_bytes,
                                                   std::string* error) {
  namespace fsys = std::filesystem;
  std::string root;
  int version = 0;
  if (fsys::exists("/sys/fs/cgroup/memory/cgroup.procs")) {
    root = "/sys/fs/cgroup/memory";
    version = 1;
  } else if (ReadFile("/sys/fs/cgroup/cgroup.controllers").find("memory") != std::string::npos) {
    root = "/sys/fs/cgroup";
    version = 2;
    Write(root + "/cgroup.subtree_control", "+memory");
  } else {
    *error = "no memory cgroup hierarchy (v1 /sys/fs/cgroup/memory or v2 with memory)";
    return nullptr;
  }
  std::string dir = root + "/" + name;
  if (::mkdir(dir.c_str(), 0755) != 0) {
    *error = "mkdir " + dir + ": " + std::strerror(errno);
    return nullptr;
  }
  std::unique_ptr<MemoryCgroup> group(new MemoryCgroup(root, dir, version));
  std::string limit = std::to_string(limit_bytes);
  if (!Write(dir + (version == 1 ? "/memory.limit_in_bytes" : "/memory.max"), limit)) {
    *error = "cannot set the limit of " + dir;
    return nullptr;  // the destructor removes the group
  }
  if (version == 2) Write(dir + "/memory.swap.max", "0");  // as v1 without memsw: no swap escape
  return group;
}

MemoryCgroup::~MemoryCgroup() { EmptyAndRemove(dir_, root_); }

bool MemoryCgroup::Add(pid_t pid) const { return Write(procs_file(), std::to_string(pid)); }

uint64_t MemoryCgroup::OomKills() const {
  if (version_ == 1) return KeyValue(ReadFile(dir_ + "/memory.oom_control"), "oom_kill");
  return KeyValue(ReadFile(dir_ + "/memory.events"), "oom_kill");
}

uint64_t MemoryCgroup::PeakBytes() const {
  std::string text = ReadFile(dir_ + (version_ == 1 ? "/memory.max_usage_in_bytes" : "/memory.peak"));
  return text.empty() ? 0 : std::stoull(text);
}

std::unique_ptr<BlkioThrottle> BlkioThrottle::Create(const std::string& name,
                                                     const std::string& path, uint64_t iops,
                                                     uint64_t bps, std::string* error) {
  const std::string root = "/sys/fs/cgroup/blkio";
  if (!std::filesystem::exists(root + "/cgroup.procs")) {
    *error = "no v1 blkio hierarchy at " + root;
    return nullptr;
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    *error = "stat " + path + ": " + std::strerror(errno);
    return nullptr;
  }
  const std::string device = std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev));
  const std::string dir = root + "/" + name;
  if (::mkdir(dir.c_str(), 0755) != 0) {
    *error = "mkdir " + dir + ": " + std::strerror(errno);
    return nullptr;
  }
  std::unique_ptr<BlkioThrottle> t(new BlkioThrottle(dir, device));
  // The kernel refuses a device it cannot throttle (a partition, tmpfs, overlay): EINVAL.
  if (!Write(dir + "/blkio.throttle.read_iops_device", device + " " + std::to_string(iops)) ||
      !Write(dir + "/blkio.throttle.read_bps_device", device + " " + std::to_string(bps))) {
    *error = "cannot throttle device " + device + " (holding " + path + ") in " + dir;
    return nullptr;  // the destructor removes the group
  }
  return t;
}

BlkioThrottle::~BlkioThrottle() {
  Write(dir_ + "/blkio.throttle.read_iops_device", device_ + " 0");
  Write(dir_ + "/blkio.throttle.read_bps_device", device_ + " 0");
  EmptyAndRemove(dir_, "/sys/fs/cgroup/blkio");
}

}  // namespace mmfs::testing
