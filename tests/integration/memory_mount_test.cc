// Memory through a real mount: how often each origin byte is read whatever the tiers' sizes,
// and a daemon inside a memory cgroup that settles on a budget that fits and stays up.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/cgroup_helper.h"
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

// A 50 MiB file read once through a mount with --ram-cache 256M read 1,300 MiB from
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
    // append, not "f" + ...: GCC 12 -O3 reports a false -Wrestrict in operator+(const char*, string&&).
    names.push_back(std::string("f").append(std::to_string(10 + i)).append(".bin"));
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

// In a 537 MB memory cgroup shared with a DataLoader, `mmfs mount -f
// --ram-cache 403M` was OOM-killed and every reader got ENOTCONN. Here the daemon and a reader
// share a 192 MiB cgroup and read a 256 MiB dataset (twice, page cache dropped): with a budget
// that fits, the default, and one that does not (clamped, and the reader holding 64 MiB of its
// own): the mount stays up, the bytes stay right, and mmfs stats shows the budget and why.
class MemoryBudgetMountTest : public ::testing::Test {
 protected:
  static constexpr uint64_t kLimit = 192 * kMiB;
  static constexpr int kFiles = 256;

  void SetUp() override {
    for (int i = 0; i < kFiles; ++i) {
      std::string data(kMiB - 4096 * static_cast<size_t>(i % 7), '\0');
      uint64_t x = 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(i + 1);
      for (size_t b = 0; b + 8 <= data.size(); b += 8) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        std::memcpy(&data[b], &x, 8);
      }
      names_.push_back(std::string("d").append(std::to_string(i / 64)).append("/s")
                           .append(std::to_string(1000 + i)).append(".bin"));
      WriteFile(src() + "/" + names_.back(), data);
      sums_.push_back(XXH3_64bits(data.data(), data.size()));
    }
    auto pack = RunCommand({MmfsBinary(), "pack", "-q", src(), dst()}, 600);
    ASSERT_EQ(pack.exit_code, 0) << pack.output;
    fsys::create_directories(mnt());
    std::string error;
    cgroup_ = MemoryCgroup::Create(
        "mmfs-test-budget-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name(),
        kLimit, &error);
    ASSERT_NE(cgroup_, nullptr) << error;
  }
  void TearDown() override {
    if (IsMountPoint(mnt())) {
      // The daemonized mount of the clamped case: unmounted here whatever the test did.
      RunCommand({MmfsBinary(), "umount", mnt()}, 30);
      WaitFor([&] { return FindDaemons(mnt()).empty(); }, 20);
    }
    if (IsMountPoint(mnt()) || !FindDaemons(mnt()).empty()) ForceCleanup(mnt());
    cgroup_.reset();
  }
  // A reader in the cgroup: holds `hog` bytes of its own, then reads every file twice, each
  // time dropping its pages, and compares the bytes; true if all were right.
  bool ReadEverythingInTheCgroup(uint64_t hog) {
    pid_t pid = ::fork();
    if (pid == 0) {
      if (!cgroup_->Add(::getpid())) ::_exit(3);
      std::vector<char> held(hog);
      for (size_t b = 0; b < held.size(); b += 4096) held[b] = static_cast<char>(b);
      int wrong = 0;
      for (int pass = 0; pass < 2; ++pass) {
        for (size_t i = 0; i < names_.size(); ++i) {
          bool ok = true;
          if (ReadUncachedSum(mnt() + "/" + names_[i], 1 << 20, &ok) != sums_[i] || !ok) ++wrong;
        }
      }
      ::_exit(wrong == 0 && (hog < 8192 || held[4096] == static_cast<char>(4096)) ? 0 : 1);
    }
    int status = 0;
    bool done = WaitFor([&] { return ::waitpid(pid, &status, WNOHANG) == pid; }, 600);
    if (!done) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      ADD_FAILURE() << "the reader did not finish";
      return false;
    }
    EXPECT_TRUE(WIFEXITED(status)) << "reader killed by signal " << WTERMSIG(status);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  bool MountAnswers() {
    struct statfs st;
    return ::statfs(mnt().c_str(), &st) == 0;
  }
  std::string LimitSource() const { return cgroup_->version() == 1 ? "cgroup v1" : "cgroup v2"; }
  std::string src() const { return tmp_ / "src"; }
  std::string dst() const { return tmp_ / "data.mmfs"; }
  std::string mnt() const { return tmp_ / "mnt"; }
  TempDir tmp_;
  std::vector<std::string> names_;
  std::vector<uint64_t> sums_;
  std::unique_ptr<MemoryCgroup> cgroup_;
};

