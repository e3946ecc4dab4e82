// The command line as a careless or hostile user meets it: `mmfs umount` (and the auto_unmount
// watcher run by hand) takes away mmfs mounts only and says why it will not, every mount is
// nosuid,nodev, bad or empty option values are refused up front naming the option, an unknown
// command is named as such, and a mount whose output is captured returns at once. The real
// `mmfs` binary, as root (and as nobody where a second user matters).

#include <dirent.h>
#include <gtest/gtest.h>
#include <limits.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "base/mount_table.h"
#include "fs/fuse/auto_unmount.h"
#include "tests/integration/mount_helper.h"
#include "tests/integration/one_sample_fixture.h"
#include "tests/test_util.h"

namespace mmfs::testing {
namespace {

// The mount's own flags ("ro,nosuid,nodev,relatime") as /proc/self/mountinfo lists them, or ""
// when nothing is mounted at `point`.
std::string MountFlags(const std::string& point) {
  std::istringstream info(ReadFile("/proc/self/mountinfo"));
  std::string flags;
  for (std::string line; std::getline(info, line);) {
    std::istringstream f(line);
    std::string id, parent, dev, root, at, options;
    f >> id >> parent >> dev >> root >> at >> options;
    if (at == point) flags = options;  // the last one stacked there is the visible one
  }
  return flags;
}

bool HasWord(const std::string& list, const std::string& word) {
  return ("," + list + ",").find("," + word + ",") != std::string::npos;
}

// A mount the test makes itself (tmpfs, overlay), taken away again however the test ends.
class KernelMount {
 public:
  KernelMount(const std::string& source, const std::string& point, const std::string& type,
              const std::string& data = "") : point_(point) {
    std::filesystem::create_directories(point);
    mounted_ = ::mount(source.c_str(), point.c_str(), type.c_str(), MS_NOSUID | MS_NODEV,
                       data.empty() ? nullptr : data.c_str()) == 0;
    if (!mounted_) error_ = std::strerror(errno);
  }
  ~KernelMount() {
    if (IsMountPoint(point_)) ::umount2(point_.c_str(), MNT_DETACH);
  }
  KernelMount(const KernelMount&) = delete;
  KernelMount& operator=(const KernelMount&) = delete;
  bool mounted() const { return mounted_; }
  const std::string& error() const { return error_; }

 private:
  std::string point_;
  bool mounted_ = false;
  std::string error_;
};

// What each open descriptor of process `pid` is ("/dev/null", "pipe:[123]", a path), by number.
std::vector<std::pair<int, std::string>> OpenDescriptors(pid_t pid) {
  std::vector<std::pair<int, std::string>> out;
  const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    char target[PATH_MAX];
    const ssize_t n = ::readlink((dir + "/" + e->d_name).c_str(), target, sizeof target - 1);
    if (n <= 0) continue;
    out.emplace_back(std::atoi(e->d_name), std::string(target, static_cast<size_t>(n)));
  }
  ::closedir(d);
  return out;
}

// `r` refused to unmount the tmpfs at `point` (with a file "keep" holding "x"), saying what it
// is, and the tmpfs and its file are still there.
void ExpectTmpfsRefusedAndKept(const CommandResult& r, const std::string& point) {
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find(point + " is a tmpfs mount, not an mmfs mount; refusing to unmount it"),
            std::string::npos)
      << r.output;
  EXPECT_TRUE(IsMountPoint(point));
  EXPECT_EQ(ReadFile(point + "/keep"), "x");
}

CommandResult AsNobody(std::vector<std::string> argv) {
  std::vector<std::string> full = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
  full.insert(full.end(), argv.begin(), argv.end());
  return RunCommand(full, 60);
}

