#include "fs/fuse/errno_map.h"

#include <gtest/gtest.h>

namespace mmfs::fs {
namespace {

TEST(ToErrnoTest, EveryCodeHasItsErrno) {
  EXPECT_EQ(ToErrno(Status::Ok()), 0);
  EXPECT_EQ(ToErrno(Status::NotFound("x")), ENOENT);
  EXPECT_EQ(ToErrno(Status::InvalidArgument("x")), EINVAL);
  EXPECT_EQ(ToErrno(Status::Corruption("x")), EIO);
  EXPECT_EQ(ToErrno(Status::ReadOnly("x")), EROFS);
  EXPECT_EQ(ToErrno(Status::NotSupported("x")), ENOTSUP);
  EXPECT_EQ(ToErrno(Status::AlreadyExists("x")), EEXIST);
  EXPECT_EQ(ToErrno(Status::Cancelled("x")), EINTR);
  EXPECT_EQ(ToErrno(Status::ResourceExhausted("x")), ENOMEM);
  EXPECT_EQ(ToErrno(Status::NotADirectory("x")), ENOTDIR);
  EXPECT_EQ(ToErrno(Status::IsADirectory("x")), EISDIR);
  EXPECT_EQ(ToErrno(Status::NoSuchIoctl("x")), ENOTTY);
}

TEST(ToErrnoTest, SystemCallErrorsKeepTheirErrno) {
  EXPECT_EQ(ToErrno(Status::FromErrno(EACCES, "open x")), EACCES);
  EXPECT_EQ(ToErrno(Status::FromErrno(EIO, "pread x")), EIO);
  EXPECT_EQ(ToErrno(Status::IoError("no errno")), EIO);
  // A full disk is ENOSPC, not the ENOMEM of an exhausted budget.
  EXPECT_EQ(ToErrno(Status::FromErrno(ENOSPC, "write x")), ENOSPC);
  EXPECT_EQ(ToErrno(Status::FromErrno(ENOENT, "open x")), ENOENT);
}

}  // namespace
}  // namespace mmfs::fs