TEST_F(MemoryBudgetMountTest, BudgetsThatFitAreKeptAndShownWithTheirReason) {
  {
    ForegroundMount m(dst(), mnt(), {"--ram-cache", "32M", "--log-file", tmp_ / "fits.log"},
                      cgroup_->procs_file());
    ASSERT_TRUE(m.mounted());
    EXPECT_TRUE(ReadEverythingInTheCgroup(0)) << "wrong bytes or a failed read";
    EXPECT_TRUE(MountAnswers());
    nlohmann::json s = StatsJson(mnt());
    const auto& b = s["memory"]["budget"];
    EXPECT_EQ(b["source"], "explicit") << s["memory"].dump(2);
    EXPECT_EQ(b["limit_source"], LimitSource());
    EXPECT_EQ(b["limit_bytes"], kLimit);
    EXPECT_EQ(b["clamped"], false);
    EXPECT_EQ(b["ram_cache_bytes"], 32 * kMiB);
    EXPECT_EQ(b["cgroup"], cgroup_->dir());
    EXPECT_GT(s["memory"]["pressure"]["samples"].get<uint64_t>(), 0u);
    auto human = RunCommand({MmfsBinary(), "stats", mnt()});
    EXPECT_NE(human.output.find("budget    explicit: RAM tier 32.0 MiB"), std::string::npos)
        << human.output;
    EXPECT_NE(human.output.find(LimitSource() + " " + cgroup_->dir()), std::string::npos)
        << human.output;
    EXPECT_NE(ReadFile(tmp_ / "fits.log").find("memory budget: RAM tier 32.0 MiB (--ram-cache, fits)"),
              std::string::npos)
        << ReadFile(tmp_ / "fits.log");
    EXPECT_EQ(m.StopWith(SIGTERM), 0);
  }
  {
    // No memory option: the cgroup's limit is shared (shared-limit mode), not physical memory.
    ForegroundMount m(dst(), mnt(), {}, cgroup_->procs_file());
    ASSERT_TRUE(m.mounted());
    EXPECT_TRUE(ReadEverythingInTheCgroup(0));
    nlohmann::json s = StatsJson(mnt());
    const auto& b = s["memory"]["budget"];
    EXPECT_EQ(b["source"], "shared") << s["memory"].dump(2);
    EXPECT_EQ(b["limit_source"], LimitSource());
    EXPECT_EQ(b["clamped"], false);
    EXPECT_LE(b["ram_cache_bytes"].get<uint64_t>() + b["reserved_bytes"].get<uint64_t>(), kLimit);
    EXPECT_EQ(m.StopWith(SIGTERM), 0);
  }
  EXPECT_EQ(cgroup_->OomKills(), 0u);
}

