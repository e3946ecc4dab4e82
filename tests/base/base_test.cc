#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file_util.h"
#include "base/mount_table.h"
#include "base/status.h"
#include "base/units.h"
#include "tests/test_util.h"

namespace mmfs {
namespace {

TEST(StatusTest, OkAndErrors) {
  EXPECT_TRUE(Status::Ok().ok());
  Status s = Status::Corruption("shard-00001.mdb: bad magic");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
  EXPECT_EQ(s.ToString(), "corruption: shard-00001.mdb: bad magic");
  EXPECT_EQ(s.WithContext("mounting").message(), "mounting: shard-00001.mdb: bad magic");
}

TEST(StatusTest, FromErrnoKeepsErrnoAndNamesTheCall) {
  Status s = Status::FromErrno(EACCES, "open /data/x");
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_EQ(s.sys_errno(), EACCES);
  EXPECT_NE(s.message().find("open /data/x"), std::string::npos);
  EXPECT_EQ(Status::FromErrno(ENOENT, "x").code(), StatusCode::kNotFound);
}

Result<int> Half(int x) {
  if (x % 2 != 0) return Status::InvalidArgument("odd");
  return x / 2;
}

Status UseHalf(int x, int* out) {
  MMFS_ASSIGN_OR_RETURN(*out, Half(x));
  return Status::Ok();
}

TEST(StatusTest, AssignOrReturn) {
  int v = 0;
  EXPECT_TRUE(UseHalf(8, &v).ok());
  EXPECT_EQ(v, 4);
  EXPECT_EQ(UseHalf(7, &v).code(), StatusCode::kInvalidArgument);
}

TEST(UnitsTest, ParseSize) {
  EXPECT_EQ(*ParseSize("4096"), 4096u);
  EXPECT_EQ(*ParseSize("64K"), 65536u);
  EXPECT_EQ(*ParseSize("1.5G"), 1610612736u);
  EXPECT_EQ(*ParseSize("2GiB"), 2147483648u);
  EXPECT_EQ(*ParseSize("512mb"), 536870912u);
  EXPECT_FALSE(ParseSize("lots").ok());
  EXPECT_FALSE(ParseSize("12X").ok());
  EXPECT_FALSE(ParseSize("-1").ok());
  // Parsed whole: no sign, space, exponent, hex or trailing junk.
  SizeProblem problem = SizeProblem::kNone;
  for (const char* bad : {" 5", "5 ", "+5", "1e3", "0x10", "5.", ".5", "", "inf", "5K5"}) {
    EXPECT_FALSE(ParseSize(bad, &problem).ok()) << bad;
    EXPECT_EQ(problem, SizeProblem::kNotASize) << bad;
  }
  EXPECT_FALSE(ParseSize("5Q", &problem).ok());
  EXPECT_EQ(problem, SizeProblem::kUnknownUnit);
  EXPECT_FALSE(ParseSize(std::string(400, '9') + "T", &problem).ok());
  EXPECT_EQ(problem, SizeProblem::kTooLarge);
  EXPECT_EQ(*ParseSize("0.5K", &problem), 512u);
  EXPECT_EQ(problem, SizeProblem::kNone);
}

TEST(UnitsTest, Format) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(1023), "1023 B");
  EXPECT_EQ(FormatBytes(1536), "1.50 KiB");
  EXPECT_EQ(FormatBytes(256ull << 20), "256 MiB");
  EXPECT_EQ(FormatCount(1234567), "1,234,567");
  EXPECT_EQ(FormatCount(12), "12");
  EXPECT_EQ(FormatDuration(0.0123), "12.3 ms");
  EXPECT_EQ(FormatDuration(4.2), "4.20 s");
}

TEST(FileUtilTest, HexRoundTrip) {
  uint64_t v = 0;
  EXPECT_TRUE(ParseHexU64(HexU64(0xdeadbeef01234567ull), &v));
  EXPECT_EQ(v, 0xdeadbeef01234567ull);
  EXPECT_FALSE(ParseHexU64("xyz", &v));
  EXPECT_FALSE(ParseHexU64("DEADBEEF01234567", &v));  // we write lower case only
}

