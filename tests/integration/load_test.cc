// Load: 64 concurrent readers (32 threads and 32 processes) plus fio's random reads, for a
// bounded time (MMFS_LOAD_SECONDS, default 60), over a dataset larger than the daemon's RAM and
// SSD tiers, with the daemon in a memory cgroup. Label "load".
//
// Stated bounds, checked here: no read error and no wrong byte; no single open-read-close slower
// than 5 s; the daemon never OOM-killed and its peak memory (cgroup) under its budgets plus
// 192 MiB; its descriptors back to baseline after 100,000 open/close cycles; the nofile limit
// raised to the hard limit and max_background as configured.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>
#include <unordered_map>

#include "tests/integration/cgroup_helper.h"
#include "tests/integration/mount_helper.h"
#include "tests/test_util.h"

namespace mmfs::testing {
namespace {

namespace fsys = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr double kMaxReadSeconds = 5.0;
constexpr uint64_t kRamCache = 12 << 20;
constexpr uint64_t kSsdCache = 16 << 20;
constexpr uint64_t kDaemonMemoryLimit = 512ull << 20;

double LoadSeconds() {
  const char* v = std::getenv("MMFS_LOAD_SECONDS");
  return v != nullptr ? std::atof(v) : 60.0;
}

// The result of one reader: files read, errors (failed or wrong bytes), slowest read.
struct ReaderResult {
  uint64_t reads = 0;
  uint64_t errors = 0;
  double max_seconds = 0;
};

// Reads random files whole until `deadline`, dropping each from the page cache afterwards so the
// next read of it reaches the daemon again, and checks every byte against `sums`.
ReaderResult ReadUntil(const std::string& mnt, const std::vector<std::string>& files,
                       const std::unordered_map<std::string, uint64_t>& sums, unsigned seed,
                       Clock::time_point deadline) {
  ReaderResult r;
  std::mt19937 rng(seed);
  std::string buf;
  char chunk[1 << 16];
  while (Clock::now() < deadline) {
    const std::string& rel = files[rng() % files.size()];
    auto start = Clock::now();
    int fd = ::open((mnt + "/" + rel).c_str(), O_RDONLY);
    buf.clear();
    bool ok = fd >= 0;
    while (ok) {
      ssize_t n = ::read(fd, chunk, sizeof chunk);
      if (n < 0) ok = false;
      if (n <= 0) break;
      buf.append(chunk, static_cast<size_t>(n));
    }
    if (fd >= 0) {
      ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
      ::close(fd);
    }
    r.max_seconds = std::max(r.max_seconds,
                             std::chrono::duration<double>(Clock::now() - start).count());
    ++r.reads;
    if (!ok || XXH3_64bits(buf.data(), buf.size()) != sums.at(rel)) ++r.errors;
  }
  return r;
}

class LoadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto gen = RunCommand({GenDatasetBinary(), src(), "-n", "3000", "-c", "20", "--max-side", "320",
                           "--seed", "7"},
                          600);
    ASSERT_EQ(gen.exit_code, 0) << gen.output;
    auto pack = RunCommand({MmfsBinary(), "pack", "-q", src(), dst()});
    ASSERT_EQ(pack.exit_code, 0) << pack.output;
    fsys::create_directories(mnt());
    for (const auto& e : fsys::recursive_directory_iterator(src())) {
      if (!e.is_regular_file()) continue;
      std::string rel = fsys::relative(e.path(), src()).string();
      std::string data = ReadFile(e.path());
      sums_[rel] = XXH3_64bits(data.data(), data.size());
      files_.push_back(rel);
      bytes_ += data.size();
    }
    std::sort(files_.begin(), files_.end());
  }
  void TearDown() override {
    if (IsMountPoint(mnt())) {
      ADD_FAILURE() << "mount left behind";
      ForceCleanup(mnt());
    }
    cgroup_.reset();  // whatever is left in it goes back to the root group, then the group goes
    if (mounted_fusectl_) ::umount2("/sys/fs/fuse/connections", MNT_DETACH);
  }
  std::string src() const { return tmp_ / "src"; }
  std::string dst() const { return tmp_ / "data.mmfs"; }
  std::string mnt() const { return tmp_ / "mnt"; }
  size_t DaemonFds(pid_t pid) {
    size_t n = 0;
    for ([[maybe_unused]] const auto& e :
         fsys::directory_iterator("/proc/" + std::to_string(pid) + "/fd")) {
      ++n;
    }
    return n;
  }
  TempDir tmp_;
  std::vector<std::string> files_;
  std::unordered_map<std::string, uint64_t> sums_;
  uint64_t bytes_ = 0;
  std::unique_ptr<MemoryCgroup> cgroup_;
  bool mounted_fusectl_ = false;
};