TEST_F(MemoryBudgetMountTest, BudgetThatDoesNotFitIsClampedAndTheMountSurvivesPressure) {
  // As a user runs it: daemonized, from a shell inside the cgroup; the warning on the terminal.
  auto mount = RunCommand({"/bin/sh", "-c",
                           "echo $$ > " + cgroup_->procs_file() + " && exec " + MmfsBinary() +
                               " mount " + dst() + " " + mnt() + " --ram-cache 1G --log-file " +
                               (tmp_ / "clamped.log")},
                          60);
  ASSERT_EQ(mount.exit_code, 0) << mount.output;
  EXPECT_NE(mount.output.find("warning: --ram-cache 1.00 GiB does not fit: the memory limit is "
                              "192 MiB (" + LimitSource() + ")"),
            std::string::npos)
      << mount.output;
  ASSERT_EQ(FindDaemons(mnt()).size(), 1u);
  // The reader holds 64 MiB of its own: the RAM tier must make room instead of growing into the
  // limit (the daemon would be the one OOM-killed, and every reader would get ENOTCONN).
  EXPECT_TRUE(ReadEverythingInTheCgroup(64 * kMiB)) << "wrong bytes or a failed read";
  EXPECT_TRUE(MountAnswers()) << "the daemon died";
  EXPECT_EQ(cgroup_->OomKills(), 0u);
  nlohmann::json s = StatsJson(mnt());
  const auto& b = s["memory"]["budget"];
  EXPECT_EQ(b["source"], "explicit") << s["memory"].dump(2);
  EXPECT_EQ(b["limit_source"], LimitSource());
  EXPECT_EQ(b["clamped"], true);
  EXPECT_EQ(b["requested_ram_bytes"], 1ull << 30);
  EXPECT_LT(b["ram_cache_bytes"].get<uint64_t>() + b["reserved_bytes"].get<uint64_t>(), kLimit);
  // While the reader held its 64 MiB the tier was kept below what was planned.
  const auto& p = s["memory"]["pressure"];
  EXPECT_GT(p["samples"].get<uint64_t>(), 0u);
  EXPECT_EQ(s["errors"]["checksum"], 0);
  const auto& tiers = s["cache"]["tiers"];
  auto ram = std::find_if(tiers.begin(), tiers.end(),
                          [](const nlohmann::json& t) { return t["name"] == "ram"; });
  ASSERT_NE(ram, tiers.end());
  EXPECT_LE((*ram)["bytes_used"].get<uint64_t>(), b["ram_cache_bytes"].get<uint64_t>());
  auto human = RunCommand({MmfsBinary(), "stats", mnt()});
  EXPECT_NE(human.output.find("CLAMPED from --ram-cache 1.00 GiB"), std::string::npos)
      << human.output;
  EXPECT_NE(human.output.find("pressure  "), std::string::npos) << human.output;
  std::cerr << "clamped: " << b.dump() << "\n" << p.dump() << "\npeak of the cgroup "
            << (cgroup_->PeakBytes() >> 20) << " MiB\n";
}

// The peak resident set of `pid` (VmHWM), 0 if unreadable.
uint64_t PeakRss(pid_t pid) { return ProcStatusBytes(pid, "VmHWM"); }

// What the mount's files hold in the page cache: in all, and of files the RAM tier holds too
// (user.mmfs.resident names "ram"), i.e. bytes held twice.
struct PageCacheShare {
  uint64_t total = 0;
  uint64_t held_twice = 0;
};
PageCacheShare MeasurePageCache(const std::string& mnt, const std::vector<std::string>& names) {
  PageCacheShare p;
  for (const std::string& n : names) {
    const uint64_t cached = PageCacheBytes(mnt + "/" + n);
    p.total += cached;
    if (cached == 0) continue;  // no GETXATTR for files with nothing to count
    char where[32] = {};
    const std::string path = mnt + "/" + n;
    ssize_t len = ::getxattr(path.c_str(), "user.mmfs.resident", where, sizeof where - 1);
    if (len > 0 && std::string(where, static_cast<size_t>(len)).find("ram") != std::string::npos) {
      p.held_twice += cached;
    }
  }
  return p;
}