class CliSafetyTest : public OneSampleMountTest {
 protected:
  void SetUp() override {
    ASSERT_EQ(::geteuid(), 0u) << "the suite runs as root (it mounts tmpfs and overlays)";
    OneSampleMountTest::SetUp();
  }
  // Mounts in daemon mode; the caller unmounts (Unmount) or TearDown complains and cleans up.
  CommandResult Mount(std::vector<std::string> extra) {
    std::vector<std::string> argv = {MmfsBinary(), "mount", dst(), mnt()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return RunCommand(argv, 60);
  }
  void Unmount() {
    auto u = RunCommand({MmfsBinary(), "umount", mnt()});
    EXPECT_EQ(u.exit_code, 0) << u.output;
    EXPECT_TRUE(WaitFor([&] { return !IsMountPoint(mnt()) && FindDaemons(mnt()).empty(); }, 20));
    if (IsMountPoint(mnt())) ForceCleanup(mnt());
  }
};

// Root's `mmfs umount` once removed a tmpfs (or anything) at the path it was given.
TEST_F(CliSafetyTest, UmountRefusesWhatIsNotAnMmfsMountNamingIt) {
  const std::string point = tmp_ / "scratch";
  KernelMount tmpfs("none", point, "tmpfs", "size=1m");
  ASSERT_TRUE(tmpfs.mounted()) << tmpfs.error();
  WriteFile(point + "/keep", "x");
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{}, std::vector<std::string>{"-z"}}) {
    std::vector<std::string> argv = {MmfsBinary(), "umount"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.push_back(point);
    ExpectTmpfsRefusedAndKept(RunCommand(argv), point);
  }
  // A trailing slash and a detour through `..` name the same mount.
  auto r = RunCommand({MmfsBinary(), "umount", tmp_ / "src/../scratch/"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("is a tmpfs mount, not an mmfs mount"), std::string::npos) << r.output;
  EXPECT_TRUE(IsMountPoint(point));
}

// An overlay that `mmfs mount --overlay` did not make is not an mmfs mount, even when it is
// named like one; the fronts mmfs makes still unmount (LifecycleTest.OverlayFront*).
TEST_F(CliSafetyTest, UmountRefusesAnOverlayMmfsDidNotMake) {
  std::filesystem::create_directories(tmp_ / "lower1");
  std::filesystem::create_directories(tmp_ / "lower2");
  const std::string point = tmp_ / "ovl";
  KernelMount overlay("mmfs:" + dst(), point, "overlay",
                      "lowerdir=" + (tmp_ / "lower1") + ":" + (tmp_ / "lower2"));
  ASSERT_TRUE(overlay.mounted()) << overlay.error();
  auto r = RunCommand({MmfsBinary(), "umount", point});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find(point + " is an overlay mount not made by 'mmfs mount --overlay', not "
                                  "an mmfs mount; refusing to unmount it"),
            std::string::npos)
      << r.output;
  EXPECT_TRUE(IsMountPoint(point));
}