TEST(MountTableTest, UnescapesPathsAndFindsTheVisibleMount) {
  testing::TempDir tmp;
  const std::string table = tmp / "mountinfo";
  testing::WriteFile(
      table,
      "22 1 0:21 / /proc rw,nosuid shared:12 - proc proc rw\n"
      // A mount point with a space and a backslash; optional fields before the separator.
      "40 22 0:40 / /mnt/my\\040data\\134x ro,nosuid shared:1 master:2 - fuse.mmfs "
      "mmfs:/d\\040s ro,user_id=0\n"
      // Two mounts stacked on one point: the later one is what a path resolves to.
      "41 22 0:41 / /mnt/stack ro - fuse.mmfs mmfs:/a ro\n"
      "42 41 0:42 / /mnt/stack ro - overlay mmfs:/a ro,lowerdir=/run/x\\040y/fuse:/e\n"
      "garbage line\n");
  std::vector<MountEntry> all = ReadMountTable(table);
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[1].mount_point, "/mnt/my data\\x");
  EXPECT_EQ(all[1].device, "0:40");
  EXPECT_EQ(all[1].fs_type, "fuse.mmfs");
  EXPECT_EQ(all[1].source, "mmfs:/d s");
  auto spaced = FindMount("/mnt/my data\\x", table);
  ASSERT_TRUE(spaced.has_value());
  EXPECT_EQ(spaced->device, "0:40");
  auto stacked = FindMount("/mnt/stack", table);
  ASSERT_TRUE(stacked.has_value());
  EXPECT_EQ(stacked->fs_type, "overlay");
  EXPECT_EQ(stacked->mount_id, 42);  // what `mmfs umount` compares with statx's mount ID
  EXPECT_EQ(spaced->mount_id, 40);
  EXPECT_EQ(stacked->super_options, "ro,lowerdir=/run/x y/fuse:/e");
  EXPECT_FALSE(FindMount("/mnt", table).has_value());
  EXPECT_EQ(UnescapeMountField("a\\011b\\012c\\9zz\\"), "a\tb\nc\\9zz\\");
}

// The mount's own flags (nosuid, nodev) and the filesystem's options (user_id=) are both read:
// `mmfs umount` decides by them whose mount it is, and the daemon checks nosuid,nodev.
TEST(MountTableTest, MountFlagsAndOptionWords) {
  testing::TempDir tmp;
  const std::string table = tmp / "mountinfo";
  testing::WriteFile(table,
                     "40 22 0:40 / /mnt/d ro,nosuid,nodev,relatime shared:1 - fuse.mmfs mmfs:/d "
                     "ro,user_id=1000,group_id=1000,allow_other\n");
  auto entry = FindMount("/mnt/d", table);
  ASSERT_TRUE(entry.has_value());
  EXPECT_EQ(entry->mount_options, "ro,nosuid,nodev,relatime");
  EXPECT_TRUE(HasMountOption(entry->mount_options, "nosuid"));
  EXPECT_TRUE(HasMountOption(entry->mount_options, "nodev"));
  EXPECT_FALSE(HasMountOption(entry->mount_options, "suid"));
  EXPECT_FALSE(HasMountOption(entry->mount_options, "dev"));
  EXPECT_FALSE(HasMountOption(entry->mount_options, "nosu"));
  EXPECT_TRUE(HasMountOption(entry->super_options, "user_id"));
  EXPECT_EQ(MountOptionValue(entry->super_options, "user_id"), "1000");
  EXPECT_EQ(MountOptionValue(entry->super_options, "group_id"), "1000");
  EXPECT_FALSE(MountOptionValue(entry->super_options, "user").has_value());
  EXPECT_FALSE(MountOptionValue(entry->super_options, "allow_other").has_value());
  EXPECT_FALSE(MountOptionValue("", "user_id").has_value());
}

TEST(FileUtilTest, DirectoriesOfGoneProcessesOnly) {
  testing::TempDir tmp;
  // PID 999999999 cannot exist; this process does.
  const std::string gone = tmp / "tool-999999999-abc";
  const std::string live = tmp / ("tool-" + std::to_string(::getpid()) + "-def");
  for (const std::string& d : {gone, live, tmp / "other-999999999-x", tmp / "tool-x"}) {
    ASSERT_EQ(::mkdir(d.c_str(), 0700), 0) << d;
  }
  std::vector<std::string> cleaned;
  ForEachDirOfGoneProcess(tmp.path(), "tool-", [&](const std::string& d) { cleaned.push_back(d); });
  EXPECT_EQ(cleaned, std::vector<std::string>({gone}));
}

}  // namespace
}  // namespace mmfs