// The daemon, its reader and all their page cache in one memory cgroup, in shared-limit mode
// (--memory, or no memory option at all: the default under a cgroup's limit): three shuffled
// epochs read the bytes right, the daemon stays within its memory less the page-cache share,
// epoch 1 reads the dataset from the origin about once, nothing fetched is fetched again in the
// same epoch, and the RAM tier's hits are real (later epochs read at most the part of the
// dataset the tier does not hold, with a margin). No timing is asserted.
class SharedLimitMountTest : public MemoryBudgetMountTest {
 protected:
  // `options`: the mount's memory options; `source`: the budget's source they must lead to;
  // `split`: the start of the human stats' split line; `others_grow_by`: memory another process
  // in the cgroup takes from epoch 2 on (a loader growing after the mount), 0 for none.
  void ThreeShuffledEpochs(std::vector<std::string> options, const std::string& source,
                           const std::string& split, uint64_t others_grow_by = 0);
};

TEST_F(SharedLimitMountTest, WithMemoryGivenThreeShuffledEpochsReadTheOriginOncePerEpoch) {
  ThreeShuffledEpochs({"--memory", "160M"}, "memory", "split     --memory 160 MiB: RAM tier");
}

// No memory option: the plan takes what the processes in the cgroup left at mount and the
// governor follows them as they grow; stats say so.
TEST_F(SharedLimitMountTest, WithNoMemoryOptionTheCgroupLimitIsSharedByDefault) {
  ThreeShuffledEpochs({}, "shared", "split     shared limit, left by others at mount");
}

// The same, and another process in the cgroup takes 56 MiB at once after epoch 1 (what forked
// workers and piled-up batches do to a loader). The daemon holds about 120 MiB of anonymous
// memory by then, so the cgroup's unreclaimable memory passes the limit less the page-cache
// share (168 MiB): the page cache gives way at once, then the tier, and nobody is OOM-killed.
// (32 MiB fitted beside the tier: the page cache alone gave way, and the tier did not shrink.)
TEST_F(SharedLimitMountTest, WithNoMemoryOptionTheTierGivesWayToOthersGrowing) {
  ThreeShuffledEpochs({}, "shared", "split     shared limit, left by others at mount",
                      56 * kMiB);
}