// It said "umount2: Invalid argument".
TEST_F(CliSafetyTest, UmountOfAPlainDirectorySaysItIsNotAMountPoint) {
  auto r = RunCommand({MmfsBinary(), "umount", mnt()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find(mnt() + " is not a mount point (nothing is mounted there)"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("Invalid argument"), std::string::npos) << r.output;
  auto missing = RunCommand({MmfsBinary(), "umount", tmp_ / "no_such_dir"});
  EXPECT_EQ(missing.exit_code, 1) << missing.output;
  EXPECT_NE(missing.output.find("cannot unmount " + (tmp_ / "no_such_dir") +
                                ": No such file or directory"),
            std::string::npos)
      << missing.output;
}

// Another user's `mmfs umount` of root's mount was told to try -z.
TEST_F(CliSafetyTest, UnprivilegedUmountOfRootsMountSaysWhoseItIs) {
  ASSERT_EQ(::chmod(tmp_.path().c_str(), 0755), 0);  // nobody must reach the mount point
  auto m = Mount({"-o", "allow_other"});
  ASSERT_EQ(m.exit_code, 0) << m.output;
  for (const char* lazy : {"", "-z"}) {
    std::vector<std::string> argv = {MmfsBinary(), "umount"};
    if (*lazy != '\0') argv.push_back(lazy);
    argv.push_back(mnt());
    auto r = AsNobody(argv);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find(mnt() + " is root's mmfs mount; only root may unmount it"),
              std::string::npos)
        << r.output;
    // The temporary directory's random name may itself hold "-z"; look past the path.
    std::string advice = r.output;
    for (size_t at; (at = advice.find(mnt())) != std::string::npos;) {
      advice.erase(at, mnt().size());
    }
    EXPECT_EQ(advice.find("-z"), std::string::npos) << r.output;
    EXPECT_TRUE(IsMountPoint(mnt()));
  }
  Unmount();
}

// Root's mount with -o suid,dev,allow_other once came up without nosuid and nodev, so a file the
// index marks setuid ran as root for any user.
TEST_F(CliSafetyTest, SuidAndDevAreRefusedAndEveryMountIsNosuidNodev) {
  for (const char* opts : {"suid,allow_other", "allow_other,dev", "suid,dev,allow_other"}) {
    auto r = Mount({"-o", opts});
    EXPECT_EQ(r.exit_code, 2) << opts << ": " << r.output;
    EXPECT_NE(r.output.find("mmfs mounts are always nosuid,nodev: -o "), std::string::npos)
        << opts << ": " << r.output;
    if (IsMountPoint(mnt())) {
      ADD_FAILURE() << "-o " << opts << " mounted with flags " << MountFlags(mnt());
      Unmount();
    }
  }
  // Plain, with allow_other (where it matters), and with nosuid,nodev spelled out.
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{}, std::vector<std::string>{"-o", "allow_other"},
        std::vector<std::string>{"-o", "nosuid,nodev"}}) {
    auto r = Mount(extra);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const std::string flags = MountFlags(mnt());
    EXPECT_TRUE(HasWord(flags, "nosuid")) << flags;
    EXPECT_TRUE(HasWord(flags, "nodev")) << flags;
    EXPECT_EQ(ReadFile(mnt() + "/train/a/1.txt"), "caption");
    Unmount();
  }
}

// The mount table names a mount by its resolved path; under another name (a symlinked directory
// on the path) the daemon cannot find it to check nosuid,nodev. That check once passed silently
// when it found nothing (a later check refused the mount without saying why); now it refuses.
// A mount point reached through a symbolic link is mounted where the link leads, under the name
// the mount table gives it: the daemon checks its nosuid,nodev flags there (it refuses a mount it
// cannot find), and `mmfs umount` through the link finds it.
TEST_F(CliSafetyTest, AMountPointThroughASymlinkIsMountedAtItsRealPath) {
  const std::string link = tmp_ / "link";
  std::filesystem::create_directory_symlink(tmp_.path(), link);
  auto r = RunCommand({MmfsBinary(), "mount", dst(), link + "/mnt"}, 60);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(IsMountPoint(mnt()));
  const std::string table = ReadFile("/proc/self/mounts");
  EXPECT_NE(table.find(" " + mnt() + " fuse.mmfs "), std::string::npos) << table;
  auto u = RunCommand({MmfsBinary(), "umount", link + "/mnt"}, 60);
  EXPECT_EQ(u.exit_code, 0) << u.output;
  EXPECT_TRUE(WaitFor([&] { return !IsMountPoint(mnt()) && FindDaemons(mnt()).empty(); }, 20));
  if (IsMountPoint(mnt())) ForceCleanup(mnt());

  // The mount point itself a link to the real one (/data -> /nvme/data).
  const std::string point_link = tmp_ / "point";
  std::filesystem::create_directory_symlink(mnt(), point_link);
  auto r2 = RunCommand({MmfsBinary(), "mount", dst(), point_link}, 60);
  ASSERT_EQ(r2.exit_code, 0) << r2.output;
  EXPECT_TRUE(IsMountPoint(mnt()));
  auto u2 = RunCommand({MmfsBinary(), "umount", mnt()}, 60);
  EXPECT_EQ(u2.exit_code, 0) << u2.output;
  EXPECT_TRUE(WaitFor([&] { return !IsMountPoint(mnt()) && FindDaemons(mnt()).empty(); }, 20));
  if (IsMountPoint(mnt())) ForceCleanup(mnt());
}

