// The daemon's memory beyond its tiers: mounted with --memory and nothing read, the
// daemon is small, so the budget goes to the RAM tier and the page cache. 20,000 files here; the
// listing test checks the same at 100,000 entries on the tree it packs anyway (a tree of
// 1,000,000 metadata-only files took 36 s to generate, 125 s to pack and about 10 minutes to
// delete on the 2-core CI machine: too slow for CI; measured by hand there: 19.5 MiB).

#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/integration/mount_helper.h"
#include "tests/test_util.h"

namespace mmfs::testing {
namespace {

constexpr uint64_t kIdleMiB = 1 << 20;
// The bound on the daemon with its caches empty (what --memory must not spend on it), at 20k
// and at 1M entries.
constexpr uint64_t kIdleLimit = 48 * kIdleMiB;

TEST(IdleMemoryMountTest, DaemonWithCachesEmptyStaysSmallAtTwentyThousandFiles) {
  if (kSanitizedBuild) GTEST_SKIP() << "a sanitizer's shadow memory is not the daemon's";
  TempDir tmp;
  const std::string src = tmp / "src", dst = tmp / "data.mmfs", mnt = tmp / "mnt";
  // Captions only: what the daemon keeps per entry is the same for a JPEG, and 20,000 files
  // take 2 s to write instead of a minute of JPEG encoding.
  auto gen = RunCommand({GenDatasetBinary(), src, "-n", "20000", "-c", "100", "--metadata-only"},
                        300);
  ASSERT_EQ(gen.exit_code, 0) << gen.output;
  auto pack = RunCommand({MmfsBinary(), "pack", "-q", src, dst}, 600);
  ASSERT_EQ(pack.exit_code, 0) << pack.output;
  std::filesystem::create_directories(mnt);
  ForegroundMount m(dst, mnt, {"--memory", "300M"});
  ASSERT_TRUE(m.mounted());
  const DaemonMemory idle = MemoryWhenServing(m.pid(), mnt);
  ASSERT_GT(idle.rss, 0u) << "the mount never answered";
  // Caches empty: nothing was read, so the tiers hold nothing and all of it is the daemon's.
  const nlohmann::json s = StatsJson(mnt);
  ASSERT_FALSE(s.is_discarded());
  EXPECT_GE(s["dataset"]["files"].get<uint64_t>(), 20000u) << s["dataset"].dump(2);
  for (const auto& tier : s["cache"]["tiers"]) EXPECT_EQ(tier["bytes_used"], 0) << tier.dump();
  // Run in the foreground, the daemon's VmRSS includes about 21 MiB of shared-library pages (the
  // libvips family) that it mapped itself; daemonized (`mmfs mount`) the child has touched few
  // of them (11 MiB VmRSS, by hand). Bounded as the larger; the anonymous part is printed.
  EXPECT_LE(idle.rss, kIdleLimit) << "VmRSS with caches empty";
  // The peak too: a start that passed through more would not fit a budget that planned this.
  EXPECT_LE(idle.peak, kIdleLimit) << "VmHWM up to serving";
  std::cerr << "20,000 files, --memory 300M, caches empty: daemon VmRSS "
            << idle.rss / 1024 << " KiB (" << idle.anon / 1024 << " KiB anonymous), VmHWM "
            << idle.peak / 1024 << " KiB\n";
  EXPECT_EQ(m.StopWith(SIGTERM), 0);
}

}  // namespace
}  // namespace mmfs::testing
