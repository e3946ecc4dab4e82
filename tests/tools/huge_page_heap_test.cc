// The mount daemon's huge-page heap set-up: when it asks glibc for huge pages, what it adds to
// GLIBC_TUNABLES, and that the restarted process gives the user's environment back.
#include "tools/mmfs/huge_page_heap.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tests/test_util.h"

namespace mmfs::cli {
namespace {

using testing::TempDir;
using testing::WriteFile;

// The tests change GLIBC_TUNABLES and the marker; each puts them back as they were.
class HugePageHeapTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"GLIBC_TUNABLES", kHugeHeapMarker}) {
      const char* v = std::getenv(name);
      saved_.emplace_back(name, v ? std::optional<std::string>(v) : std::nullopt);
    }
  }
  void TearDown() override {
    for (const auto& [name, value] : saved_) {
      if (value) {
        ::setenv(name.c_str(), value->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

TEST_F(HugePageHeapTest, OnlyTheMadviseSettingCounts) {
  TempDir tmp;
  WriteFile(tmp / "always", "[always] madvise never\n");
  WriteFile(tmp / "madvise", "always [madvise] never\n");
  WriteFile(tmp / "never", "always madvise [never]\n");
  EXPECT_FALSE(KernelAdvisesHugePages(tmp / "always"));  // glibc gives no advice there
  EXPECT_TRUE(KernelAdvisesHugePages(tmp / "madvise"));
  EXPECT_FALSE(KernelAdvisesHugePages(tmp / "never"));
  EXPECT_FALSE(KernelAdvisesHugePages(tmp / "missing"));
}

TEST_F(HugePageHeapTest, TheReservedStepIsTheTunablesTopPad) {
  EXPECT_NE(std::string(kHugeHeapTunables)
                .find("glibc.malloc.top_pad=" + std::to_string(kHugeHeapStepBytes)),
            std::string::npos);
}

TEST_F(HugePageHeapTest, TunablesAreAddedAndTheUsersOwnWin) {
  EXPECT_EQ(TunablesWithHugeHeap(std::nullopt), std::string(kHugeHeapTunables));
  EXPECT_EQ(TunablesWithHugeHeap(std::string()), std::string(kHugeHeapTunables));
  EXPECT_EQ(TunablesWithHugeHeap(std::string("glibc.rtld.nns=2")),
            "glibc.rtld.nns=2:" + std::string(kHugeHeapTunables));
  // The user's arena_max stays; the other two are added.
  EXPECT_EQ(TunablesWithHugeHeap(std::string("glibc.malloc.arena_max=4")),
            "glibc.malloc.arena_max=4:glibc.malloc.hugetlb=1:glibc.malloc.top_pad=33554432");
  // MALLOC_ARENA_MAX and MALLOC_TOP_PAD_ set the same two.
  EXPECT_EQ(TunablesWithHugeHeap(std::nullopt, {"glibc.malloc.arena_max", "glibc.malloc.top_pad"}),
            "glibc.malloc.hugetlb=1");
  // A user who chose hugetlb, either way, is not overruled: no restart.
  EXPECT_EQ(TunablesWithHugeHeap(std::string("glibc.malloc.hugetlb=0")), std::nullopt);
  EXPECT_EQ(TunablesWithHugeHeap(std::string("a=1:glibc.malloc.hugetlb=1")), std::nullopt);
}

TEST_F(HugePageHeapTest, TheRestartedProcessPutsTheUsersTunablesBack) {
  ASSERT_EQ(::setenv(kHugeHeapMarker, "=glibc.rtld.nns=2", 1), 0);
  ASSERT_EQ(::setenv("GLIBC_TUNABLES", "glibc.rtld.nns=2:glibc.malloc.hugetlb=1", 1), 0);
  EXPECT_TRUE(ReturnFromHugeHeapRestart());
  ASSERT_NE(std::getenv("GLIBC_TUNABLES"), nullptr);
  EXPECT_STREQ(std::getenv("GLIBC_TUNABLES"), "glibc.rtld.nns=2");
  EXPECT_EQ(std::getenv(kHugeHeapMarker), nullptr);
  // Not restarted: nothing changes.
  EXPECT_FALSE(ReturnFromHugeHeapRestart());
  EXPECT_STREQ(std::getenv("GLIBC_TUNABLES"), "glibc.rtld.nns=2");
}

TEST_F(HugePageHeapTest, TunablesTheUserDidNotHaveAreRemovedAfterTheRestart) {
  ASSERT_EQ(::setenv(kHugeHeapMarker, "-", 1), 0);
  ASSERT_EQ(::setenv("GLIBC_TUNABLES", kHugeHeapTunables, 1), 0);
  EXPECT_TRUE(ReturnFromHugeHeapRestart());
  EXPECT_EQ(std::getenv("GLIBC_TUNABLES"), nullptr);
  EXPECT_EQ(std::getenv(kHugeHeapMarker), nullptr);
}

TEST_F(HugePageHeapTest, CommandLinesSplitAtEachNulEmptyArgumentsKept) {
  using std::string_literals::operator""s;
  EXPECT_EQ(SplitCommandLine("mmfs\0mount\0-o\0\0/mnt\0"s),
            (std::vector<std::string>{"mmfs", "mount", "-o", "", "/mnt"}));
  EXPECT_EQ(SplitCommandLine("mmfs\0\0"s), (std::vector<std::string>{"mmfs", ""}));
  EXPECT_EQ(SplitCommandLine("no-terminator"), (std::vector<std::string>{"no-terminator"}));
  EXPECT_TRUE(SplitCommandLine("").empty());
}

TEST_F(HugePageHeapTest, OwnCommandLineIsThisProcesssArguments) {
  std::vector<std::string> args = OwnCommandLine();
  ASSERT_FALSE(args.empty());
  EXPECT_NE(args[0].find("mmfs_unit_tests"), std::string::npos) << args[0];
}

}  // namespace
}  // namespace mmfs::cli
