// Lifecycle of the daemon: refusing bad mounts clearly, daemon mode returning only once the
// mount serves, mmfs umount, and unmounting on SIGTERM / SIGINT.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/statfs.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <sstream>
#include <nlohmann/json.hpp>

#include "base/heap_prefaulter.h"
#include "tests/integration/mount_helper.h"
#include "tests/integration/one_sample_fixture.h"
#include "tests/test_util.h"

namespace mmfs::testing {
namespace {

class LifecycleTest : public OneSampleMountTest {
 protected:
  std::string StaleOverlayMount();
};

TEST_F(LifecycleTest, RefusesSomethingThatIsNotADataset) {
  auto r = RunCommand({MmfsBinary(), "mount", tmp_ / "src", mnt()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("not an mmfs dataset"), std::string::npos) << r.output;
  EXPECT_FALSE(IsMountPoint(mnt()));
  auto missing = RunCommand({MmfsBinary(), "mount", tmp_ / "nope", mnt()});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.output.find("nope"), std::string::npos) << missing.output;
}

TEST_F(LifecycleTest, RefusesDamagedDatasetNamingTheShard) {
  std::filesystem::resize_file(dst() + "/shard-00000.mdb", 100);
  auto r = RunCommand({MmfsBinary(), "mount", dst(), mnt()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("shard-00000.mdb"), std::string::npos) << r.output;
  EXPECT_FALSE(IsMountPoint(mnt()));
}

TEST_F(LifecycleTest, RefusesNonEmptyOrMissingMountpoint) {
  WriteFile(mnt() + "/existing", "x");
  auto r = RunCommand({MmfsBinary(), "mount", dst(), mnt()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("not empty"), std::string::npos) << r.output;
  auto missing = RunCommand({MmfsBinary(), "mount", dst(), tmp_ / "no_such_dir"});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.output.find("no_such_dir"), std::string::npos) << missing.output;
}

TEST_F(LifecycleTest, DaemonModeReturnsOnlyWhenServingAndUmountWorks) {
  auto r = RunCommand({MmfsBinary(), "mount", dst(), mnt()}, 60);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // No polling here: the command returning 0 is the promise that the mount serves.
  EXPECT_TRUE(IsMountPoint(mnt()));
  EXPECT_EQ(ReadFile(mnt() + "/train/a/1.txt"), "caption");
  EXPECT_EQ(FindDaemons(mnt()).size(), 1u);
  auto busy = RunCommand({MmfsBinary(), "mount", dst(), mnt()});
  EXPECT_NE(busy.exit_code, 0);
  EXPECT_NE(busy.output.find("already a mount point"), std::string::npos) << busy.output;
  auto u = RunCommand({MmfsBinary(), "umount", mnt()});
  EXPECT_EQ(u.exit_code, 0) << u.output;
  EXPECT_FALSE(IsMountPoint(mnt()));
  EXPECT_TRUE(WaitFor([&] { return FindDaemons(mnt()).empty(); }, 20)) << "daemon did not exit";
}

// The mount table writes a space as \040: a mount point with one must still be found (the
// daemon once waited for it forever, and `mmfs mount` with it).
TEST_F(LifecycleTest, MountPointWithASpaceMountsAndUnmounts) {
  const std::string spaced = tmp_ / "my data";
  std::filesystem::create_directories(spaced);
  auto r = RunCommand({MmfsBinary(), "mount", dst(), spaced}, 60);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(ReadFile(spaced + "/train/a/1.txt"), "caption");
  if (::geteuid() == 0) {
    struct stat st;
    ASSERT_EQ(::stat(spaced.c_str(), &st), 0);
    EXPECT_EQ(ReadFile("/sys/class/bdi/" + std::to_string(major(st.st_dev)) + ":" +
                       std::to_string(minor(st.st_dev)) + "/read_ahead_kb"),
              "1024\n");
  }
  EXPECT_EQ(RunCommand({MmfsBinary(), "umount", spaced}).exit_code, 0);
  EXPECT_TRUE(WaitFor([&] { return FindDaemons(spaced).empty(); }, 20)) << "daemon did not exit";
  if (IsMountPoint(spaced)) ForceCleanup(spaced);
}

TEST_F(LifecycleTest, SigtermUnmountsCleanly) {
  ForegroundMount m(dst(), mnt());
  ASSERT_TRUE(m.mounted());
  EXPECT_EQ(ReadFile(mnt() + "/train/a/1.txt"), "caption");
  EXPECT_EQ(m.StopWith(SIGTERM), 0);
  EXPECT_FALSE(IsMountPoint(mnt()));
}

TEST_F(LifecycleTest, SigtermWithAFileHeldOpenDetachesAndExitsWhenItCloses) {
  ForegroundMount m(dst(), mnt());
  ASSERT_TRUE(m.mounted());
  int fd = ::open((mnt() + "/train/a/1.txt").c_str(), O_RDONLY);  // opened, not yet read
  ASSERT_GE(fd, 0);
  ::kill(m.pid(), SIGTERM);
  // The mount leaves the namespace at once; the daemon stays for the holder.
  EXPECT_TRUE(WaitFor([&] { return !IsMountPoint(mnt()); }, 20));
  EXPECT_EQ(::kill(m.pid(), 0), 0) << "the daemon exited while a file was still open";
  char buf[64] = {};
  EXPECT_EQ(::pread(fd, buf, sizeof buf, 0), 7);
  EXPECT_EQ(std::string(buf, 7), "caption");
  ::close(fd);
  // Closing the last file ends the session; the daemon exits cleanly on its own.
  EXPECT_EQ(m.StopWith(0), 0);
}

// What `path` gives a process running as user and group 65534 (nobody): 0 if it reads, else errno.
int ReadAsNobody(const std::string& path) {
  pid_t pid = ::fork();
  if (pid == 0) {
    if (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(200);
    int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0) ::_exit(errno);
    char b[16];
    ::_exit(::read(fd, b, sizeof b) < 0 ? errno : 0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_F(LifecycleTest, SecondUserSeesModesOnlyWithAllowOther) {
  WriteFile(tmp_ / "src2/open.txt", "everyone");
  WriteFile(tmp_ / "src2/secret.txt", "root only");
  ASSERT_EQ(::chmod((tmp_ / "src2/secret.txt").c_str(), 0600), 0);
  ASSERT_EQ(::chmod((tmp_ / "src2").c_str(), 0755), 0);
  ASSERT_EQ(::chmod(tmp_.path().c_str(), 0755), 0);  // nobody must reach the mount point
  auto pack = RunCommand({MmfsBinary(), "pack", "-q", tmp_ / "src2", tmp_ / "perm.mmfs"});
  ASSERT_EQ(pack.exit_code, 0) << pack.output;
  {
    // Without allow_other, FUSE keeps every other user out.
    ForegroundMount m(tmp_ / "perm.mmfs", mnt());
    ASSERT_TRUE(m.mounted());
    EXPECT_EQ(ReadAsNobody(mnt() + "/open.txt"), EACCES);
    EXPECT_EQ(m.StopWith(SIGTERM), 0);
  }
  {
    // With it, the packed mode bits decide (default_permissions), and the hint pipe is open to
    // everyone who can see the mount.
    ForegroundMount m(tmp_ / "perm.mmfs", mnt(), {"-o", "allow_other"});
    ASSERT_TRUE(m.mounted());
    EXPECT_EQ(ReadAsNobody(mnt() + "/open.txt"), 0);
    EXPECT_EQ(ReadAsNobody(mnt() + "/secret.txt"), EACCES);
    // Even mounted by root: no devices, no setuid (mount.fuse3 would default to dev,suid).
    std::string mounts = ReadFile("/proc/mounts");
    std::string needle = " ";
    needle += mnt() + " ";
    std::string entry = mounts.substr(mounts.find(needle));
    entry = entry.substr(0, entry.find('\n'));
    EXPECT_NE(entry.find("nosuid"), std::string::npos) << entry;
    EXPECT_NE(entry.find("nodev"), std::string::npos) << entry;
    struct stat st;
    ASSERT_EQ(::stat((mnt() + "/.mmfs/hint").c_str(), &st), 0);  // follows the link to the FIFO
    EXPECT_TRUE(S_ISFIFO(st.st_mode));
    EXPECT_EQ(st.st_mode & 0777, 0666u);
    EXPECT_EQ(m.StopWith(SIGTERM), 0);
  }
}

TEST_F(LifecycleTest, ForegroundMountTellsSystemdWhenItServes) {
  // A Type=notify unit: systemd passes a datagram socket in NOTIFY_SOCKET.
  std::string sock = tmp_ / "notify.sock";
  int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, sock.c_str(), sock.size() + 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ::setenv("NOTIFY_SOCKET", sock.c_str(), 1);
  ForegroundMount m(dst(), mnt());
  ::unsetenv("NOTIFY_SOCKET");
  ASSERT_TRUE(m.mounted());
  pollfd p = {fd, POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 20000), 1) << "no readiness message";
  char buf[512] = {};
  ssize_t n = ::recv(fd, buf, sizeof buf - 1, 0);
  ::close(fd);
  ASSERT_GT(n, 0);
  EXPECT_EQ(std::string(buf, 8), "READY=1\n") << buf;
  EXPECT_NE(std::string(buf).find("STATUS=serving"), std::string::npos) << buf;
  // By then the mount serves.
  EXPECT_EQ(ReadFile(mnt() + "/train/a/1.txt"), "caption");
  EXPECT_EQ(m.StopWith(SIGTERM), 0);
}

TEST_F(LifecycleTest, AnUnprivilegedUserMountsWhereFuseAllowsIt) {
  // Debian's udev rule makes /dev/fuse 0666; some containers (this CI's included) leave it 0600,
  // where FUSE allows no user mounts at all. The test sets the Debian mode and puts it back.
  struct stat fuse_dev;
  ASSERT_EQ(::stat("/dev/fuse", &fuse_dev), 0);
  const mode_t old_mode = fuse_dev.st_mode & 07777;
  ASSERT_EQ(::chmod("/dev/fuse", 0666), 0);
  struct Restore {
    mode_t mode;
    ~Restore() { ::chmod("/dev/fuse", mode); }
  } restore{old_mode};
  std::string dir = tmp_ / "user";
  std::filesystem::create_directories(dir + "/mnt");
  ASSERT_EQ(::chmod(tmp_.path().c_str(), 0755), 0);
  ASSERT_EQ(::chmod(dir.c_str(), 0755), 0);
  ASSERT_EQ(::chown((dir + "/mnt").c_str(), 65534, 65534), 0);
  auto pack = RunCommand({MmfsBinary(), "pack", "-q", tmp_ / "src", dir + "/data.mmfs"});
  ASSERT_EQ(pack.exit_code, 0) << pack.output;
  Shell("chmod -R a+rX " + dir + "/data.mmfs");
  auto as_nobody = [](std::vector<std::string> argv) {
    std::vector<std::string> full = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
    full.insert(full.end(), argv.begin(), argv.end());
    return RunCommand(full, 60);
  };
  std::string mnt = dir + "/mnt";
  auto mount = as_nobody({MmfsBinary(), "mount", dir + "/data.mmfs", mnt});
  ASSERT_EQ(mount.exit_code, 0) << mount.output;
  auto cat = as_nobody({"cat", mnt + "/train/a/1.txt"});
  EXPECT_EQ(cat.output, "caption");
  std::string line;
  for (std::istringstream in(ReadFile("/proc/mounts")); std::getline(in, line);) {
    if (line.find(" " + mnt + " ") != std::string::npos) break;
  }
  EXPECT_NE(line.find("user_id=65534"), std::string::npos) << line;
  EXPECT_NE(line.find("nosuid"), std::string::npos) << line;
  EXPECT_NE(line.find("nodev"), std::string::npos) << line;
  auto umount = as_nobody({MmfsBinary(), "umount", mnt});
  EXPECT_EQ(umount.exit_code, 0) << umount.output;
  EXPECT_TRUE(WaitFor([&] { return !IsMountPoint(mnt) && FindDaemons(mnt).empty(); }, 20));
  if (IsMountPoint(mnt)) ForceCleanup(mnt);
  // Root unmounts the user's mount too, though FUSE lets root see nothing inside it without
  // allow_other: `mmfs umount` verifies the mount's ID without asking the mount anything.
  mount = as_nobody({MmfsBinary(), "mount", dir + "/data.mmfs", mnt});
  ASSERT_EQ(mount.exit_code, 0) << mount.output;
  auto by_root = RunCommand({MmfsBinary(), "umount", mnt});
  EXPECT_EQ(by_root.exit_code, 0) << by_root.output;
  EXPECT_TRUE(WaitFor([&] { return !IsMountPoint(mnt) && FindDaemons(mnt).empty(); }, 20));
  if (IsMountPoint(mnt)) ForceCleanup(mnt);
}

TEST_F(LifecycleTest, SigintUnmountsCleanly) {
  ForegroundMount m(dst(), mnt());
  ASSERT_TRUE(m.mounted());
  EXPECT_EQ(m.StopWith(SIGINT), 0);
  EXPECT_FALSE(IsMountPoint(mnt()));
}

TEST_F(LifecycleTest, MountRecoversAStaleMountAfterKill9) {
  ForegroundMount dying(dst(), mnt());
  ASSERT_TRUE(dying.mounted());
  EXPECT_EQ(dying.StopWith(SIGKILL), -1);  // died by a signal: the mount is left stale
  ASSERT_TRUE(WaitFor([&] {
    struct statfs st;  // statfs reaches the daemon; stat may be answered from cached attributes
    return ::statfs(mnt().c_str(), &st) != 0 && errno == ENOTCONN;
  }, 20)) << "the mount did not go stale";
  auto r = RunCommand({MmfsBinary(), "mount", dst(), mnt()}, 60);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("stale mount"), std::string::npos) << r.output;
  EXPECT_EQ(ReadFile(mnt() + "/train/a/1.txt"), "caption");
  EXPECT_EQ(RunCommand({MmfsBinary(), "umount", mnt()}).exit_code, 0);
  EXPECT_TRUE(WaitFor([&] { return FindDaemons(mnt()).empty(); }, 20));
}

// The auto_unmount watchers (fs/fuse/auto_unmount.h) started for `mnt`.
std::vector<pid_t> AutoUnmountWatchers(const std::string& mnt) {
  std::vector<pid_t> pids;
  for (pid_t pid : FindDaemons(mnt)) {
    if (ReadFile("/proc/" + std::to_string(pid) + "/cmdline").find("__auto-unmount") !=
        std::string::npos) {
      pids.push_back(pid);
    }
  }
  return pids;
}

bool InMountTable(const std::string& mnt) {
  return ReadFile("/proc/self/mountinfo").find(" " + mnt + " ") != std::string::npos;
}

// -o auto_unmount: the mount goes when its daemon dies, kill -9 included. As root with libfuse
// 3.17 or later the daemon's own watcher does it (libfuse's would need fusermount3 3.17); with
// 3.14 libfuse has fusermount3 do it. Either way nothing is left behind.
TEST_F(LifecycleTest, AutoUnmountTakesTheMountAwayWhenTheDaemonIsKilled) {
  if (::geteuid() != 0) GTEST_SKIP() << "root's mounts; a user's go through fusermount3";
  ForegroundMount dying(dst(), mnt(), {"-o", "auto_unmount"});
  ASSERT_TRUE(dying.mounted());
  EXPECT_EQ(ReadFile(mnt() + "/train/a/1.txt"), "caption");
  EXPECT_EQ(dying.StopWith(SIGKILL), -1);
  EXPECT_TRUE(WaitFor([&] { return !InMountTable(mnt()); }, 20))
      << "the mount outlived its daemon";
  EXPECT_TRUE(WaitFor([&] { return FindDaemons(mnt()).empty(); }, 20))
      << "a watcher or helper was left running";
}

// The watcher unmounts only the mount its daemon made: after a clean exit (the daemon unmounts
// itself) a new mount at the same place stays.
TEST_F(LifecycleTest, AutoUnmountLeavesALaterMountAlone) {
  if (::geteuid() != 0) GTEST_SKIP() << "root's mounts; a user's go through fusermount3";
  {
    ForegroundMount first(dst(), mnt(), {"-o", "auto_unmount"});
    ASSERT_TRUE(first.mounted());
    EXPECT_EQ(first.StopWith(SIGTERM), 0);
  }
  ForegroundMount second(dst(), mnt());
  ASSERT_TRUE(second.mounted());
  EXPECT_TRUE(WaitFor([&] { return AutoUnmountWatchers(mnt()).empty(); }, 20))
      << "the first mount's watcher did not end";
  EXPECT_TRUE(InMountTable(mnt()));
  EXPECT_EQ(ReadFile(mnt() + "/train/a/1.txt"), "caption");
}

// Whether `pid`'s malloc heap (the [heap] mapping) is advised for transparent huge pages: its
// VmFlags in smaps hold "hg".
bool HeapAdvisedHuge(pid_t pid) {
  std::istringstream smaps(ReadFile("/proc/" + std::to_string(pid) + "/smaps"));
  bool in_heap = false;
  for (std::string line; std::getline(smaps, line);) {
    if (line.size() >= 6 && line.compare(line.size() - 6, 6, "[heap]") == 0) in_heap = true;
    if (in_heap && line.rfind("VmFlags:", 0) == 0) return (line + " ").find(" hg ") != std::string::npos;
  }
  return false;
}

// Whether `pid` has a thread named `name`.
bool HasThread(pid_t pid, const std::string& name) {
  const std::string task = "/proc/" + std::to_string(pid) + "/task";
  std::error_code ec;
  for (const auto& t : std::filesystem::directory_iterator(task, ec)) {
    if (ReadFile(t.path().string() + "/comm") == name + "\n") return true;
  }
  return false;
}

// What the daemon's stats say of its heap: huge pages, and the prefaulter's bytes.
nlohmann::json HeapStats(const std::string& mnt) {
  return nlohmann::json::parse(ReadFile(mnt + "/.mmfs/stats"))["memory"]["heap"];
}

// The kernel setting under which mmfs asks glibc for huge pages (tools/mmfs/huge_page_heap.h).
bool KernelAdvisesHugePages() {
  return ReadFile("/sys/kernel/mm/transparent_hugepage/enabled").find("[madvise]") !=
         std::string::npos;
}

// The daemon's heap asks for transparent huge pages (tools/mmfs/huge_page_heap.h: `mmfs mount`
// starts itself again with glibc's tunables), and what the daemon starts gets the environment
// the user gave it, without those tunables.
TEST_F(LifecycleTest, TheDaemonsHeapIsOnHugePagesAndItsChildrenGetTheUsersEnvironment) {
  if (kSanitizedBuild) GTEST_SKIP() << "the sanitizers' allocators are not glibc's";
  if (!KernelAdvisesHugePages()) GTEST_SKIP() << "the kernel's THP setting is not madvise";
  if (::geteuid() != 0) GTEST_SKIP() << "the auto_unmount watcher: root's mounts";
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables != nullptr && std::string(tunables).find("glibc.malloc.hugetlb") != std::string::npos) {
    GTEST_SKIP() << "GLIBC_TUNABLES already chooses glibc.malloc.hugetlb";
  }
  ForegroundMount m(dst(), mnt(), {"-o", "auto_unmount"});
  ASSERT_TRUE(m.mounted());
  EXPECT_EQ(ReadFile(mnt() + "/train/a/1.txt"), "caption");
  EXPECT_TRUE(HeapAdvisedHuge(m.pid()));
  // The prefaulter populates each growth step of the heap (base/heap_prefaulter.h), where the
  // kernel has the advice it uses.
  const bool prefaults = HeapPrefaulter::Supported();
  EXPECT_EQ(HasThread(m.pid(), "mmfs-prefault"), prefaults);
  EXPECT_EQ(HeapStats(mnt())["huge_pages"], true);
  EXPECT_EQ(HeapStats(mnt())["prefaulting"], prefaults);
  EXPECT_NE(RunCommand({MmfsBinary(), "stats", mnt()}).output.find("heap on huge pages"),
            std::string::npos);
  std::vector<pid_t> watchers;
  ASSERT_TRUE(WaitFor([&] { return !(watchers = AutoUnmountWatchers(mnt())).empty(); }, 20));
  const std::string env = ReadFile("/proc/" + std::to_string(watchers[0]) + "/environ");
  EXPECT_EQ(env.find("glibc.malloc.hugetlb"), std::string::npos);
  EXPECT_EQ(env.find("MMFS_HUGE_HEAP_RESTARTED"), std::string::npos);
  EXPECT_EQ(m.StopWith(SIGTERM), 0);
  EXPECT_TRUE(WaitFor([&] { return FindDaemons(mnt()).empty(); }, 20))
      << "the watcher did not end with its daemon";
}

// -o huge_pages=off, and shared-limit mode (memory is short there; the allocator gives memory
// back instead), keep the heap on small pages.
TEST_F(LifecycleTest, HugePagesOffOrASharedLimitKeepTheHeapOnSmallPages) {
  if (kSanitizedBuild) GTEST_SKIP() << "the sanitizers' allocators are not glibc's";
  if (!KernelAdvisesHugePages()) GTEST_SKIP() << "the kernel's THP setting is not madvise";
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"-o", "huge_pages=off"},
        std::vector<std::string>{"-o", "memory=256M"}}) {
    ForegroundMount m(dst(), mnt(), extra);
    ASSERT_TRUE(m.mounted()) << extra[1];
    EXPECT_EQ(ReadFile(mnt() + "/train/a/1.txt"), "caption") << extra[1];
    EXPECT_FALSE(HeapAdvisedHuge(m.pid())) << extra[1];
    EXPECT_FALSE(HasThread(m.pid(), "mmfs-prefault")) << extra[1];
    EXPECT_EQ(HeapStats(mnt())["huge_pages"], false) << extra[1];
  }
}

