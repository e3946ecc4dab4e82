// Memory through a real mount: how often each origin byte is read whatever the tiers' sizes
// (issue 16, item 2), and a daemon inside a memory cgroup that settles on a budget that fits
// and stays up (item 6).

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/mount_helper.h"
#include "tests/test_util.h"

namespace mmfs::testing {
namespace {

namespace fsys = std::filesystem;
constexpr uint64_t kKiB = 1 << 10, kMiB = 1 << 20;

// The XXH3 of a file read whole through read(2) in `chunk`-byte calls; its pages are dropped
// from the kernel's cache afterwards, so the next read reaches the daemon again. Sets `*ok`
// false on an error.
uint64_t ReadUncachedSum(const std::string& path, size_t chunk, bool* ok) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) {
    *ok = false;
    return 0;
  }
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  std::vector<char> buf(chunk);
  for (;;) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0) *ok = false;
    if (n <= 0) break;
    XXH3_64bits_update(state, buf.data(), static_cast<size_t>(n));
  }
  uint64_t sum = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
  return sum;
}

nlohmann::json StatsJson(const std::string& mnt) {
  auto r = RunCommand({MmfsBinary(), "stats", "--json", mnt});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.output;
  return j;
}

// Every byte the daemon read from the shards: for READs (origin) and ahead of them (readahead).
uint64_t OriginBytes(const nlohmann::json& s) {
  return s["origin"]["bytes"].get<uint64_t>() + s["readahead"]["bytes"].get<uint64_t>();
}
// Every byte the daemon handed to the kernel: READ replies and files pushed into the page cache.
uint64_t DeliveredBytes(const nlohmann::json& s) {
  return s["bytes_served"].get<uint64_t>() + s["readahead"]["pushed"]["bytes"].get<uint64_t>();
}

class ReadAmplificationMountTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (IsMountPoint(mnt())) {
      ADD_FAILURE() << "mount left behind";
      ForceCleanup(mnt());
    }
  }
  std::string src() const { return tmp_ / "src"; }
  std::string dst() const { return tmp_ / "data.mmfs"; }
  std::string mnt() const { return tmp_ / "mnt"; }
  TempDir tmp_;
};

// Issue 16: a 50 MiB file read once through a mount with --ram-cache 256M read 1,300 MiB from
// the shard (a whole-file load for every READ, each refused by the RAM tier). Files on both
// sides of every threshold of the cache and the reader, with a small and a large RAM tier.
TEST_F(ReadAmplificationMountTest, EachOriginByteIsReadAboutOncePerPass) {
  // --ram-cache 32M admits files up to 2 MiB - 96 (a shard's share of 16), 1G up to 64 MiB;
  // READs are at most 1 MiB (the mount's read-ahead); the prefetch buffer (64 MiB) takes files
  // up to 32 MiB; the read buffer holds 64 MiB, which is also the largest file loaded whole.
  const std::vector<uint64_t> sizes = {
      4 * kKiB,         1 * kMiB - 1,  1 * kMiB + 1,  2 * kMiB - 200, 2 * kMiB + 1,
      32 * kMiB - 1,    32 * kMiB + 1, 64 * kMiB - 1, 65 * kMiB};
  std::vector<std::string> names;
  std::vector<uint64_t> sums;
  uint64_t total = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::string data(sizes[i], '\0');
    uint64_t x = 0x9E3779B97F4A7C15ull * (i + 1);
    for (size_t b = 0; b + 8 <= data.size(); b += 8) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      std::memcpy(&data[b], &x, 8);
    }
    names.push_back("f" + std::to_string(10 + i) + ".bin");
    WriteFile(src() + "/" + names.back(), data);
    sums.push_back(XXH3_64bits(data.data(), data.size()));
    total += sizes[i];
  }
  auto pack = RunCommand({MmfsBinary(), "pack", "-q", src(), dst()}, 600);
  ASSERT_EQ(pack.exit_code, 0) << pack.output;
  fsys::create_directories(mnt());
  for (const char* ram : {"32M", "1G"}) {
    SCOPED_TRACE(std::string("--ram-cache ") + ram);
    ForegroundMount m(dst(), mnt(), {"--ram-cache", ram});
    ASSERT_TRUE(m.mounted());
    nlohmann::json before = StatsJson(mnt());
    for (int pass = 0; pass < 2; ++pass) {
      std::ostringstream per_file;
      for (size_t i = 0; i < sizes.size(); ++i) {
        uint64_t at = OriginBytes(StatsJson(mnt()));
        bool ok = true;
        EXPECT_EQ(ReadUncachedSum(mnt() + "/" + names[i], 1 << 20, &ok), sums[i]) << names[i];
        EXPECT_TRUE(ok) << names[i];
        per_file << names[i] << " (" << sizes[i] << " bytes): "
                 << OriginBytes(StatsJson(mnt())) - at << " read\n";
      }
      nlohmann::json after = StatsJson(mnt());
      const uint64_t read = OriginBytes(after) - OriginBytes(before);
      const uint64_t delivered = DeliveredBytes(after) - DeliveredBytes(before);
      EXPECT_GE(delivered, total) << "pass " << pass;
      // The 65 MiB file, too large to hold, is read twice but for the 64 MiB the read buffer
      // kept while checking it, on the first pass: 1 MiB more. Every other byte once.
      EXPECT_LE(read, delivered + delivered / 10)
          << "pass " << pass << ": " << read << " bytes read from the origin for " << delivered
          << " delivered\n" << per_file.str() << after.dump(2);
      EXPECT_EQ(after["errors"]["checksum"], 0);
      before = after;
    }
    EXPECT_EQ(m.StopWith(SIGTERM), 0);
  }
}

}  // namespace
}  // namespace mmfs::testing
