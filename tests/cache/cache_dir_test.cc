// The SSD tier's cache directory on a shared disk: the path up to the directory given is walked
// without following links nobody trusted, and one dataset's folder serves one mount at a time.
#include "cache/cache_dir.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "cache/ssd_tier.h"
#include "tests/test_util.h"

namespace mmfs::cache {
namespace {

using testing::TempDir;

constexpr char kChildDirEnv[] = "MMFS_TEST_CACHE_DIR_CHILD";

Result<std::unique_ptr<SsdTier>> TryOpen(const std::string& dir, const std::string& ns = "ds-test") {
  SsdTierOptions o;
  o.dir = dir;
  o.name_space = ns;
  o.budget_bytes = 1 << 20;
  o.expected_keys = 1000;
  o.min_free_fraction = 0.0;
  return SsdTier::Open(o);
}

bool Mentions(const Status& s, const std::string& text) {
  return s.message().find(text) != std::string::npos;
}

// Not a test of its own: the body another user runs in a fresh process (see AsNobody), so the
// test process never calls into the tier between fork and exec.
TEST(CacheDirChild, OpenTheDirectoryNamedInTheEnvironment) {
  const char* dir = std::getenv(kChildDirEnv);
  if (dir == nullptr) GTEST_SKIP() << "run by other tests as another user";
  auto t = TryOpen(dir);
  std::printf("%s\n", t.ok() ? "OPENED" : ("REFUSED: " + t.status().ToString()).c_str());
  std::fflush(stdout);
  std::_Exit(t.ok() ? 0 : 1);
}

// Opens `dir` as nobody in a new process of this binary: 0 if the tier opened, 1 if refused.
testing::CommandResult AsNobody(const std::string& dir) {
  std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  return testing::RunCommand({"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                              "env", std::string(kChildDirEnv) + "=" + dir, self,
                              "--gtest_filter=CacheDirChild.*"},
                             60);
}

// Opens `dir` as uid 12345 mapped to root in a user namespace of its own (what a rootless
// container is): 0 if the tier opened, 1 if refused; -2 with no such namespace to be had.
testing::CommandResult InUserNamespace(const std::string& dir) {
  std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::vector<std::string> as_user = {"setpriv", "--reuid=12345", "--regid=12345",
                                            "--clear-groups", "unshare", "-Urm"};
  std::vector<std::string> probe = as_user;
  probe.push_back("true");
  if (testing::RunCommand(probe, 60).exit_code != 0) return {-2, "no user namespace"};
  std::vector<std::string> argv = as_user;
  argv.insert(argv.end(), {"env", std::string(kChildDirEnv) + "=" + dir, self,
                           "--gtest_filter=CacheDirChild.*"});
  return testing::RunCommand(argv, 60);
}

class CacheDirTest : public ::testing::Test {
 protected:
  TempDir tmp_;
};

// A parent another user may write to without the sticky bit lets them swap the level below it
// after it was checked: refused, for root too, and nothing is created below it.
TEST_F(CacheDirTest, ParentWritableByOthersWithoutStickyIsRefused) {
  std::string open_dir = tmp_ / "open";
  std::filesystem::create_directories(open_dir);
  ASSERT_EQ(::chmod(open_dir.c_str(), 0777), 0);
  auto t = TryOpen(open_dir + "/sub/cache");
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(Mentions(t.status(), open_dir + " (on the cache directory's path) is writable by "
                                              "every user without the sticky bit"))
      << t.status().ToString();
  EXPECT_FALSE(std::filesystem::exists(open_dir + "/sub"));
  // Group-writable is the same hole.
  ASSERT_EQ(::chmod(open_dir.c_str(), 0775), 0);
  t = TryOpen(open_dir + "/sub/cache");
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(Mentions(t.status(), "writable by its group without the sticky bit"))
      << t.status().ToString();
  // Sticky, it is fine.
  ASSERT_EQ(::chmod(open_dir.c_str(), 01777), 0);
  t = TryOpen(open_dir + "/sub/cache");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
}

// The directory given itself: root's (or the daemon user's own) 0777 directory without the
// sticky bit is refused, whoever runs mmfs, and left unchanged.
TEST_F(CacheDirTest, OpenDirectoryWithoutStickyIsRefusedEvenForRoot) {
  std::string open_dir = tmp_ / "open";
  std::filesystem::create_directories(open_dir);
  ASSERT_EQ(::chmod(open_dir.c_str(), 0777), 0);
  auto t = TryOpen(open_dir);
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(Mentions(t.status(), "cache directory " + open_dir +
                                       " is writable by every user without the sticky bit"))
      << t.status().ToString();
  EXPECT_FALSE(std::filesystem::exists(open_dir + "/mmfs-cache-v1"));
  struct stat st;
  ASSERT_EQ(::stat(open_dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0777u);
}

// A link another user planted in a shared sticky directory, as a parent of the cache directory:
// refused, and nothing is created where it points.
TEST_F(CacheDirTest, LinkPlantedInAParentIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving a link to nobody needs root";
  std::string shared = tmp_ / "shared", victim = tmp_ / "victim";
  std::filesystem::create_directories(shared);
  std::filesystem::create_directories(victim);
  ASSERT_EQ(::chmod(shared.c_str(), 01777), 0);
  std::filesystem::create_directory_symlink(victim, shared + "/planted");
  ASSERT_EQ(::lchown((shared + "/planted").c_str(), 65534, 65534), 0);
  auto t = TryOpen(shared + "/planted/cache");
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(Mentions(t.status(), shared + "/planted is a symbolic link owned by uid 65534"))
      << t.status().ToString();
  EXPECT_FALSE(std::filesystem::exists(victim + "/cache"));
  // Deeper in the path too.
  std::filesystem::create_directories(shared + "/mine");
  ASSERT_EQ(::chmod((shared + "/mine").c_str(), 01777), 0);
  std::filesystem::create_directory_symlink(victim, shared + "/mine/planted");
  ASSERT_EQ(::lchown((shared + "/mine/planted").c_str(), 65534, 65534), 0);
  t = TryOpen(shared + "/mine/planted/a/b");
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(Mentions(t.status(), "/mine/planted is a symbolic link owned by uid 65534"))
      << t.status().ToString();
  EXPECT_FALSE(std::filesystem::exists(victim + "/a"));
}

// A directory of another user on the path (not only the one given) is refused.
TEST_F(CacheDirTest, ParentOfAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving a directory to nobody needs root";
  std::filesystem::create_directories(tmp_ / "theirs");
  ASSERT_EQ(::chown((tmp_ / "theirs").c_str(), 65534, 65534), 0);
  auto t = TryOpen(tmp_ / "theirs/cache");
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(Mentions(t.status(), tmp_ / "theirs (on the cache directory's path) is owned by uid 65534"))
      << t.status().ToString();
  EXPECT_FALSE(std::filesystem::exists(tmp_ / "theirs/cache"));
}

TEST_F(CacheDirTest, RelativePathIsTakenFromTheWorkingDirectory) {
  std::string before = std::filesystem::current_path().string();
  ASSERT_EQ(::chdir(tmp_.path().c_str()), 0);
  std::filesystem::create_directories(tmp_ / "sub");
  auto t = TryOpen("rel/cache");
  auto u = TryOpen("sub/../rel2", "ds-other");
  ASSERT_EQ(::chdir(before.c_str()), 0);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_TRUE(std::filesystem::is_directory(tmp_ / "rel/cache/mmfs-cache-v1/ds-test/00"));
  EXPECT_TRUE(std::filesystem::is_directory(tmp_ / "rel2/mmfs-cache-v1/ds-other/00"));
  // Parents the walk creates are ordinary (0755 before the umask); the cache itself is 0700.
  struct stat st;
  ASSERT_EQ(::stat((tmp_ / "rel").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0700, 0700u);
  EXPECT_EQ(st.st_mode & 022, 0u);
  ASSERT_EQ(::stat((tmp_ / "rel/cache").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
}

// The operator's own link in /tmp (sticky, root's) still works, with an absolute or a relative
// target, as the directory given or as a parent of it.
TEST_F(CacheDirTest, OwnLinkInTmpWorks) {
  std::string link = "/tmp/mmfs-cache-dir-test-" + std::to_string(::getpid());
  std::filesystem::create_directories(tmp_ / "real");
  std::filesystem::create_directory_symlink(tmp_ / "real", link);
  auto t = TryOpen(link);
  auto u = TryOpen(link + "/deeper", "ds-other");
  std::filesystem::remove(link);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_TRUE(std::filesystem::is_directory(tmp_ / "real/mmfs-cache-v1/ds-test/00"));
  EXPECT_TRUE(std::filesystem::is_directory(tmp_ / "real/deeper/mmfs-cache-v1/ds-other/00"));
  // A relative target is taken from the link's own directory.
  std::filesystem::create_directory_symlink("real", tmp_ / "rel-link");
  auto v = TryOpen(tmp_ / "rel-link", "ds-third");
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_TRUE(std::filesystem::is_directory(tmp_ / "real/mmfs-cache-v1/ds-third"));
}

// A user may give root's sticky /tmp-like directory (their folders below are checked); root's
// world-writable directory without the sticky bit is refused.
TEST_F(CacheDirTest, UserMayUseRootsStickyDirectory) {
  if (::geteuid() != 0) GTEST_SKIP() << "acting as nobody needs root";
  ASSERT_EQ(::chmod(tmp_.path().c_str(), 0755), 0);
  std::string sticky = tmp_ / "sticky", open_dir = tmp_ / "open";
  std::filesystem::create_directories(sticky);
  std::filesystem::create_directories(open_dir);
  ASSERT_EQ(::chmod(sticky.c_str(), 01777), 0);
  ASSERT_EQ(::chmod(open_dir.c_str(), 0777), 0);
  auto r = AsNobody(sticky);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("OPENED"), std::string::npos) << r.output;
  struct stat st;
  ASSERT_EQ(::stat((sticky + "/mmfs-cache-v1/ds-test").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u);
  r = AsNobody(open_dir);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("without the sticky bit"), std::string::npos) << r.output;
}

// A scratch directory under /run (root's, 0755, on a tmpfs): unlike /tmp, nobody else may write
// to any level above it, which is what a user namespace's walk needs to trust the host's root.
class PrivateScratch {
 public:
  PrivateScratch() {
    std::string t = "/run/mmfs-test-XXXXXX";
    if (::mkdtemp(t.data()) != nullptr) path_ = t;
  }
  ~PrivateScratch() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  PrivateScratch(const PrivateScratch&) = delete;
  PrivateScratch& operator=(const PrivateScratch&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// In a user namespace (`unshare -Urm`) the host's root owns / and /run, which the namespace
// shows as the overflow uid: they count as root's while no level above lets others write, so a
// cache in the user's own directory opens. Below a level others may write to (a sticky
// directory), another host user's directory or link, which shows the same uid, is refused; so
// is a level open to others without the sticky bit.
TEST_F(CacheDirTest, InAUserNamespaceTheHostsRootCountsAsRoot) {
  if (::geteuid() != 0) GTEST_SKIP() << "acting as another user needs root";
  PrivateScratch scratch;
  ASSERT_FALSE(scratch.path().empty()) << "mkdtemp under /run: " << std::strerror(errno);
  ASSERT_EQ(::chmod(scratch.path().c_str(), 0755), 0);
  const std::string mine = scratch.path() + "/mine", open_dir = scratch.path() + "/open",
                    sticky = scratch.path() + "/sticky", theirs = sticky + "/theirs",
                    link = sticky + "/link";
  for (const std::string& d : {mine, open_dir, sticky, theirs}) {
    std::filesystem::create_directories(d);
  }
  ASSERT_EQ(::chown(mine.c_str(), 12345, 12345), 0);
  ASSERT_EQ(::chmod(open_dir.c_str(), 0777), 0);
  ASSERT_EQ(::chmod(sticky.c_str(), 01777), 0);
  ASSERT_EQ(::chown(theirs.c_str(), 23456, 23456), 0);
  ASSERT_EQ(::symlink(mine.c_str(), link.c_str()), 0);
  ASSERT_EQ(::lchown(link.c_str(), 23456, 23456), 0);

  auto r = InUserNamespace(mine + "/cache");
  if (r.exit_code == -2) GTEST_SKIP() << "this kernel gives unprivileged users no user namespace";
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("OPENED"), std::string::npos) << r.output;
  struct stat st;
  ASSERT_EQ(::stat((mine + "/cache/mmfs-cache-v1/ds-test").c_str(), &st), 0) << r.output;
  EXPECT_EQ(st.st_uid, 12345u);

  r = InUserNamespace(open_dir + "/cache");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("without the sticky bit"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(open_dir + "/cache"));

  r = InUserNamespace(theirs + "/cache");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find(theirs + " (on the cache directory's path) is owned by uid 65534"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(std::filesystem::exists(theirs + "/cache"));

  r = InUserNamespace(link + "/cache");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find(link + " is a symbolic link owned by uid 65534"), std::string::npos)
      << r.output;
}

// Two mounts of one dataset on one cache directory would delete each other's KEY.tmp files and
// evict each other's entries: the second is refused while the first holds the folder.
TEST_F(CacheDirTest, SecondOpenOfTheSameDatasetIsRefused) {
  auto opened = TryOpen(tmp_ / "cache");
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  std::unique_ptr<SsdTier> first = std::move(opened).value();
  std::string ns = tmp_ / "cache/mmfs-cache-v1/ds-test";
  // What the first one is writing right now.
  testing::WriteFile(ns + "/00/0000000000000100.tmp", "half written");
  auto second = TryOpen(tmp_ / "cache");
  ASSERT_FALSE(second.ok());
  EXPECT_TRUE(Mentions(second.status(), "the SSD cache " + ns + " is in use by another mmfs mount (pid " +
                                            std::to_string(::getpid()) + ")"))
      << second.status().ToString();
  EXPECT_TRUE(Mentions(second.status(), "give this mount its own --cache-dir"));
  EXPECT_TRUE(std::filesystem::exists(ns + "/00/0000000000000100.tmp"));
  // Another dataset in the same directory is fine.
  auto other = TryOpen(tmp_ / "cache", "ds-other");
  EXPECT_TRUE(other.ok()) << other.status().ToString();
  // Once the first closes, the folder is free (its leftover tmp file is then cleaned).
  first.reset();
  auto again = TryOpen(tmp_ / "cache");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_FALSE(std::filesystem::exists(ns + "/00/0000000000000100.tmp"));
}

}  // namespace
}  // namespace mmfs::cache
