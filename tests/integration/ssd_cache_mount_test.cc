// The SSD tier through a real mount, where the cache directory is shared or small: a link planted
// by another user is refused, warm-up reports what the tier really kept on a small disk and why
// the rest was not stored, a remount with the default budget keeps a warmed cache, and a second
// mount of the dataset on the same directory is refused.

#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>

#include "tests/integration/mount_helper.h"
#include "tests/test_util.h"

namespace mmfs::testing {
namespace {

namespace fsys = std::filesystem;

// Runs `act` in a child process as user and group 65534 (nobody); true if it returned true.
// `act` must make plain system calls only (the child of a threaded process may not allocate).
// The child gets 30 s and is killed after that.
bool AsNobody(const std::function<bool()>& act) {
  pid_t pid = ::fork();
  if (pid == 0) {
    if (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(2);
    ::_exit(act() ? 0 : 1);
  }
  if (pid < 0) return false;
  int status = 0;
  pid_t done = 0;
  bool finished = WaitFor([&] { return (done = ::waitpid(pid, &status, WNOHANG)) != 0; }, 30);
  if (!finished) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    ADD_FAILURE() << "the child acting as nobody did not finish in 30 s";
    return false;
  }
  return done == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

class SsdCacheMountTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (a second user, tmpfs mounts)";
    auto gen =
        GenDataset(tmp_ / "src", {"-n", "300", "-c", "3", "--max-side", "256", "--seed", "5"}, 300);
    ASSERT_EQ(gen.exit_code, 0) << gen.output;
    auto pack = RunCommand({MmfsBinary(), "pack", "-q", tmp_ / "src", dst()});
    ASSERT_EQ(pack.exit_code, 0) << pack.output;
    fsys::create_directories(mnt());
    for (const auto& e : fsys::recursive_directory_iterator(tmp_ / "src")) {
      if (e.is_regular_file()) {
        ++files_;
        total_bytes_ += e.file_size();
      }
    }
  }
  void TearDown() override {
    if (IsMountPoint(mnt())) {
      ADD_FAILURE() << "mount left behind";
      ForceCleanup(mnt());
    }
    if (IsMountPoint(mnt2())) {
      ADD_FAILURE() << "second mount left behind";
      ForceCleanup(mnt2());
    }
    if (IsMountPoint(tmp_ / "ssd")) ::umount2((tmp_ / "ssd").c_str(), MNT_DETACH);
  }
  std::string dst() const { return tmp_ / "ds.mmfs"; }
  std::string mnt() const { return tmp_ / "mnt"; }
  std::string mnt2() const { return tmp_ / "mnt2"; }
  void MountSmallDisk(uint64_t bytes) {
    fsys::create_directories(tmp_ / "ssd");
    std::string opt = "size=" + std::to_string(bytes);
    ASSERT_EQ(::mount("tmpfs", (tmp_ / "ssd").c_str(), "tmpfs", 0, opt.c_str()), 0);
  }
  static const nlohmann::json& Ssd(const nlohmann::json& s) {
    for (const auto& t : s["cache"]["tiers"]) {
      if (t["name"] == "ssd") return t;
    }
    static const nlohmann::json none;
    return none;
  }
  nlohmann::json Stats() { return nlohmann::json::parse(ReadFile(mnt() + "/.mmfs/stats")); }
  nlohmann::json WarmJson() {
    auto warm = RunCommand({MmfsBinary(), "warmup", "--json", mnt()}, 300);
    size_t brace = warm.output.find('{');
    if (brace == std::string::npos) {
      ADD_FAILURE() << warm.output;
      return {};
    }
    auto j = nlohmann::json::parse(warm.output.substr(brace));
    j["exit_code"] = warm.exit_code;
    return j;
  }

