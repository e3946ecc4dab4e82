// How requests reach the daemon: FUSE over io_uring or /dev/fuse (fs/fuse/transport.h).
//
// Each case sets the kernel's offer (/sys/module/fuse/parameters/enable_uring, root only) for
// its duration and restores it after, then mounts, compares every file with its source through
// the mount, and checks what `mmfs stats` says of the transport: the ring when it is offered
// (with the requests that came over it), /dev/fuse when
// it is not or when classic is asked, and a refusal naming the reason when uring is asked and
// cannot be had. The rest of the mount suite runs on both transports in CI
// (tools/run-tests.sh runs it a second time with the ring offered).

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/integration/mount_helper.h"
#include "tests/test_util.h"

namespace mmfs::testing {
namespace {

namespace fsys = std::filesystem;

constexpr char kEnableUring[] = "/sys/module/fuse/parameters/enable_uring";

// Sets the kernel's offer of io_uring to new FUSE mounts, and puts it back as it was.
class KernelRingOffer {
 public:
  explicit KernelRingOffer(bool offer) {
    std::ifstream in(kEnableUring);
    if (!(in >> before_)) return;
    usable_ = Write(offer ? "Y" : "N");
  }
  ~KernelRingOffer() {
    if (usable_) Write(before_);
  }
  KernelRingOffer(const KernelRingOffer&) = delete;
  KernelRingOffer& operator=(const KernelRingOffer&) = delete;
  bool usable() const { return usable_; }

 private:
  static bool Write(const std::string& value) {
    std::ofstream out(kEnableUring);
    out << value << "\n";
    out.flush();
    return static_cast<bool>(out);
  }
  std::string before_;
  bool usable_ = false;
};

class TransportMountTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tmp_ = new TempDir();
    auto gen = RunCommand(
        {GenDatasetBinary(), Src(), "-n", "200", "-c", "4", "--max-side", "160", "--seed", "5"},
        300);
    ASSERT_EQ(gen.exit_code, 0) << gen.output;
    auto pack = RunCommand({MmfsBinary(), "pack", Src(), Dst()}, 600);
    ASSERT_EQ(pack.exit_code, 0) << pack.output;
    // Whether this build can serve over io_uring at all: mmfs says so when refusing.
    fsys::create_directories(Mnt());
    KernelRingOffer offer(true);
    if (offer.usable()) {
      auto probe = RunCommand({MmfsBinary(), "mount", Dst(), Mnt(), "-o", "transport=uring"});
      library_has_ring_ = probe.output.find("older than 3.18") == std::string::npos;
      if (probe.exit_code == 0) RunCommand({MmfsBinary(), "umount", Mnt()});
    }
  }
  static void TearDownTestSuite() {
    delete tmp_;
    tmp_ = nullptr;
  }
  void SetUp() override {
    if (::geteuid() != 0 || !fsys::exists(kEnableUring)) {
      GTEST_SKIP() << "needs root and a kernel with " << kEnableUring;
    }
  }
  static std::string Src() { return *tmp_ / "src"; }
  static std::string Dst() { return *tmp_ / "data.mmfs"; }
  static std::string Mnt() { return *tmp_ / "mnt"; }

  // Every file through the mount, twice over: diff -r (read(2) in large chunks) and Python
  // (whose open() sends the isatty ioctl before reading).
  static void ReadEverythingExactly() {
    auto diff = RunCommand({"/usr/bin/diff", "-r", "-q", "--exclude=.mmfs", Src(), Mnt()}, 300);
    EXPECT_EQ(diff.exit_code, 0) << diff.output;
    auto py = RunCommand({"/usr/bin/python3", "-c",
                          "import os, sys\n"
                          "src, mnt = sys.argv[1], sys.argv[2]\n"
                          "n = 0\n"
                          "for d, _, files in os.walk(src):\n"
                          "    for f in files:\n"
                          "        p = os.path.join(d, f)\n"
                          "        with open(p, 'rb') as a, open(mnt + p[len(src):], 'rb') as b:\n"
                          "            if a.read() != b.read(): sys.exit('different bytes: ' + p)\n"
                          "        n += 1\n"
                          "print(n)\n",
                          Src(), Mnt()},
                         300);
    EXPECT_EQ(py.exit_code, 0) << py.output;
  }

