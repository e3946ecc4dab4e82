// The mount daemon's huge-page heap set-up: when it asks glibc for huge pages, what it adds to
// GLIBC_TUNABLES, and that the restarted process gives the user's environment back.
#include "tools/mmfs/huge_page_heap.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "tests/test_util.h"

namespace mmfs::cli {
namespace {

using testing::TempDir;
using testing::WriteFile;

TEST(HugePageHeapTest, KernelOffersHugePagesReadsTheBracketedSetting) {
  TempDir tmp;
  WriteFile(tmp / "always", "[always] madvise never\n");
  WriteFile(tmp / "madvise", "always [madvise] never\n");
  WriteFile(tmp / "never", "always madvise [never]\n");
  EXPECT_TRUE(KernelOffersHugePages(tmp / "always"));
  EXPECT_TRUE(KernelOffersHugePages(tmp / "madvise"));
  EXPECT_FALSE(KernelOffersHugePages(tmp / "never"));
  EXPECT_FALSE(KernelOffersHugePages(tmp / "missing"));
}

TEST(HugePageHeapTest, TunablesAreAddedAndTheUsersOwnWin) {
  EXPECT_EQ(TunablesWithHugeHeap(std::nullopt), std::string(kHugeHeapTunables));
  EXPECT_EQ(TunablesWithHugeHeap(std::string()), std::string(kHugeHeapTunables));
  EXPECT_EQ(TunablesWithHugeHeap(std::string("glibc.rtld.nns=2")),
            "glibc.rtld.nns=2:" + std::string(kHugeHeapTunables));
  // The user's arena_max stays; the other two are added.
  EXPECT_EQ(TunablesWithHugeHeap(std::string("glibc.malloc.arena_max=4")),
            "glibc.malloc.arena_max=4:glibc.malloc.hugetlb=1:glibc.malloc.top_pad=8388608");
  // A user who chose hugetlb, either way, is not overruled: no restart.
  EXPECT_EQ(TunablesWithHugeHeap(std::string("glibc.malloc.hugetlb=0")), std::nullopt);
  EXPECT_EQ(TunablesWithHugeHeap(std::string("a=1:glibc.malloc.hugetlb=1")), std::nullopt);
}

TEST(HugePageHeapTest, TheRestartedProcessPutsTheUsersTunablesBack) {
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

TEST(HugePageHeapTest, TunablesTheUserDidNotHaveAreRemovedAfterTheRestart) {
  ASSERT_EQ(::setenv(kHugeHeapMarker, "-", 1), 0);
  ASSERT_EQ(::setenv("GLIBC_TUNABLES", kHugeHeapTunables, 1), 0);
  EXPECT_TRUE(ReturnFromHugeHeapRestart());
  EXPECT_EQ(std::getenv("GLIBC_TUNABLES"), nullptr);
  EXPECT_EQ(std::getenv(kHugeHeapMarker), nullptr);
}

TEST(HugePageHeapTest, OwnCommandLineIsThisProcesssArguments) {
  std::vector<std::string> args = OwnCommandLine();
  ASSERT_FALSE(args.empty());
  EXPECT_NE(args[0].find("mmfs_unit_tests"), std::string::npos) << args[0];
}

}  // namespace
}  // namespace mmfs::cli
