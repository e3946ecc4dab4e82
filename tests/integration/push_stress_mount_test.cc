// Many readers against few request threads: the page-cache push must never hang a mount.
//
// A push stores a prefetched file into the kernel's page cache (notify_store), which waits for
// every page a READ of that file holds locked; only a request thread can answer that READ. Each
// case mounts afresh (cold page cache) with `-o threads=N` and starts M processes at once, each
// comparing one class folder of the mount against its source with `diff -r` or Python (exact
// bytes; Python's open() also sends the ioctl that waits for a push). A case
// that does not finish within its deadline is a hang: the FUSE connection is aborted (the only way
// to free readers stuck in the kernel), the readers are killed and the test fails naming the case.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/integration/mount_helper.h"
#include "tests/test_util.h"

extern char** environ;

namespace mmfs::testing {
namespace {

namespace fsys = std::filesystem;

constexpr int kClasses = 8;
constexpr int kPushSamples = 480;  // 60 per class: long enough runs for the prefetcher to push
// Normal cases take well under a second in the release build, a few seconds under TSan with
// 128 readers; a hang never ends.
constexpr double kCaseDeadlineSeconds = 90;

// Python's open() sends an ioctl (isatty) before its first read, which waits for the file's push:
// the other path a push can hold a request thread on.
constexpr char kPythonCompare[] =
    "import os, sys\n"
    "src, mnt = sys.argv[1], sys.argv[2]\n"
    "for name in sorted(os.listdir(src)):\n"
    "    with open(os.path.join(mnt, name), 'rb') as f: got = f.read()\n"
    "    with open(os.path.join(src, name), 'rb') as f: want = f.read()\n"
    "    if got != want: sys.exit('different bytes: ' + name)\n";

// Reader `i` compares folder `a` (the source) with `b` (the mount): `diff -r` or Python.
pid_t SpawnReader(int i, const std::string& a, const std::string& b) {
  std::vector<std::string> args = {"/usr/bin/diff", "-r", "-q", a, b};
  if (i % 2 == 1) args = {"/usr/bin/python3", "-c", kPythonCompare, a, b};
  std::vector<char*> argv;
  for (std::string& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  if (posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  return pid;
}

class PushStressMountTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tmp_ = new TempDir();
    auto gen = RunCommand({GenDatasetBinary(), Src(), "-n", std::to_string(kPushSamples), "-c",
                           std::to_string(kClasses), "--max-side", "160", "--seed", "11"},
                          300);
    ASSERT_EQ(gen.exit_code, 0) << gen.output;
    auto pack = RunCommand({MmfsBinary(), "pack", Src(), Dst()}, 600);
    ASSERT_EQ(pack.exit_code, 0) << pack.output;
    for (const auto& e : fsys::recursive_directory_iterator(Src())) {
      if (e.is_directory() && e.path().filename().string().rfind("class_", 0) == 0) {
        folders_.push_back(fsys::relative(e.path(), Src()).string());
      }
    }
    std::sort(folders_.begin(), folders_.end());
  }
  static void TearDownTestSuite() {
    delete tmp_;
    tmp_ = nullptr;
  }
  static std::string Src() { return *tmp_ / "src"; }
  static std::string Dst() { return *tmp_ / "data.mmfs"; }
  static std::string Mnt() { return *tmp_ / "mnt"; }

  // One case: `readers` diffs at once against a fresh mount with `threads` request threads.
  // A hang or a wrong byte fails the test, after everything is freed.
  static void RunCase(unsigned threads, int readers) {
    SCOPED_TRACE("threads=" + std::to_string(threads) + " readers=" + std::to_string(readers));
    fsys::create_directories(Mnt());
    ForegroundMount mount(Dst(), Mnt(), {"-o", "threads=" + std::to_string(threads)});
    ASSERT_TRUE(mount.mounted());
    std::vector<pid_t> pids;
    for (int i = 0; i < readers; ++i) {
      const std::string& folder = folders_[static_cast<size_t>(i) % folders_.size()];
      pid_t pid = SpawnReader(i, Src() + "/" + folder, Mnt() + "/" + folder);
      ASSERT_GT(pid, 0);
      pids.push_back(pid);
    }
    int failed = 0;
    size_t left = pids.size();
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(kCaseDeadlineSeconds);
    WaitFor(
        [&] {
          for (pid_t& pid : pids) {
            if (pid <= 0) continue;
            int status = 0;
            if (::waitpid(pid, &status, WNOHANG) == pid) {
              if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
              pid = -1;
              --left;
            }
          }
          return left == 0 || std::chrono::steady_clock::now() > deadline;
        },
        kCaseDeadlineSeconds + 5);
    if (left > 0) {
      // Readers stuck in the kernel wake only when the connection goes.
      ForceCleanup(Mnt());
      for (pid_t pid : pids) {
        if (pid > 0) ::kill(pid, SIGKILL);
      }
      for (pid_t pid : pids) {
        if (pid > 0) ::waitpid(pid, nullptr, 0);
      }
    }
    EXPECT_EQ(left, 0u) << left << " of " << readers << " readers still waiting after "
                        << kCaseDeadlineSeconds << " s: the mount hung";
    EXPECT_EQ(failed, 0) << failed << " readers found different bytes or an error";
    if (left == 0) {
      const nlohmann::json stats = StatsJson(Mnt());
      if (stats.contains("readahead")) {
        const nlohmann::json& pushed = stats["readahead"]["pushed"];
        pushed_files_ += pushed["files"].get<uint64_t>();
        waited_ += pushed["waited"].get<uint64_t>() + pushed["wait_expired"].get<uint64_t>();
        // Over io_uring the READs are answered by the rings, one per CPU, not by -o threads:
        // there the bound is one waiter fewer than rings (fuse_server.cc).
        if (threads == 1 && stats["transport"]["name"] != "io_uring") {
          EXPECT_EQ(pushed["waited"].get<uint64_t>() + pushed["wait_expired"].get<uint64_t>(), 0u)
              << "the only request thread waited for a push";
        }
      }
      EXPECT_EQ(mount.StopWith(SIGTERM), 0);
    }
  }

  static TempDir* tmp_;
  static std::vector<std::string> folders_;
  static uint64_t pushed_files_;  // over every case: the push path was taken
  static uint64_t waited_;        // over every case: opens that waited for their push
};

TempDir* PushStressMountTest::tmp_ = nullptr;
std::vector<std::string> PushStressMountTest::folders_;
uint64_t PushStressMountTest::pushed_files_ = 0;
uint64_t PushStressMountTest::waited_ = 0;

TEST_F(PushStressMountTest, FewThreadsManyReadersNeverHangAndReadExactBytes) {
  ASSERT_EQ(folders_.size(), static_cast<size_t>(kClasses));
  for (unsigned threads : {1u, 2u, 3u, 4u}) {
    for (int readers : {1, 3, 10, 32, 128}) {
      RunCase(threads, readers);
      if (HasFailure()) return;  // one hang is enough to say; the rest would repeat it
    }
  }
  EXPECT_GT(pushed_files_, 0u) << "no file was pushed: the test did not exercise the push";
  EXPECT_GT(waited_, 0u) << "no open waited for its push: the ioctl path was not exercised";
}

}  // namespace
}  // namespace mmfs::testing