  static TempDir* tmp_;
  static bool library_has_ring_;
};
TempDir* TransportMountTest::tmp_ = nullptr;
bool TransportMountTest::library_has_ring_ = false;

TEST_F(TransportMountTest, TheRingServesExactBytesWhenTheKernelOffersIt) {
  if (!library_has_ring_) GTEST_SKIP() << "this mmfs was built without libfuse 3.18";
  KernelRingOffer offer(true);
  ASSERT_TRUE(offer.usable());
  ForegroundMount mount(Dst(), Mnt());  // no option: auto
  ASSERT_TRUE(mount.mounted());
  ReadEverythingExactly();
  nlohmann::json stats = StatsJson(Mnt());
  EXPECT_EQ(stats["transport"]["name"], "io_uring") << stats["transport"].dump();
  EXPECT_GT(stats["transport"]["ring_requests"].get<uint64_t>(), 0u);
  EXPECT_GT(stats["requests"]["read"]["count"].get<uint64_t>(), 0u);  // cold files: READs too
  auto human = RunCommand({MmfsBinary(), "stats", Mnt()});
  EXPECT_NE(human.output.find("transport io_uring"), std::string::npos) << human.output;
}

TEST_F(TransportMountTest, ClassicIsKeptWhenAskedEvenWhereTheRingIsOffered) {
  KernelRingOffer offer(true);
  ASSERT_TRUE(offer.usable());
  ForegroundMount mount(Dst(), Mnt(), {"-o", "transport=classic"});
  ASSERT_TRUE(mount.mounted());
  ReadEverythingExactly();
  nlohmann::json stats = StatsJson(Mnt());
  EXPECT_EQ(stats["transport"]["name"], "classic");
  EXPECT_EQ(stats["transport"]["ring_requests"].get<uint64_t>(), 0u);
  EXPECT_NE(stats["transport"]["why"].get<std::string>().find("transport=classic"),
            std::string::npos);
}

TEST_F(TransportMountTest, AutoFallsBackToDevFuseSayingWhy) {
  KernelRingOffer offer(false);
  ASSERT_TRUE(offer.usable());
  ForegroundMount mount(Dst(), Mnt());
  ASSERT_TRUE(mount.mounted());
  ReadEverythingExactly();
  nlohmann::json stats = StatsJson(Mnt());
  EXPECT_EQ(stats["transport"]["name"], "classic");
  EXPECT_EQ(stats["transport"]["ring_requests"].get<uint64_t>(), 0u);
  const std::string why = stats["transport"]["why"].get<std::string>();
  EXPECT_NE(why.find(library_has_ring_ ? "enable_uring" : "older than 3.18"), std::string::npos)
      << why;
}

TEST_F(TransportMountTest, UringIsRefusedNamingWhatIsMissing) {
  KernelRingOffer offer(false);
  ASSERT_TRUE(offer.usable());
  auto r = RunCommand({MmfsBinary(), "mount", Dst(), Mnt(), "-o", "transport=uring"});
  if (r.exit_code == 0) RunCommand({MmfsBinary(), "umount", Mnt()});
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(library_has_ring_ ? "echo Y > " : "build-libfuse-uring.sh"),
            std::string::npos)
      << r.output;
  auto bad = RunCommand({MmfsBinary(), "mount", Dst(), Mnt(), "-o", "transport=ring"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.output.find("-o transport=ring: must be auto, uring or classic"), std::string::npos)
      << bad.output;
}

}  // namespace
}  // namespace mmfs::testing
