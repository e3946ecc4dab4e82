#include <gtest/gtest.h>

#include "fs/base/file_util.h"
#include "fs/base/status.h"
#include "fs/base/units.h"

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

}  // namespace
}  // namespace mmfs
