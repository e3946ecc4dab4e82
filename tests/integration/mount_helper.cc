#include "tests/integration/mount_helper.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "tests/test_util.h"

namespace mmfs::testing {

ForegroundMount::ForegroundMount(const std::string& dataset, const std::string& mountpoint,
                                 const std::vector<std::string>& extra,
                                 const std::string& cgroup_procs)
    : mountpoint_(mountpoint) {
  std::vector<std::string> argv = {MmfsBinary(), "mount", "-f", dataset, mountpoint};
  argv.insert(argv.end(), extra.begin(), extra.end());
  pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(1);
    if (!cgroup_procs.empty()) {
      std::string self = std::to_string(::getpid());
      int fd = ::open(cgroup_procs.c_str(), O_WRONLY);
      if (fd < 0 || ::write(fd, self.data(), self.size()) != static_cast<ssize_t>(self.size())) {
        ::_exit(126);
      }
      ::close(fd);
    }
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  mounted_ = WaitFor(
      [&] {
        int status = 0;
        if (::waitpid(pid_, &status, WNOHANG) == pid_) {
          pid_ = -1;  // exited early: mount failed
          return true;
        }
        return IsMountPoint(mountpoint_);
      },
      30);
  mounted_ = mounted_ && pid_ > 0 && IsMountPoint(mountpoint_);
  const bool remote = dataset.rfind("http://", 0) == 0 || dataset.rfind("https://", 0) == 0 ||
                      dataset.rfind("s3://", 0) == 0;
  if (mounted_ && !remote) CheckExpectedTransport(extra);  // a URL keeps /dev/fuse (auto)
}

// tools/run-tests.sh runs the mount suite a second time with the kernel offering io_uring and
// MMFS_TEST_EXPECT_RING=1: every mount of a local dataset left to choose (transport=auto) must
// then serve over the ring. Told by the daemon's ring threads (libfuse names them fuse-ring-N),
// which needs no request to the mount.
void ForegroundMount::CheckExpectedTransport(const std::vector<std::string>& extra) const {
  const char* expect = std::getenv("MMFS_TEST_EXPECT_RING");
  if (expect == nullptr || std::string(expect) != "1") return;
  for (const std::string& a : extra) {
    if (a.find("transport=") != std::string::npos) return;
  }
  std::string offered;
  {
    std::ifstream in("/sys/module/fuse/parameters/enable_uring");
    in >> offered;
  }
  if (offered != "Y") return;  // a test that turned the offer off
  const std::string tasks = "/proc/" + std::to_string(pid_) + "/task";
  bool ring = WaitFor(
      [&] {
        std::error_code ec;
        for (const auto& t : std::filesystem::directory_iterator(tasks, ec)) {
          if (ReadFile(t.path().string() + "/comm").rfind("fuse-ring-", 0) == 0) return true;
        }
        return false;
      },
      10);
  EXPECT_TRUE(ring) << "MMFS_TEST_EXPECT_RING=1 and the kernel offers io_uring, but the daemon "
                       "serving "
                    << mountpoint_ << " runs no fuse-ring thread";
}

int ForegroundMount::StopWith(int sig, double timeout_seconds) {
  if (pid_ <= 0) return -1;
  ::kill(pid_, sig);
  int status = 0;
  bool exited = WaitFor([&] { return ::waitpid(pid_, &status, WNOHANG) == pid_; },
                        timeout_seconds);
  if (!exited) return -1;
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

ForegroundMount::~ForegroundMount() {
  if (pid_ > 0 && StopWith(SIGTERM) < 0 && pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  // A stale mount (daemon killed) fails stat, so also look in /proc/mounts.
  if (IsMountPoint(mountpoint_) ||
      ReadFile("/proc/mounts").find(" " + mountpoint_ + " ") != std::string::npos) {
    ForceCleanup(mountpoint_);
  }
}

std::vector<pid_t> FindDaemons(const std::string& mountpoint) {
  std::vector<pid_t> pids;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return pids;
  while (struct dirent* de = ::readdir(proc)) {
    char* end = nullptr;
    long pid = std::strtol(de->d_name, &end, 10);
    if (*end != '\0' || pid <= 0 || pid == ::getpid()) continue;
    std::ifstream in(std::string("/proc/") + de->d_name + "/cmdline", std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string cmd = ss.str();
    if (cmd.find("mmfs") != std::string::npos && cmd.find(std::string("mount") + '\0') != std::string::npos &&
        cmd.find(mountpoint) != std::string::npos) {
      pids.push_back(static_cast<pid_t>(pid));
    }
  }
  ::closedir(proc);
  return pids;
}

void ForceCleanup(const std::string& mountpoint) {
  // Abort the FUSE connection first: a daemon stuck in the kernel would otherwise keep it alive.
  std::string dev;
  std::istringstream info(ReadFile("/proc/self/mountinfo"));
  for (std::string line; std::getline(info, line);) {
    std::istringstream f(line);
    std::string id, parent, d, root, point;
    f >> id >> parent >> d >> root >> point;
    if (point == mountpoint) dev = d;
  }
  if (!dev.empty()) {
    // fusectl is mounted for the abort only if it was not, and unmounted again after.
    RunCommand({"/bin/sh", "-c",
                "mounted=0; mountpoint -q /sys/fs/fuse/connections || "
                "{ mount -t fusectl none /sys/fs/fuse/connections && mounted=1; }; "
                "echo 1 > /sys/fs/fuse/connections/" + dev.substr(dev.find(':') + 1) + "/abort; "
                "[ $mounted = 1 ] && umount /sys/fs/fuse/connections; true"},
               20);
  }
  RunCommand({"fusermount3", "-u", "-z", mountpoint}, 20);
  RunCommand({"umount", "-l", mountpoint}, 20);  // an --overlay mount is not FUSE's
  for (pid_t pid : FindDaemons(mountpoint)) ::kill(pid, SIGKILL);
  // The FUSE mounts under the overlays of daemons that are gone.
  RunCommand({"/bin/sh", "-c",
              "grep -o ' /run/mmfs/mmfs-front-[0-9]*-[^ ]*/fuse ' /proc/mounts | "
              "while read -r m; do p=${m#/run/mmfs/mmfs-front-}; kill -0 ${p%%-*} 2>/dev/null "
              "|| umount -l \"$m\"; done; true"},
             20);
}

uint64_t PageCacheBytes(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return 0;
  struct stat st;
  uint64_t bytes = 0;
  if (::fstat(fd, &st) == 0 && st.st_size > 0) {
    const size_t len = static_cast<size_t>(st.st_size);
    // PROT_NONE: the mapping is never touched, so mincore only reports what is already cached.
    void* map = ::mmap(nullptr, len, PROT_NONE, MAP_SHARED, fd, 0);
    if (map != MAP_FAILED) {
      const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
      std::vector<unsigned char> resident((len + page - 1) / page);
      if (::mincore(map, len, resident.data()) == 0) {
        for (unsigned char r : resident) bytes += (r & 1) ? page : 0;
      }
      ::munmap(map, len);
    }
  }
  ::close(fd);
  return bytes;
}

DaemonMemory MemoryWhenServing(pid_t pid, const std::string& mountpoint) {
  DaemonMemory m;
  WaitFor(
      [&] {
        struct statfs st;
        if (::statfs(mountpoint.c_str(), &st) != 0) return false;
        m = {ProcStatusBytes(pid, "VmRSS"), ProcStatusBytes(pid, "VmHWM"),
             ProcStatusBytes(pid, "RssAnon")};
        return m.rss > 0 && m.peak > 0;
      },
      30);
  return m;
}

nlohmann::json StatsJson(const std::string& mountpoint) {
  auto r = RunCommand({MmfsBinary(), "stats", "--json", mountpoint});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.output;
  return j;
}

}  // namespace mmfs::testing
