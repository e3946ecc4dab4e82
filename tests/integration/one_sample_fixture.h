// A test fixture for the command-line mount tests: a one-sample dataset packed into a fresh
// temporary folder, an empty mount point beside it, and a check after each test that nothing
// is left mounted there (what is left is cleaned up and fails the test).
//
// Thread-safety: test-only.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/integration/mount_helper.h"
#include "tests/test_util.h"

namespace mmfs::testing {

class OneSampleMountTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteFile(tmp_ / "src/train/a/1.jpg", MakeJpeg(16, 16));
    WriteFile(tmp_ / "src/train/a/1.txt", "caption");
    auto pack = RunCommand({MmfsBinary(), "pack", "-q", tmp_ / "src", dst()});
    ASSERT_EQ(pack.exit_code, 0) << pack.output;
    std::filesystem::create_directories(mnt());
  }
  void TearDown() override {
    if (IsMountPoint(mnt()) || !FindDaemons(mnt()).empty()) {
      ADD_FAILURE() << "a mount or daemon was left behind at " << mnt();
      ForceCleanup(mnt());
    }
  }
  std::string dst() const { return tmp_ / "data.mmfs"; }
  std::string mnt() const { return tmp_ / "mnt"; }
  TempDir tmp_;
};

}  // namespace mmfs::testing