  TempDir tmp_;
  uint64_t files_ = 0, total_bytes_ = 0;
};

// /tmp-like shared directory: nobody plants the cache's folders as links into root's files
// before root mounts with --cache-dir there.
TEST_F(SsdCacheMountTest, LinksPlantedByAnotherUserAreRefused) {
  ASSERT_EQ(::chmod(tmp_.path().c_str(), 0755), 0);
  std::string shared = tmp_ / "shared";
  fsys::create_directories(shared);
  ASSERT_EQ(::chmod(shared.c_str(), 01777), 0);
  std::string victim = tmp_ / "root-only";
  WriteFile(victim + "/a", "root's a");
  WriteFile(victim + "/b", "root's b");
  ASSERT_EQ(::chmod(victim.c_str(), 0700), 0);

  // The layout folder itself, as a link.
  ASSERT_TRUE(AsNobody([&] { return ::symlink(victim.c_str(), (shared + "/mmfs-cache-v1").c_str()) == 0; }));
  auto r = RunCommand({MmfsBinary(), "mount", dst(), mnt(), "--cache-dir", shared}, 60);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(shared + "/mmfs-cache-v1 is a symbolic link"), std::string::npos)
      << r.output;
  EXPECT_FALSE(IsMountPoint(mnt()));

  // A folder of nobody's, where the dataset's folder would be a link of theirs.
  ASSERT_TRUE(AsNobody([&] {
    return ::unlink((shared + "/mmfs-cache-v1").c_str()) == 0 &&
           ::mkdir((shared + "/mmfs-cache-v1").c_str(), 0777) == 0;
  }));
  auto ok = RunCommand({MmfsBinary(), "mount", dst(), mnt(), "--cache-dir", shared}, 60);
  EXPECT_NE(ok.exit_code, 0) << ok.output;
  EXPECT_NE(ok.output.find(shared + "/mmfs-cache-v1 is owned by uid 65534"), std::string::npos)
      << ok.output;
  EXPECT_NE(ok.output.find("refusing it"), std::string::npos) << ok.output;
  EXPECT_FALSE(IsMountPoint(mnt()));

  EXPECT_EQ(ReadFile(victim + "/a"), "root's a");
  EXPECT_EQ(ReadFile(victim + "/b"), "root's b");
  EXPECT_FALSE(fsys::exists(victim + "/00"));
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : fsys::directory_iterator(victim)) ++n;
  EXPECT_EQ(n, 2u);
}

// A 2 MiB disk for a larger dataset: warm-up stops at the free-space guard, its count of warmed
// files is what the tier holds, and it says why the rest was not stored.
TEST_F(SsdCacheMountTest, WarmupOnASmallDiskReportsWhatWasKept) {
  ASSERT_GT(total_bytes_, 3u << 20) << "the dataset must not fit the small disk";
  MountSmallDisk(2 << 20);
  ForegroundMount m(dst(), mnt(), {"--ram-cache", "1M", "--cache-dir", tmp_ / "ssd",
                                   "--ssd-cache", "100M"});
  ASSERT_TRUE(m.mounted());
  auto w = WarmJson();
  auto s = Stats();
  const auto& ssd = Ssd(s);
  EXPECT_EQ(w["loaded_files"].get<uint64_t>(), ssd["entries"].get<uint64_t>()) << w.dump() << s.dump(2);
  EXPECT_GT(w["not_stored"].get<uint64_t>(), 0u) << w.dump();
  EXPECT_EQ(w["exit_code"], 1) << w.dump();
  EXPECT_NE(w["not_stored_reason"].get<std::string>().find("free-space guard"), std::string::npos)
      << w.dump();
  struct statvfs v;
  ASSERT_EQ(::statvfs((tmp_ / "ssd").c_str(), &v), 0);
  EXPECT_GE(static_cast<double>(v.f_bavail) / static_cast<double>(v.f_blocks), 0.05);
  EXPECT_EQ(ssd["write_errors"].get<uint64_t>(), 0u) << s.dump(2);
  EXPECT_EQ(m.StopWith(SIGTERM), 0);
}