// Bad values reach the binary's one parser from both spellings and are refused before any fork,
// naming the option; nothing is mounted.
TEST_F(CliSafetyTest, BadOptionValuesAreRefusedNamingTheOption) {
  const std::pair<std::vector<std::string>, std::string> cases[] = {
      {{"-o", "threads=5x"}, "-o threads=5x: not a whole number"},
      {{"-o", "threads=-1"}, "-o threads=-1: not a whole number"},
      {{"-o", "threads=100000"}, "-o threads=100000: must be between 1 and 256"},
      {{"--threads", "0"}, "--threads 0: must be between 1 and 256"},
      {{"-o", "read_ahead_kb=-5"}, "-o read_ahead_kb=-5: not a whole number"},
      {{"-o", "read_ahead_kb=abc"}, "-o read_ahead_kb=abc: not a whole number"},
      {{"--ram-cache", ""}, "--ram-cache '': needs a value"},
      // libfuse ended the session as the kernel connected: "Connection refused".
      {{"-o", "max_read=1"}, "-o max_read=1: not supported"},
      // They would override subtype=mmfs, and `mmfs umount` would then refuse the mount.
      {{"-o", "subtype=other"}, "-o subtype=other: not allowed; mmfs sets the subtype"},
      {{"-o", "fsname=x"}, "-o fsname=x: not allowed; mmfs sets the fsname"},
  };
  for (const auto& [extra, message] : cases) {
    auto r = Mount(extra);
    EXPECT_EQ(r.exit_code, 2) << extra[1] << ": " << r.output;
    EXPECT_NE(r.output.find("mmfs: error: " + message), std::string::npos)
        << extra[1] << ": " << r.output;
    EXPECT_EQ(r.output.find("Connection refused"), std::string::npos) << r.output;
    if (IsMountPoint(mnt())) {
      ADD_FAILURE() << extra[0] << " " << extra[1] << " was mounted";
      Unmount();
    }
  }
  // --view has no -o twin; CLI11 checks it against the sides a view can have. 0 once mounted
  // the original tree without a word.
  auto view = Mount({"--view", "0"});
  EXPECT_NE(view.exit_code, 0) << view.output;
  EXPECT_NE(view.output.find("--view: Value 0 not in range 16 to 8192"), std::string::npos)
      << view.output;
  if (IsMountPoint(mnt())) {
    ADD_FAILURE() << "--view 0 was mounted";
    Unmount();
  }
}

// `out=$(mmfs mount ... -o auto_unmount 2>&1)` did not return until the mount ended (628 s):
// root's auto_unmount watcher kept the caller's stderr. Here the command runs with its output
// into a pipe, as a shell's capture, `| tee`, ssh or Python's subprocess run it, and a file open
// on descriptor 7, as `flock FILE mmfs mount` passes its lock: the output must end when the
// command exits, and nothing the mount leaves running (the daemon, the watcher) may hold any of
// the caller's descriptors.
TEST_F(CliSafetyTest, ACapturedMountReturnsAtOnceAndKeepsNoneOfTheCallersDescriptors) {
  const std::string held = tmp_ / "held-by-the-caller";
  WriteFile(held, "");
  const auto start = std::chrono::steady_clock::now();
  // RunCommand polls the pipe until its end, with this deadline.
  auto r = RunCommand({"/bin/sh", "-c", "exec 7<\"$0\"; exec \"$1\" mount \"$2\" \"$3\" -o auto_unmount",
                       held, MmfsBinary(), dst(), mnt()},
                      20);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("timed out"), std::string::npos)
      << "the command's output stayed open after it exited (" << took << " s)";
  EXPECT_LT(took, 15.0);
  ASSERT_TRUE(IsMountPoint(mnt())) << r.output;
  EXPECT_EQ(ReadFile(mnt() + "/train/a/1.txt"), "caption");
  std::vector<pid_t> left = FindDaemons(mnt());
  EXPECT_FALSE(left.empty());
  size_t watchers = 0;
  for (pid_t pid : left) {
    const std::string cmdline = ReadFile("/proc/" + std::to_string(pid) + "/cmdline");
    watchers += cmdline.find(fs::kAutoUnmountCommand) != std::string::npos;
    for (const auto& [fd, target] : OpenDescriptors(pid)) {
      EXPECT_NE(target, held) << "pid " << pid << " holds the caller's file as fd " << fd;
      if (fd <= 2) {
        EXPECT_EQ(target, "/dev/null") << "pid " << pid << " fd " << fd;
      }
    }
  }
  if (fs::NeedsOwnAutoUnmount()) {
    EXPECT_EQ(watchers, 1u);
  }
  Unmount();
}

