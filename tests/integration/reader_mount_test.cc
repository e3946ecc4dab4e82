// The "Readers" section of the stats with real processes: a Python reader of cold
// files from a slow origin is io-bound, one that decodes warm JPEGs with PIL is compute-bound, one
// that sleeps between reads is idle. Each reader measures the share of its time it spent inside
// open()/read() and its CPU time (tests/integration/reader_check.py); the daemon's stall and CPU
// shares for its row must agree within the tolerances below.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/mount_helper.h"
#include "tests/test_util.h"

extern char** environ;

namespace mmfs::testing {
namespace {

namespace fsys = std::filesystem;

// Absolute tolerances on shares of wall time. The daemon sees a request from its callback to its
// reply; the reader also sees the kernel's round trip and its own Python around the system call,
// and the stats window may start or end up to a few tens of ms off the reader's measured phase.
constexpr double kStallTolerance = 0.10;
// CPU time comes from /proc in clock ticks (10 ms), sampled once a second and interpolated.
constexpr double kCpuTolerance = 0.15;
constexpr double kSeconds = 5;

// A reader process with a pipe on its stdin: it stays alive until the pipe closes.
class Reader {
 public:
  Reader(const std::string& mnt, const std::string& mode, const std::string& result,
         const std::string& log) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return;
    const std::string script =
        SourceDir() + "/tests/integration/reader_check.py";
    std::vector<std::string> args = {"/usr/bin/python3",       script, mnt, mode,
                                     std::to_string(kSeconds), result};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[0], 0);
    posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    if (posix_spawn(&pid_, argv[0], &fa, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&fa);
    ::close(fds[0]);
    stdin_ = fds[1];
  }
  ~Reader() { Finish(); }
  pid_t pid() const { return pid_; }
  // Lets the reader exit and reaps it; kills it if it does not exit in time. Returns its status.
  int Finish() {
    if (stdin_ >= 0) ::close(stdin_);
    stdin_ = -1;
    if (pid_ <= 0) return status_;
    int status = 0;
    if (!WaitFor([&] { return ::waitpid(pid_, &status, WNOHANG) == pid_; }, 30)) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
    }
    pid_ = -1;
    status_ = status;
    return status;
  }

 private:
  pid_t pid_ = -1;
  int stdin_ = -1;
  int status_ = -1;
};

class ReaderMountTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // 400 samples (a JPEG and a caption each): more files than 5 s of 20 ms reads.
    auto gen = GenDataset(tmp_ / "src",
                          {"-n", "400", "-c", "4", "--max-side", "256", "--seed", "21"}, 300);
    ASSERT_EQ(gen.exit_code, 0) << gen.output;
    auto pack = RunCommand({MmfsBinary(), "pack", "-q", tmp_ / "src", dst()});
    ASSERT_EQ(pack.exit_code, 0) << pack.output;
    fsys::create_directories(mnt());
  }
  void TearDown() override {
    if (IsMountPoint(mnt())) {
      ADD_FAILURE() << "mount left behind";
      ForceCleanup(mnt());
    }
  }
  std::string dst() const { return tmp_ / "ds.mmfs"; }
  std::string mnt() const { return tmp_ / "mnt"; }

  // Runs `mode` and checks its row; `slow_origin_us` > 0 slows every shard read.
  void Check(const std::string& mode, const std::vector<std::string>& mount_args,
             const std::string& verdict) {
    ForegroundMount mount(dst(), mnt(), mount_args);
    ASSERT_TRUE(mount.mounted());
    const std::string result = tmp_ / (mode + ".json"), log = tmp_ / (mode + ".log");
    Reader reader(mnt(), mode, result, log);
    ASSERT_GT(reader.pid(), 0);
    ASSERT_TRUE(WaitFor([&] { return fsys::exists(result); }, 120)) << ReadFile(log);
    // Read at once, while the reader waits on its stdin: the window ends where its phase ended.
    const nlohmann::json measured = nlohmann::json::parse(ReadFile(result));
    const double wall = measured.at("wall").get<double>();
    const double window = std::floor((wall - 0.3) * 10) / 10;
    const std::string name = std::string("stats?window=") + std::to_string(window) + "&top=50";
    const nlohmann::json stats = nlohmann::json::parse(ReadFile(mnt() + "/.mmfs/" + name));
    const std::string metrics = ReadFile(mnt() + "/.mmfs/metrics");
    // The human view of the same readers (its window ends a moment later, so only its shape and
    // the reader's row are checked here, not the verdict).
    std::ostringstream window_arg;
    window_arg << window;
    const auto human = RunCommand({MmfsBinary(), "stats", "--window", window_arg.str(), mnt()});
    EXPECT_EQ(human.exit_code, 0) << human.output;
    EXPECT_NE(human.output.find("Readers over the last"), std::string::npos) << human.output;
    EXPECT_NE(human.output.find(std::to_string(measured.at("pid").get<int>()) + " "),
              std::string::npos) << human.output;
    EXPECT_NE(human.output.find("python3"), std::string::npos) << human.output;
    EXPECT_NE(human.output.find("\n  verdict   "), std::string::npos) << human.output;
    EXPECT_NE(human.output.find("\n  advice    "), std::string::npos) << human.output;
    EXPECT_EQ(reader.Finish(), 0) << ReadFile(log);
    EXPECT_EQ(mount.StopWith(SIGTERM), 0);

    const nlohmann::json& readers = stats.at("readers");
    SCOPED_TRACE("measured " + measured.dump() + "\nreaders " + readers.dump(1));
    EXPECT_NEAR(readers.at("window_seconds").get<double>(), window, 1e-6);
    const nlohmann::json* row = nullptr;
    for (const auto& r : readers.at("rows")) {
      if (r.at("kind") == "process" && r.at("pid") == measured.at("pid")) row = &r;
    }
    ASSERT_NE(row, nullptr);
    EXPECT_EQ(row->at("comm"), "python3");
    EXPECT_EQ(row->at("verdict"), verdict);
    const double io_share = measured.at("io").get<double>() / wall;
    const double cpu_share = measured.at("cpu").get<double>() / wall;
    if (mode == "compute") {
      // Warm reads never reach the daemon's read path: the reader's own "io" time is then
      // mostly Python and, on a loaded host, waiting for a core inside open()/read(), which the
      // daemon cannot see. It may only under-report: never more stall than the reader had.
      EXPECT_LE(row->at("stall_share").get<double>(), io_share + kStallTolerance);
      EXPECT_LT(row->at("stall_share").get<double>(), kStallTolerance);
    } else {
      EXPECT_NEAR(row->at("stall_share").get<double>(), io_share, kStallTolerance);
    }
    EXPECT_NEAR(row->at("cpu_share").get<double>(), cpu_share, kCpuTolerance);
    EXPECT_GT(row->at("rchar_bytes").get<uint64_t>(), 0u);
    // The verdict of all readers is this one's: it is the only one.
    EXPECT_EQ(readers.at("verdict"), verdict);
    EXPECT_FALSE(readers.at("advice").get<std::string>().empty());
    EXPECT_NE(metrics.find("mmfs_reader_stall_seconds_total{"), std::string::npos);
    EXPECT_NE(metrics.find("comm=\"python3\"}"), std::string::npos) << metrics;
    if (mode == "io") {
      // The main thread listed, a second thread read: two threads, one process (the kernel
      // names the calling thread in each request).
      EXPECT_EQ(row->at("threads").get<int>(), 2);
      EXPECT_GT(row->at("served_bytes").get<uint64_t>(), 0u);
    }
  }

  TempDir tmp_;
};

TEST_F(ReaderMountTest, ColdReadsFromASlowOriginAreIoBound) {
  ::setenv("MMFS_TEST_ORIGIN_DELAY_US", "20000", 1);
  // Sample reads only: an extent read would bring the next files along, and the reader would
  // wait on less than every file's 20 ms.
  Check("io", {"--readahead", "off", "-o", "extents=off"}, "io-bound");
  ::unsetenv("MMFS_TEST_ORIGIN_DELAY_US");
}

TEST_F(ReaderMountTest, DecodingWarmImagesIsComputeBound) { Check("compute", {}, "compute-bound"); }

TEST_F(ReaderMountTest, SleepingBetweenReadsIsIdle) { Check("idle", {}, "idle"); }

}  // namespace
}  // namespace mmfs::testing