// Every request the daemon has answered, from MNT/.mmfs/stats.
uint64_t RequestsServed(const std::string& mnt) {
  auto j = nlohmann::json::parse(ReadFile(mnt + "/.mmfs/stats"));
  uint64_t n = 0;
  for (const auto& [op, v] : j["requests"].items()) n += v["count"].get<uint64_t>();
  return n;
}

// The front of an --overlay mount seen in the mount table, or "" if there is none.
std::string OverlayFrontDir(const std::string& mnt) {
  std::istringstream info(ReadFile("/proc/self/mountinfo"));
  std::string found;
  for (std::string line; std::getline(info, line);) {
    std::istringstream f(line);
    std::string id, parent, dev, root, point;
    f >> id >> parent >> dev >> root >> point;
    size_t lower = line.find("lowerdir=");
    if (point != mnt || line.find(" - overlay ") == std::string::npos || lower == std::string::npos) {
      continue;
    }
    std::string fuse = line.substr(lower + 9, line.find(':', lower) - lower - 9);
    found = fuse.substr(0, fuse.rfind('/'));
  }
  return found;
}

// Python's open() asks isatty() (an ioctl) of every file, and the kernel forwards every ioctl
// on a FUSE file to the daemon; an overlay in front answers it in the kernel, so warm reads by
// Python cost the daemon nothing at all. Unmounting the overlay stops the daemon.
TEST_F(LifecycleTest, OverlayFrontKeepsWarmPythonReadsAwayFromTheDaemon) {
  ASSERT_EQ(::geteuid(), 0u) << "--overlay needs root; the test suite runs as root";
  ForegroundMount m(dst(), mnt(), {"--overlay"});
  ASSERT_TRUE(m.mounted());
  std::string front = OverlayFrontDir(mnt());
  ASSERT_FALSE(front.empty()) << "no overlay at " << mnt();
  EXPECT_TRUE(IsMountPoint(front + "/fuse"));
  const std::vector<std::string> python = {
      "/usr/bin/python3", "-c",
      "import sys\n"
      "for _ in range(5):\n"
      "  for p in sys.argv[1:]: print(len(open(p, 'rb').read()))",
      mnt() + "/train/a/1.jpg", mnt() + "/train/a/1.txt"};
  auto cold = RunCommand(python);  // the first reads reach the daemon
  ASSERT_EQ(cold.exit_code, 0) << cold.output;
  // Reading the stats costs requests itself: measure that, then the same around warm reads.
  uint64_t first = RequestsServed(mnt());
  uint64_t before = RequestsServed(mnt());
  auto warm = RunCommand(python);
  uint64_t after = RequestsServed(mnt());
  EXPECT_EQ(warm.output, cold.output);
  EXPECT_EQ(after - before, before - first) << "warm Python reads reached the daemon";
  // `.mmfs` (a link into the FUSE mount) stays hidden and gives fresh stats every time.
  EXPECT_EQ(RunCommand({"ls", "-a", mnt()}).output.find(".mmfs"), std::string::npos);
  auto stats = RunCommand({MmfsBinary(), "stats", mnt()});
  EXPECT_EQ(stats.exit_code, 0) << stats.output;
  // `umount MNT`, as for any kernel mount: the daemon follows, and leaves nothing behind.
  ASSERT_EQ(::umount2(mnt().c_str(), 0), 0) << std::strerror(errno);
  EXPECT_EQ(m.StopWith(0), 0);
  EXPECT_FALSE(IsMountPoint(mnt()));
  EXPECT_FALSE(std::filesystem::exists(front)) << front << " was left behind";
}

