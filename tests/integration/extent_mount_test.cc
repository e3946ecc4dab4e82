// Extent reads from a slow origin through a real mount: the daemon's reads of the
// shards are throttled with a blkio cgroup (100 requests a second, as a seeking disk), and a
// reader goes through the files in a shuffled order. With room in the RAM tier, the misses read
// extents and the pass makes far fewer origin reads than files; when the neighbours go unused
// (a reader of a sparse subset, a small RAM tier), the daemon falls back to sample reads by
// itself.
// Every byte read is checked. No timing is asserted.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "tests/integration/cgroup_helper.h"
#include "tests/integration/mount_helper.h"
#include "tests/test_util.h"

namespace mmfs::testing {
namespace {

constexpr int kFiles = 2000;
constexpr size_t kFileBytes = 8000;

// Built by appending: GCC 12 at -O3 warns falsely (-Wrestrict) on "d" + std::to_string(...).
std::string Name(int i) {
  std::string name = "d";
  name += std::to_string(i % 4);
  name += '/';
  name += std::to_string(10000 + i);
  name += ".txt";
  return name;
}

// 4,000 to 12,000 bytes: like a dataset's samples, not all of one size.
std::string Contents(int i) {
  std::string s(kFileBytes / 2 + (i * 37) % kFileBytes, '\0');
  for (size_t k = 0; k < s.size(); ++k) s[k] = static_cast<char>('a' + (i * 11 + k) % 26);
  return s;
}

class ExtentMountTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    for (int i = 0; i < kFiles; ++i) WriteFile(*dir_ / ("src/" + Name(i)), Contents(i));
    auto pack = RunCommand({MmfsBinary(), "pack", "-q", *dir_ / "src", *dir_ / "data.mmfs"}, 600);
    ASSERT_EQ(pack.exit_code, 0) << pack.output;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override {
    std::filesystem::create_directories(mnt());
    std::string error;
    throttle_ = BlkioThrottle::Create("mmfs-test-extents-" + std::to_string(::getpid()),
                                      *dir_ / "data.mmfs", 100, 0, &error);
    if (throttle_ == nullptr) GTEST_SKIP() << "no blkio throttle here: " << error;
  }
  void TearDown() override {
    if (IsMountPoint(mnt())) {
      ADD_FAILURE() << "mount left behind";
      ForceCleanup(mnt());
    }
    throttle_.reset();
  }
  std::string mnt() const { return *dir_ / "mnt"; }
  std::string dst() const { return *dir_ / "data.mmfs"; }
  // Every `step`-th file once, in a shuffled order, each checked; the number of wrong or
  // unreadable ones.
  int ShuffledPass(uint32_t seed, int step = 1) {
    std::vector<int> order;
    for (int i = 0; i < kFiles; i += step) order.push_back(i);
    std::shuffle(order.begin(), order.end(), std::mt19937(seed));
    int wrong = 0;
    for (int i : order) {
      if (ReadFile(mnt() + "/" + Name(i)) != Contents(i)) ++wrong;
    }
    return wrong;
  }

  static TempDir* dir_;
  std::unique_ptr<BlkioThrottle> throttle_;
};

TempDir* ExtentMountTest::dir_ = nullptr;

TEST_F(ExtentMountTest, AShuffledPassFromASlowOriginReadsExtentsAndFarFewerTimesThanFiles) {
  ForegroundMount m(dst(), mnt(), {"--ram-cache", "64M"}, throttle_->procs_file());
  ASSERT_TRUE(m.mounted());
  EXPECT_EQ(ShuffledPass(7), 0);
  nlohmann::json s = StatsJson(mnt());
  const auto& x = s["extents"];
  const uint64_t demand = s["origin"]["by_cause"]["demand"]["reads"].get<uint64_t>();
  // Each read costs 10 ms whatever its size: the cost model sees a latency-bound origin, the
  // extents grow until the transfer counts, and a few hundred of them hold the 16 MiB of files.
  EXPECT_TRUE(s["origin"]["cost_model"]["known"].get<bool>()) << s["origin"].dump(2);
  EXPECT_GE(x["reads"].get<uint64_t>(), 1u) << x.dump(2);
  EXPECT_LE(demand, static_cast<uint64_t>(kFiles / 5)) << s["origin"].dump(2) << x.dump(2);
  EXPECT_GE(x["used"]["files"].get<uint64_t>(), static_cast<uint64_t>(kFiles * 8 / 10))
      << x.dump(2);
  EXPECT_EQ(x["wasted"]["files"].get<uint64_t>(), 0u) << x.dump(2);
  auto human = RunCommand({MmfsBinary(), "stats", mnt()});
  EXPECT_NE(human.output.find("extents   auto:"), std::string::npos) << human.output;
  std::cerr << "extents: " << demand << " origin reads for " << kFiles << " files, "
            << x["reads"] << " extent reads, last " << x["last_extent_bytes"] << " bytes\n";
  EXPECT_EQ(m.StopWith(SIGTERM), 0);
}

TEST_F(ExtentMountTest, WhenNeighboursGoUnusedMissesFallBackToSampleReads) {
  // A reader of every 13th file only (a sparse subset, shuffled; 13 is prime to the 4
  // directories, so about one file in 13 of each directory's run), a RAM tier of 3 MiB, no SSD
  // tier: the neighbours an extent would bring are hardly ever asked for, and the daemon must
  // read sample-sized, either foretold by the room left beside the tier or learnt from
  // neighbours pushed out of the area unread.
  ForegroundMount m(dst(), mnt(), {"--ram-cache", "3M"}, throttle_->procs_file());
  ASSERT_TRUE(m.mounted());
  const int read = (kFiles + 12) / 13;
  EXPECT_EQ(ShuffledPass(8, 13), 0);
  nlohmann::json s = StatsJson(mnt());
  const auto& x = s["extents"];
  const uint64_t demand = s["origin"]["by_cause"]["demand"]["reads"].get<uint64_t>();
  const auto& why = x["sample_reads"];
  // The misses were read sample-sized: the room left beside a 3 MiB tier foretold that the
  // neighbours would go unread (no_room), or once they had been pushed out unread the used
  // share fell below what pays (neighbours_unused). Either way few neighbours were fetched in
  // vain (judging by the used share alone, which learns only from neighbours pushed out, 64
  // and more were).
  EXPECT_LT(x["wasted"]["files"].get<uint64_t>(), 64u) << x.dump(2);
  const uint64_t fell_back =
      why["neighbours_unused"].get<uint64_t>() + why["no_room"].get<uint64_t>();
  EXPECT_GE(fell_back, static_cast<uint64_t>(read / 4)) << x.dump(2);
  EXPECT_LE(x["reads"].get<uint64_t>(), static_cast<uint64_t>(read / 2)) << x.dump(2);
  EXPECT_GE(demand, static_cast<uint64_t>(read * 3 / 4)) << s["origin"].dump(2);
  std::cerr << "fall-back: " << demand << " origin reads for " << read << " files, "
            << x["reads"] << " extents, wasted " << x["wasted"]["files"] << ", " << why.dump()
            << "\n";
  EXPECT_EQ(m.StopWith(SIGTERM), 0);
}

}  // namespace
}  // namespace mmfs::testing