void SharedLimitMountTest::ThreeShuffledEpochs(std::vector<std::string> options,
                                               const std::string& source,
                                               const std::string& split,
                                               uint64_t others_grow_by) {
  options.insert(options.end(), {"--log-file", tmp_ / "within.log"});
  ForegroundMount m(dst(), mnt(), options, cgroup_->procs_file());
  ASSERT_TRUE(m.mounted());
  nlohmann::json s = StatsJson(mnt());
  const auto& b = s["memory"]["budget"];
  ASSERT_EQ(b["source"], source) << s["memory"].dump(2);
  const uint64_t memory = b["memory_bytes"].get<uint64_t>();
  EXPECT_GT(memory, 0u);
  EXPECT_LE(memory, kLimit);
  EXPECT_NE(b["explanation"].get<std::string>().find("page-cache share"), std::string::npos)
      << b.dump(2);
  const uint64_t ram = b["ram_cache_bytes"].get<uint64_t>();
  const uint64_t page_cache = b["page_cache_bytes"].get<uint64_t>();
  EXPECT_GT(ram, 0u);
  EXPECT_LE(ram + b["reserved_bytes"].get<uint64_t>() + page_cache, memory);
  // In shared-limit mode the index the plan reserves is locked once read (root has
  // CAP_IPC_LOCK; the usual 8 MiB RLIMIT_MEMLOCK would also fit this small index).
  EXPECT_EQ(s["memory"]["index"]["locked"], true) << s["memory"].dump(2);
  auto human = RunCommand({MmfsBinary(), "stats", mnt()});
  EXPECT_NE(human.output.find(split), std::string::npos) << human.output;
  EXPECT_NE(human.output.find("locked in memory"), std::string::npos) << human.output;
  // In shared-limit mode the pressure line shows what the governor judges, against its target.
  EXPECT_NE(human.output.find("(unreclaimable "), std::string::npos) << human.output;
  uint64_t dataset = 0;
  for (const std::string& n : names_) dataset += fsys::file_size(src() + "/" + n);
  std::vector<uint64_t> origin_per_epoch;
  uint64_t origin_before = OriginBytes(s);
  pid_t other = -1;  // the process that grows, from epoch 2 on
  struct Reap {
    pid_t& pid;
    ~Reap() {
      if (pid > 0 && ::kill(pid, SIGKILL) == 0) ::waitpid(pid, nullptr, 0);
    }
  } reap{other};
  for (int epoch = 0; epoch < 3; ++epoch) {
    if (epoch == 1 && others_grow_by > 0) {
      int ready[2];
      ASSERT_EQ(::pipe(ready), 0);
      other = ::fork();
      ASSERT_GE(other, 0);
      if (other == 0) {
        ::close(ready[0]);
        if (!cgroup_->Add(::getpid())) ::_exit(3);
        std::vector<char> held(others_grow_by);
        for (size_t b = 0; b < held.size(); b += 4096) held[b] = 1;
        if (::write(ready[1], "r", 1) != 1) ::_exit(4);
        for (;;) ::pause();
      }
      ::close(ready[1]);
      char c = 0;
      const ssize_t got = ::read(ready[0], &c, 1);
      ::close(ready[0]);
      ASSERT_EQ(got, 1) << "the growing process died before it held its memory";
    }
    // A reader in the cgroup reads every file whole, in a new order each epoch, through the
    // page cache as a loader does (no dropping of its own).
    std::vector<size_t> order(names_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), std::mt19937(1000 + epoch));
    pid_t pid = ::fork();
    if (pid == 0) {
      if (!cgroup_->Add(::getpid())) ::_exit(3);
      int wrong = 0;
      std::vector<char> buf(1 << 20);
      for (size_t i : order) {
        int fd = ::open((mnt() + "/" + names_[i]).c_str(), O_RDONLY);
        if (fd < 0) ::_exit(4);
        XXH3_state_t* state = XXH3_createState();
        XXH3_64bits_reset(state);
        ssize_t n;
        while ((n = ::read(fd, buf.data(), buf.size())) > 0) {
          XXH3_64bits_update(state, buf.data(), static_cast<size_t>(n));
        }
        if (n < 0 || XXH3_64bits_digest(state) != sums_[i]) ++wrong;
        XXH3_freeState(state);
        ::close(fd);
      }
      ::_exit(wrong == 0 ? 0 : 1);
    }
    int status = 0;
    if (!WaitFor([&] { return ::waitpid(pid, &status, WNOHANG) == pid; }, 600)) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      FAIL() << "epoch " << epoch << " did not finish";
    }
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "epoch " << epoch;
    s = StatsJson(mnt());
    origin_per_epoch.push_back(OriginBytes(s) - origin_before);
    origin_before = OriginBytes(s);
  }
  EXPECT_TRUE(MountAnswers());
  EXPECT_EQ(cgroup_->OomKills(), 0u);
  // What the tier may hold now (the governor's target): the bound for later epochs.
  const uint64_t tier_now =
      std::min(ram, s["memory"]["pressure"]["ram_cache_bytes"].get<uint64_t>());
  if (others_grow_by > 0) {
    // It is still there, holding its memory: the tier made room rather than the kernel (its
    // target went below the plan), and what reclaim cannot take back is within the limit less
    // the page-cache share again (the governor's target; a quarter of the share for the
    // sample in flight).
    EXPECT_EQ(::kill(other, 0), 0) << "the growing process is gone";
    EXPECT_LT(tier_now, ram) << s["memory"].dump(2);
    EXPECT_LE(s["memory"]["pressure"]["unreclaimable_bytes"].get<uint64_t>(),
              kLimit - page_cache + page_cache / 4)
        << s["memory"].dump(2);
  }
  const uint64_t rereads = s["origin"]["rereads"]["bytes"].get<uint64_t>();
  EXPECT_LE(rereads, 3 * dataset / 100) << s["origin"].dump(2);
  // Epoch 1 reads each origin byte about once: the samples' neighbours an extent brings are
  // files of the same epoch, not extra reads.
  EXPECT_LE(origin_per_epoch[0], dataset + dataset / 10) << s["origin"].dump(2);
  // The tier held about `tier_now` bytes through epochs 2 and 3; allow a third of it for files
  // in flight, the shards' rounding and the governor's margin (a fifth was passed by 3% in a CI
  // run over /dev/fuse: 75% of the tier's bytes saved). A tier that thrashed would save none.
  // When others grow at the start of epoch 2, what the tier gave back then is read again in it.
  for (int epoch = 1; epoch < 3; ++epoch) {
    const bool shrinking = others_grow_by > 0 && epoch == 1;
    EXPECT_LE(origin_per_epoch[epoch], shrinking ? dataset : dataset - tier_now * 2 / 3)
        << "epoch " << epoch + 1 << ", tier " << tier_now << " bytes\n" << s.dump(2);
  }
  EXPECT_LE(PeakRss(m.pid()), memory - page_cache) << s["memory"].dump(2);
  // Each byte held once: once hold-once's drops have run (200 ms after a file's last READ, 2 s
  // after a push), no file the RAM tier holds still has pages in the page cache, so the tier and
  // the page cache hold different files. Polled until none is left, as the drops are
  // asynchronous: about 2 MiB were left when the epochs ended, 0 within a second or two. With -o
  // hold_once=off about 25 MiB of the last epoch's files stayed held twice (the tier's share of
  // what the page cache kept), and this fails. The margin, one file (1 MiB here), is for a file
  // the prefetcher pushed that was never read: its drop waits for the read (not seen so far).
  const uint64_t twice_margin = 1 * kMiB;
  PageCacheShare cached;
  WaitFor([&] { return (cached = MeasurePageCache(mnt(), names_)).held_twice == 0; }, 10);
  EXPECT_LE(cached.held_twice, twice_margin)
      << cached.held_twice << " bytes of files the RAM tier holds are also in the page cache "
      << "(of " << cached.total << " there)\n" << s["memory"].dump(2);
  // The daemon's own memory (anonymous: the tier, buffers, tables; its file pages are shared
  // libraries and the shards' maps, the page cache of whoever read them) plus the mount's page
  // cache is printed, not bounded by --memory: the page cache is elastic and fills what the
  // cgroup has left (here 32 MiB the reader does not use), so that sum measures the cgroup's
  // slack, and where the cgroup has none the kernel itself keeps it under the limit. What the
  // daemon controls is bounded: its peak (above) and the bytes held twice.
  const uint64_t anon = ProcStatusBytes(m.pid(), "RssAnon");
  // Shared-limit mode turns hold-once on: files the tier holds left the page cache after their
  // READs.
  EXPECT_GT(s["memory"]["hold_once"]["dropped_files"].get<uint64_t>(), 0u)
      << s["memory"].dump(2) << s["cache"].dump(2) << s["requests"].dump(2);
  std::cerr << "within " << source << " " << (memory >> 20) << " MiB: origin per epoch " << origin_per_epoch[0] << " / "
            << origin_per_epoch[1] << " / " << origin_per_epoch[2] << " of " << dataset
            << ", re-reads " << rereads << ", daemon peak RSS " << (PeakRss(m.pid()) >> 20)
            << " MiB, cgroup peak " << (cgroup_->PeakBytes() >> 20) << " MiB, RAM tier "
            << (ram >> 20) << " MiB; after the epochs: daemon anonymous " << (anon >> 20)
            << " MiB + the mount's page cache " << (cached.total >> 20) << " MiB ("
            << (cached.held_twice >> 10) << " KiB of it held twice)\n";
  EXPECT_EQ(m.StopWith(SIGTERM), 0);
}

}  // namespace
}  // namespace mmfs::testing