// Starts an --overlay daemon by hand (ForegroundMount would clean up after it) and kills it with
// SIGKILL: a stale overlay on mnt() and, under it, the dead daemon's FUSE mount. Returns the
// dead daemon's front directory, or "" if that did not happen (TearDown kills what is left).
std::string LifecycleTest::StaleOverlayMount() {
  pid_t pid = ::fork();
  if (pid == 0) {
    ::execl(MmfsBinary().c_str(), "mmfs", "mount", "-f", "--overlay", dst().c_str(),
            mnt().c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  bool up = WaitFor([&] { return !OverlayFrontDir(mnt()).empty(); }, 30);
  const std::string front = OverlayFrontDir(mnt());
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  bool stale = up && WaitFor([&] {
    struct statfs st;
    return ::statfs(mnt().c_str(), &st) != 0 && errno == ENOTCONN;
  }, 20);
  return stale ? front : "";
}

TEST_F(LifecycleTest, OverlayFrontDaemonModeUmountAndRecoveryAfterKill9) {
  ASSERT_EQ(::geteuid(), 0u) << "--overlay needs root; the test suite runs as root";
  auto r = RunCommand({MmfsBinary(), "mount", "--overlay", dst(), mnt()}, 60);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(ReadFile(mnt() + "/train/a/1.txt"), "caption");
  auto u = RunCommand({MmfsBinary(), "umount", mnt()});
  EXPECT_EQ(u.exit_code, 0) << u.output;
  EXPECT_FALSE(IsMountPoint(mnt()));
  EXPECT_TRUE(WaitFor([&] { return FindDaemons(mnt()).empty(); }, 20)) << "daemon did not exit";

  const std::string dead_front = StaleOverlayMount();
  ASSERT_FALSE(dead_front.empty()) << "no stale overlay to recover from";
  // A new mount detaches the stale overlay and the dead daemon's FUSE mount under it.
  r = RunCommand({MmfsBinary(), "mount", "--overlay", dst(), mnt()}, 60);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("stale mount"), std::string::npos) << r.output;
  EXPECT_EQ(ReadFile(mnt() + "/train/a/1.txt"), "caption");
  EXPECT_FALSE(std::filesystem::exists(dead_front)) << dead_front << " was left behind";
  EXPECT_EQ(RunCommand({MmfsBinary(), "umount", mnt()}).exit_code, 0);
  EXPECT_TRUE(WaitFor([&] { return FindDaemons(mnt()).empty(); }, 20));
}

// `mmfs umount` also removes an --overlay mount whose daemon was killed (statfs on it fails with
// ENOTCONN; the mount table still says overlay).
TEST_F(LifecycleTest, UmountRemovesAStaleOverlay) {
  ASSERT_EQ(::geteuid(), 0u) << "--overlay needs root; the test suite runs as root";
  const std::string dead_front = StaleOverlayMount();
  ASSERT_FALSE(dead_front.empty()) << "no stale overlay to remove";
  auto u = RunCommand({MmfsBinary(), "umount", mnt()});
  EXPECT_EQ(u.exit_code, 0) << u.output;
  EXPECT_FALSE(IsMountPoint(mnt()));
  EXPECT_FALSE(std::filesystem::exists(dead_front)) << dead_front << " was left behind";
}

TEST_F(LifecycleTest, RemountGivesSameInodes) {
  struct stat first, second;
  {
    ForegroundMount m(dst(), mnt());
    ASSERT_TRUE(m.mounted());
    ASSERT_EQ(::stat((mnt() + "/train/a/1.jpg").c_str(), &first), 0);
  }
  ForegroundMount m(dst(), mnt());
  ASSERT_TRUE(m.mounted());
  ASSERT_EQ(::stat((mnt() + "/train/a/1.jpg").c_str(), &second), 0);
  EXPECT_EQ(first.st_ino, second.st_ino);
}

TEST_F(LifecycleTest, ReaddirplusListingsMatchTheSource) {
  for (int i = 0; i < 3000; ++i) {
    WriteFile(tmp_ / ("src/train/b/" + std::to_string(i) + ".txt"), std::to_string(i));
  }
  auto pack = RunCommand({MmfsBinary(), "pack", "--force", "-q", tmp_ / "src", dst()});
  ASSERT_EQ(pack.exit_code, 0) << pack.output;
  const std::string list = "find . -printf '%y %s %m %T@ %p\\n' | LC_ALL=C sort";
  auto expected = Shell("cd '" + tmp_ / "src/train" + "' && " + list);
  for (const char* mode : {"readdirplus=always", "readdirplus=auto", "readdirplus=off"}) {
    ForegroundMount m(dst(), mnt(), {"-o", mode});
    ASSERT_TRUE(m.mounted()) << mode;
    auto got = Shell("cd '" + mnt() + "/train' && " + list);
    EXPECT_EQ(got.exit_code, 0) << mode;
    // Directory sizes differ by design (listing lines for 'd' carry them); compare files.
    auto files_only = [](const std::string& text) {
      std::string out;
      size_t start = 0;
      while (start < text.size()) {
        size_t nl = text.find('\n', start);
        std::string line = text.substr(start, nl - start);
        if (!line.empty() && line[0] != 'd') out += line + "\n";
        start = nl == std::string::npos ? text.size() : nl + 1;
      }
      return out;
    };
    EXPECT_EQ(files_only(got.output), files_only(expected.output)) << mode;
    EXPECT_GT(files_only(got.output).size(), 3000u * 10) << mode;
    EXPECT_EQ(m.StopWith(SIGTERM), 0);
  }
}

// With readdirplus a listing hands the kernel every entry with its attributes, so a loader that
// lists a folder and then opens its files (ImageFolder) costs no LOOKUP per file.
TEST_F(LifecycleTest, ReaddirplusAlwaysSparesALookupPerFileAfterAListing) {
  for (int i = 0; i < 40; ++i) {
    WriteFile(tmp_ / ("src/train/c/" + std::to_string(i) + ".txt"), std::to_string(i));
  }
  auto pack = RunCommand({MmfsBinary(), "pack", "--force", "-q", tmp_ / "src", dst()});
  ASSERT_EQ(pack.exit_code, 0) << pack.output;
  auto lookups = [&] {
    auto j = nlohmann::json::parse(ReadFile(mnt() + "/.mmfs/stats"));
    return j["requests"]["lookup"]["count"].get<uint64_t>();
  };
  const std::vector<std::string> python = {
      "/usr/bin/python3", "-c",
      "import os, sys\n"
      "d = sys.argv[1]\n"
      "print(sum(len(open(e.path, 'rb').read()) for e in os.scandir(d)))",
      mnt() + "/train/c"};
  for (const char* mode : {"readdirplus=always", "readdirplus=off"}) {
    ForegroundMount m(dst(), mnt(), {"-o", mode});
    ASSERT_TRUE(m.mounted()) << mode;
    uint64_t first = lookups();
    uint64_t before = lookups();
    auto run = RunCommand(python);
    uint64_t after = lookups();
    EXPECT_EQ(run.exit_code, 0) << run.output;
    uint64_t per_epoch = (after - before) - (before - first);  // minus the stats file's own
    if (std::string(mode) == "readdirplus=always") {
      EXPECT_LE(per_epoch, 2u) << "LOOKUPs after a readdirplus listing";
    } else {
      EXPECT_GE(per_epoch, 40u) << "without readdirplus every open looks its name up";
    }
    EXPECT_EQ(m.StopWith(SIGTERM), 0);
  }
}

TEST_F(LifecycleTest, VerifyFindsAFlippedByteAndInfoDescribes) {
  auto ok = RunCommand({MmfsBinary(), "verify", dst()});
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_NE(ok.output.find("intact"), std::string::npos) << ok.output;
  auto info = RunCommand({MmfsBinary(), "info", "--json", dst()});
  ASSERT_EQ(info.exit_code, 0) << info.output;
  EXPECT_NE(info.output.find("\"samples\": 1"), std::string::npos) << info.output;
  EXPECT_NE(info.output.find("\"images\": 1"), std::string::npos) << info.output;
  // Flip one byte of the caption's bytes in the shard.
  std::string shard = ReadFile(dst() + "/shard-00000.mdb");
  size_t at = shard.find("caption");
  ASSERT_NE(at, std::string::npos);
  shard[at] = 'C';
  WriteFile(dst() + "/shard-00000.mdb", shard);
  auto bad = RunCommand({MmfsBinary(), "verify", dst()});
  EXPECT_EQ(bad.exit_code, 1) << bad.output;
  EXPECT_NE(bad.output.find("DAMAGED train/a/1.txt"), std::string::npos) << bad.output;
  auto not_dataset = RunCommand({MmfsBinary(), "verify", tmp_ / "src"});
  EXPECT_NE(not_dataset.exit_code, 0);
  EXPECT_NE(not_dataset.output.find("not an mmfs dataset"), std::string::npos);
}

TEST_F(LifecycleTest, PackCommandSummaryAndErrors) {
  auto again = RunCommand({MmfsBinary(), "pack", tmp_ / "src", dst()});
  EXPECT_NE(again.exit_code, 0);
  EXPECT_NE(again.output.find("--force"), std::string::npos) << again.output;
  auto forced = RunCommand({MmfsBinary(), "pack", "--force", "--json", tmp_ / "src", dst()});
  EXPECT_EQ(forced.exit_code, 0) << forced.output;
  EXPECT_NE(forced.output.find("\"samples\": 1"), std::string::npos) << forced.output;
  auto help = RunCommand({MmfsBinary(), "pack", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.output.find("--on-bad"), std::string::npos);
}

TEST_F(LifecycleTest, WebDatasetTarsPackMountAndReadLikeTheirMembers) {
  // Two img2dataset-style shards made by tar(1), one gzip-compressed; then a real mount.
  for (int shard = 0; shard < 2; ++shard) {
    std::string dir = tmp_ / ("members" + std::to_string(shard));
    for (int i = 0; i < 20; ++i) {
      std::string key = dir + "/" + std::to_string(shard * 10000 + i);
      WriteFile(key + ".jpg", MakeJpeg(16 + i, 8, static_cast<unsigned>(shard * 100 + i)));
      WriteFile(key + ".txt", "caption " + std::to_string(i));
    }
  }
  std::filesystem::create_directories(tmp_ / "wds");
  auto tar = Shell("cd " + (tmp_ / "members0") + " && tar cf " + (tmp_ / "wds/00000.tar") +
              " * && cd " + (tmp_ / "members1") + " && tar czf " + (tmp_ / "wds/00001.tar.gz") +
              " *");
  ASSERT_EQ(tar.exit_code, 0) << tar.output;
  auto pack = RunCommand({MmfsBinary(), "pack", "-q", "-j", "2", tmp_ / "wds", tmp_ / "wds.mmfs"});
  ASSERT_EQ(pack.exit_code, 0) << pack.output;
  ForegroundMount m(tmp_ / "wds.mmfs", mnt());
  ASSERT_TRUE(m.mounted());
  auto diff0 = RunCommand({"diff", "-r", tmp_ / "members0", mnt() + "/00000"});
  EXPECT_EQ(diff0.exit_code, 0) << diff0.output;
  auto diff1 = RunCommand({"diff", "-r", tmp_ / "members1", mnt() + "/00001"});
  EXPECT_EQ(diff1.exit_code, 0) << diff1.output;
  EXPECT_EQ(m.StopWith(SIGTERM), 0);
}

}  // namespace
}  // namespace mmfs::testing
