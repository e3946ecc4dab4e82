// HoldMountPoint / DetachHeldMount (fs/fuse/unmount.h), what `mmfs umount` unmounts with: the
// mount checked in the mount table is the one taken away, even when a directory on the path is
// swapped for a symlink between the check and the unmount. tmpfs mounts stand in for mmfs mounts
// (the type check is the command's, CliSafetyTest); needs root.

#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "base/mount_table.h"
#include "fs/fuse/unmount.h"
#include "tests/integration/mount_helper.h"
#include "tests/test_util.h"

namespace mmfs::testing {
namespace {

// tmpfs mounts at `points`, each holding a file `which` naming it; every path in `cleanup`
// that is still a mount point when the test ends is detached.
class Tmpfs {
 public:
  explicit Tmpfs(std::vector<std::string> cleanup) : cleanup_(std::move(cleanup)) {}
  ~Tmpfs() {
    for (const std::string& p : cleanup_) {
      while (IsMountPoint(p) && ::umount2(p.c_str(), MNT_DETACH) == 0) {
      }
    }
  }
  Tmpfs(const Tmpfs&) = delete;
  Tmpfs& operator=(const Tmpfs&) = delete;
  std::string Mount(const std::string& point, const std::string& label) {
    std::filesystem::create_directories(point);
    if (::mount("none", point.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "size=1m") != 0) {
      return std::strerror(errno);
    }
    WriteFile(point + "/which", label);
    return "";
  }

 private:
  std::vector<std::string> cleanup_;
};

class HeldUnmountTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (mounts tmpfs)";
    // The mount table names directories as the kernel resolves them.
    real_ = std::filesystem::canonical(tmp_.path()).string();
  }
  TempDir tmp_;
  std::string real_;
};

TEST_F(HeldUnmountTest, UnmountsTheVerifiedMountOnlyWhenItsIdMatches) {
  Tmpfs mounts({real_ + "/a/mnt", real_ + "/b/mnt"});
  ASSERT_EQ(mounts.Mount(real_ + "/a/mnt", "a"), "");
  ASSERT_EQ(mounts.Mount(real_ + "/b/mnt", "b"), "");
  // A trailing slash and `..` name the same mount point.
  auto held = fs::HoldMountPoint(tmp_ / "b/../a/mnt/");
  ASSERT_TRUE(held.ok()) << held.status().ToString();
  EXPECT_EQ(held->table_path, real_ + "/a/mnt");
  auto a = FindMount(held->table_path);
  auto b = FindMount(real_ + "/b/mnt");
  ASSERT_TRUE(a.has_value() && b.has_value());
  EXPECT_EQ(a->fs_type, "tmpfs");
  EXPECT_NE(a->mount_id, b->mount_id);
  auto id = fs::HeldMountId(*held);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_EQ(*id, a->mount_id);

  fs::DetachOptions options;
  options.lazy = false;
  options.fuse_helper = false;
  // Another mount's ID (what the table said before a swap): nothing is unmounted.
  Status wrong = fs::DetachHeldMount(*held, b->mount_id, options);
  EXPECT_FALSE(wrong.ok());
  EXPECT_NE(wrong.message().find("changed while it was checked"), std::string::npos)
      << wrong.ToString();
  EXPECT_TRUE(IsMountPoint(real_ + "/a/mnt"));
  EXPECT_TRUE(IsMountPoint(real_ + "/b/mnt"));

  const std::string cwd = std::filesystem::current_path().string();
  Status right = fs::DetachHeldMount(*held, a->mount_id, options);
  EXPECT_TRUE(right.ok()) << right.ToString();
  EXPECT_FALSE(IsMountPoint(real_ + "/a/mnt"));
  EXPECT_TRUE(IsMountPoint(real_ + "/b/mnt"));
  EXPECT_EQ(std::filesystem::current_path().string(), cwd);  // the working directory is back
}

// fusermount's CVE-2010-3879: the owner of a directory on the path replaces it with a symlink to
// `/` after root's check, and an unmount by name would take away root's /mnt. `root/` stands in
// for `/`, `alice/` for the user's directory.
TEST_F(HeldUnmountTest, ParentSwappedForASymlinkAfterTheCheckUnmountsWhatWasChecked) {
  const std::string alice = real_ + "/alice", moved = real_ + "/alice.old";
  const std::string root_mnt = real_ + "/root/mnt";
  Tmpfs mounts({alice + "/mnt", moved + "/mnt", root_mnt});
  ASSERT_EQ(mounts.Mount(alice + "/mnt", "alice"), "");
  ASSERT_EQ(mounts.Mount(root_mnt, "root"), "");

  auto held = fs::HoldMountPoint(alice + "/mnt");
  ASSERT_TRUE(held.ok()) << held.status().ToString();
  auto checked = FindMount(held->table_path);
  ASSERT_TRUE(checked.has_value());
  // The swap, between the check and the unmount.
  std::filesystem::rename(alice, moved);
  std::filesystem::create_directory_symlink(real_ + "/root", alice);
  ASSERT_EQ(ReadFile(alice + "/mnt/which"), "root");  // by name, the path now reaches root's

  fs::DetachOptions options;
  options.lazy = false;
  options.fuse_helper = false;
  Status s = fs::DetachHeldMount(*held, checked->mount_id, options);
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(IsMountPoint(root_mnt));
  EXPECT_EQ(ReadFile(root_mnt + "/which"), "root");
  EXPECT_FALSE(IsMountPoint(moved + "/mnt"));

  // Held after the swap, the path means root's mount, and the table says so: check and
  // unmount agree either way.
  auto again = fs::HoldMountPoint(alice + "/mnt");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->table_path, root_mnt);
}

TEST_F(HeldUnmountTest, MissingParentFailsWithItsErrno) {
  auto held = fs::HoldMountPoint(tmp_ / "no/such/mnt");
  ASSERT_FALSE(held.ok());
  EXPECT_EQ(held.status().sys_errno(), ENOENT);
}

}  // namespace
}  // namespace mmfs::testing