// The default budget is half of what the disk could give the tier, its own files included: a
// remount keeps every warmed entry.
TEST_F(SsdCacheMountTest, RemountWithTheDefaultBudgetKeepsAWarmedCache) {
  MountSmallDisk(2 * total_bytes_ + (4 << 20));
  std::vector<std::string> opts = {"--ram-cache", "1M", "--cache-dir", tmp_ / "ssd"};
  uint64_t warmed = 0;
  {
    ForegroundMount m(dst(), mnt(), opts);
    ASSERT_TRUE(m.mounted());
    auto w = WarmJson();
    warmed = Ssd(Stats())["entries"].get<uint64_t>();
    EXPECT_EQ(w["loaded_files"].get<uint64_t>(), warmed);
    EXPECT_EQ(warmed, files_) << w.dump();
    EXPECT_EQ(w["exit_code"], 0) << w.dump();
    EXPECT_EQ(m.StopWith(SIGTERM), 0);
  }
  ForegroundMount m(dst(), mnt(), opts);
  ASSERT_TRUE(m.mounted());
  EXPECT_EQ(Ssd(Stats())["entries"].get<uint64_t>(), warmed);
  EXPECT_EQ(m.StopWith(SIGTERM), 0);
}

// The cache folder deleted under a running mount: warm-up names that, not a full tier.
TEST_F(SsdCacheMountTest, WarmupNamesADeletedCacheDirectory) {
  ForegroundMount m(dst(), mnt(), {"--ram-cache", "1M", "--cache-dir", tmp_ / "ssd"});
  ASSERT_TRUE(m.mounted());
  fsys::remove_all(tmp_ / "ssd/mmfs-cache-v1");
  auto warm = RunCommand({MmfsBinary(), "warmup", mnt()}, 300);
  EXPECT_NE(warm.exit_code, 0) << warm.output;
  EXPECT_EQ(warm.output.find("tier full"), std::string::npos) << warm.output;
  EXPECT_NE(warm.output.find("could not be stored: the cache directory " +
                             (tmp_ / "ssd/mmfs-cache-v1/") ),
            std::string::npos)
      << warm.output;
  EXPECT_NE(warm.output.find("was removed"), std::string::npos) << warm.output;
  // mmfs stats names it too.
  auto stats = RunCommand({MmfsBinary(), "stats", mnt()});
  EXPECT_NE(stats.output.find("ssd tier stopped admitting: the cache directory "), std::string::npos)
      << stats.output;
  EXPECT_EQ(m.StopWith(SIGTERM), 0);
}

// Two mounts of one dataset on one cache directory would delete each other's half-written files
// and evict each other's entries: the second mount fails, naming the first, and the first keeps
// serving.
TEST_F(SsdCacheMountTest, SecondMountOfTheDatasetOnTheSameCacheDirIsRefused) {
  ForegroundMount m(dst(), mnt(), {"--ram-cache", "1M", "--cache-dir", tmp_ / "ssd"});
  ASSERT_TRUE(m.mounted());
  fsys::create_directories(mnt2());
  auto r = RunCommand({MmfsBinary(), "mount", dst(), mnt2(), "--cache-dir", tmp_ / "ssd"}, 60);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("is in use by another mmfs mount (pid "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("give this mount its own --cache-dir"), std::string::npos) << r.output;
  EXPECT_FALSE(IsMountPoint(mnt2()));
  auto warm = RunCommand({MmfsBinary(), "warmup", mnt()}, 300);
  EXPECT_EQ(warm.exit_code, 0) << warm.output;
  EXPECT_EQ(m.StopWith(SIGTERM), 0);
  // Once the first is gone, the directory is free again.
  ForegroundMount again(dst(), mnt2(), {"--ram-cache", "1M", "--cache-dir", tmp_ / "ssd"});
  EXPECT_TRUE(again.mounted());
  EXPECT_EQ(again.StopWith(SIGTERM), 0);
}

}  // namespace
}  // namespace mmfs::testing