// `mmfs __auto-unmount MNT ID`, run by hand as root with a pipe at its end, detached whatever
// had that mount ID, a tmpfs included. It checks, as `mmfs umount` does, that it is an mmfs mount.
TEST_F(CliSafetyTest, TheAutoUnmountWatcherRunByHandRefusesWhatIsNotAnMmfsMount) {
  const std::string point = tmp_ / "scratch";
  KernelMount tmpfs("none", point, "tmpfs", "size=1m");
  ASSERT_TRUE(tmpfs.mounted()) << tmpfs.error();
  WriteFile(point + "/keep", "x");
  const std::optional<MountEntry> entry = FindMount(point);
  ASSERT_TRUE(entry.has_value());
  // Descriptor 3 is the pipe the watcher waits on; `:` ends it at once.
  auto r = RunCommand({"/bin/sh", "-c", ": | exec \"$0\" " + std::string(fs::kAutoUnmountCommand) +
                                            " \"$1\" \"$2\" 3<&0",
                       MmfsBinary(), point, std::to_string(entry->mount_id)},
                      20);
  ExpectTmpfsRefusedAndKept(r, point);
}

// `--log-file "$LOG"` with LOG unset logged to syslog, `--endpoint ""` sent signed requests to
// AWS, `--ca-file ""` trusted every system CA: a value given empty is refused, naming the option,
// and nothing is mounted.
TEST_F(CliSafetyTest, EmptyValuesAreRefusedNotTakenAsTheDefault) {
  for (const char* option : {"--log-file", "--endpoint", "--ca-file", "--cache-dir"}) {
    auto r = Mount({option, ""});
    EXPECT_NE(r.exit_code, 0) << option << ": " << r.output;
    EXPECT_NE(r.output.find(option), std::string::npos) << r.output;
    EXPECT_TRUE(r.output.find("given empty") != std::string::npos ||
                r.output.find("needs a value") != std::string::npos)
        << r.output;
    if (IsMountPoint(mnt())) {
      ADD_FAILURE() << option << " '' was mounted";
      Unmount();
    }
  }
}

// --endpoint and --ca-file were ignored without a word for a local dataset.
TEST_F(CliSafetyTest, RemoteOptionsForALocalDatasetAreRefused) {
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"--endpoint", "http://127.0.0.1:1"},
        std::vector<std::string>{"--ca-file", "/etc/ssl/certs/ca-certificates.crt"}}) {
    auto r = Mount(extra);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find(extra[0] + " does not apply: " + dst() + " is a local dataset"),
              std::string::npos)
        << r.output;
    if (IsMountPoint(mnt())) {
      ADD_FAILURE() << extra[0] << " was mounted";
      Unmount();
    }
  }
}

// It said "A subcommand is required".
TEST_F(CliSafetyTest, AnUnknownCommandIsNamedAndTheCommandsListed) {
  auto r = RunCommand({MmfsBinary(), "bogus"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("unknown command 'bogus'; the commands are pack, mount, umount, stats, "
                          "warmup, view, verify, info"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("A subcommand is required"), std::string::npos) << r.output;
  auto view = RunCommand({MmfsBinary(), "view", "bogus", dst()});
  EXPECT_EQ(view.exit_code, 2) << view.output;
  EXPECT_NE(view.output.find("unknown command 'view bogus'; the view commands are add, rm, ls"),
            std::string::npos)
      << view.output;
  // Real commands are untouched by the check.
  auto info = RunCommand({MmfsBinary(), "info", dst()});
  EXPECT_EQ(info.exit_code, 0) << info.output;
}

}  // namespace
}  // namespace mmfs::testing