TEST_F(LoadTest, SixtyFourReadersAndFioStayCorrectBoundedAndWithinBudgets) {
  ASSERT_GT(bytes_, 2 * (kRamCache + kSsdCache)) << "the dataset must be larger than the caches";
  ForegroundMount m(dst(), mnt(),
                    {"--ram-cache", std::to_string(kRamCache), "--cache-dir", tmp_ / "ssd",
                     "--ssd-cache", std::to_string(kSsdCache), "--log-file", tmp_ / "daemon.log"});
  ASSERT_TRUE(m.mounted());
  const pid_t daemon = m.pid();

  // The daemon in a memory cgroup of its own.
  std::string error;
  cgroup_ = MemoryCgroup::Create("mmfs-test-load-" + std::to_string(::getpid()),
                                 kDaemonMemoryLimit, &error);
  ASSERT_NE(cgroup_, nullptr) << error;
  ASSERT_TRUE(cgroup_->Add(daemon));

  // Started with the hard limit of descriptors and the configured max_background.
  std::string limits = ReadFile("/proc/" + std::to_string(daemon) + "/limits");
  size_t at = limits.find("Max open files");
  ASSERT_NE(at, std::string::npos);
  std::istringstream lim(limits.substr(at + 14));
  std::string soft, hard;
  lim >> soft >> hard;
  EXPECT_EQ(soft, hard) << "nofile soft limit not raised";
  if (!fsys::exists("/sys/fs/fuse/connections/" + std::to_string(0)) &&
      fsys::is_empty("/sys/fs/fuse/connections")) {
    mounted_fusectl_ =
        ::mount("fusectl", "/sys/fs/fuse/connections", "fusectl", 0, nullptr) == 0;
  }
  struct stat st;
  ASSERT_EQ(::stat(mnt().c_str(), &st), 0);
  std::string bg = ReadFile("/sys/fs/fuse/connections/" + std::to_string(minor(st.st_dev)) +
                            "/max_background");
  EXPECT_EQ(std::atoi(bg.c_str()), 64) << bg;

  const double seconds = LoadSeconds();
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(seconds));
  // 32 reader processes (forked before any thread exists), each reporting through a pipe.
  std::vector<std::pair<pid_t, int>> children;
  for (unsigned p = 0; p < 32; ++p) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(fds[0]);
      ReaderResult r = ReadUntil(mnt(), files_, sums_, 1000 + p, deadline);
      if (::write(fds[1], &r, sizeof r) != sizeof r) ::_exit(2);
      ::_exit(0);
    }
    ::close(fds[1]);
    children.emplace_back(pid, fds[0]);
  }
  // fio's random reads over every file, alongside.
  pid_t fio = ::fork();
  ASSERT_GE(fio, 0);
  if (fio == 0) {
    int out = ::open((tmp_ / "fio.json").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(out, STDOUT_FILENO);
    std::string runtime = "--runtime=" + std::to_string(static_cast<int>(seconds));
    std::string dir = "--opendir=" + mnt() + "/train";
    ::execlp("fio", "fio", "--name=mmfs-load", dir.c_str(), "--readonly", "--rw=randread",
             "--bs=4k", "--numjobs=4", "--time_based", runtime.c_str(), "--ioengine=psync",
             "--invalidate=1", "--output-format=json", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // 32 reader threads.
  std::vector<ReaderResult> thread_results(32);
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < 32; ++t) {
    threads.emplace_back([&, t] { thread_results[t] = ReadUntil(mnt(), files_, sums_, t, deadline); });
  }
  for (auto& t : threads) t.join();
  ReaderResult total;
  auto add = [&](const ReaderResult& r) {
    total.reads += r.reads;
    total.errors += r.errors;
    total.max_seconds = std::max(total.max_seconds, r.max_seconds);
  };
  for (const auto& r : thread_results) add(r);
  for (auto [pid, fd] : children) {
    ReaderResult r;
    EXPECT_EQ(::read(fd, &r, sizeof r), static_cast<ssize_t>(sizeof r)) << "reader process died";
    ::close(fd);
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    add(r);
  }
  int fio_status = 0;
  ::waitpid(fio, &fio_status, 0);
  EXPECT_TRUE(WIFEXITED(fio_status) && WEXITSTATUS(fio_status) == 0)
      << "fio failed: " << ReadFile(tmp_ / "fio.json");
  std::string fio_out = ReadFile(tmp_ / "fio.json");
  // fio prints notes ("opendir added N files") before its JSON document.
  auto fio_json = nlohmann::json::parse(fio_out.substr(std::min(fio_out.find('{'), fio_out.size())),
                                        nullptr, false);
  ASSERT_FALSE(fio_json.is_discarded()) << ReadFile(tmp_ / "fio.json");
  uint64_t fio_ios = 0;
  for (const auto& job : fio_json["jobs"]) {
    EXPECT_EQ(job["error"], 0) << job.dump();
    fio_ios += job["read"]["total_ios"].get<uint64_t>();
  }

  std::cerr << "load: " << total.reads << " reads by 64 readers in " << seconds << " s, "
            << total.errors << " errors, slowest " << total.max_seconds << " s; fio " << fio_ios
            << " random 4k reads\n";
  EXPECT_EQ(total.errors, 0u);
  EXPECT_GT(total.reads, 64u);
  EXPECT_GT(fio_ios, 0u);
  EXPECT_LT(total.max_seconds, kMaxReadSeconds);

  // The daemon is alive, was never OOM-killed, and stayed within its budgets.
  EXPECT_EQ(::kill(daemon, 0), 0);
  EXPECT_EQ(cgroup_->OomKills(), 0u);
  uint64_t peak = cgroup_->PeakBytes();
  std::cerr << "load: daemon peak memory (cgroup, page cache included) " << (peak >> 20)
            << " MiB\n";
  EXPECT_LT(peak, kRamCache + kSsdCache + (64ull << 20) + (192ull << 20));
  auto stats = nlohmann::json::parse(ReadFile(mnt() + "/.mmfs/stats"));
  EXPECT_EQ(stats["errors"]["checksum"], 0);
  EXPECT_EQ(stats["errors"]["io"], 0);
  for (const auto& t : stats["cache"]["tiers"]) {
    EXPECT_LE(t["bytes_used"].get<uint64_t>(), t["bytes_budget"].get<uint64_t>()) << t.dump();
  }

  // Descriptors back to baseline after 100,000 open/close cycles.
  size_t before = DaemonFds(daemon);
  for (int i = 0; i < 100000; ++i) {
    int fd = ::open((mnt() + "/" + files_[static_cast<size_t>(i) % files_.size()]).c_str(), O_RDONLY);
    ASSERT_GE(fd, 0);
    ::close(fd);
  }
  EXPECT_EQ(DaemonFds(daemon), before);
  EXPECT_EQ(m.StopWith(SIGTERM), 0);
}

}  // namespace
}  // namespace mmfs::testing
