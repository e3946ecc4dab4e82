// Cache tests through a real mount: epochs over a dataset larger than the RAM budget, SSD tier
// persistence across remounts, and SSD faults (damaged entries, a full disk) that never yield
// wrong bytes.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <thread>
#include <atomic>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>

#include "tests/integration/mount_helper.h"
#include "tests/memcached_helper.h"
#include "tests/test_util.h"

namespace mmfs::testing {
namespace {

namespace fsys = std::filesystem;

// Reads a file whole, then drops its pages from the kernel's cache, so that the next read
// reaches the daemon again (what a page cache under memory pressure would do).
std::string ReadUncached(const std::string& path) {
  std::string data;
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return "<open failed>";
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      data = "<read failed: " + std::to_string(errno) + ">";
      break;
    }
    if (n == 0) break;
    data.append(buf, static_cast<size_t>(n));
  }
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
  return data;
}

class CacheMountTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto gen =
        GenDataset(src(), {"-n", "400", "-c", "4", "--max-side", "256", "--seed", "11"}, 300);
    ASSERT_EQ(gen.exit_code, 0) << gen.output;
    auto pack = RunCommand({MmfsBinary(), "pack", "-q", src(), dst()});
    ASSERT_EQ(pack.exit_code, 0) << pack.output;
    fsys::create_directories(mnt());
    for (const auto& e : fsys::recursive_directory_iterator(src())) {
      if (e.is_regular_file()) {
        std::string rel = fsys::relative(e.path(), src()).string();
        files_.push_back(rel);
        total_bytes_ += e.file_size();
      }
    }
    std::sort(files_.begin(), files_.end());
  }
  void TearDown() override {
    if (IsMountPoint(mnt())) {
      ADD_FAILURE() << "mount left behind";
      ForceCleanup(mnt());
    }
    if (IsMountPoint(tmp_ / "ssd")) ::umount2((tmp_ / "ssd").c_str(), MNT_DETACH);
  }
  nlohmann::json Stats() { return nlohmann::json::parse(ReadFile(mnt() + "/.mmfs/stats")); }
  // Overwrites the shard's data pages; its size and LMDB header stay, so it still mounts, but
  // every file in it fails its checksum: only the caches can serve.
  void RuinShardData() {
    std::string shard = dst() + "/shard-00000.mdb";
    std::string junk(fsys::file_size(shard) - 8192, '#');
    int fd = ::open(shard.c_str(), O_WRONLY);
    ASSERT_EQ(::pwrite(fd, junk.data(), junk.size(), 8192), static_cast<ssize_t>(junk.size()));
    ::close(fd);
  }
  // Reads every file once in a seeded random order; returns how many differed from the source.
  int Epoch(unsigned seed) {
    std::vector<std::string> order = files_;
    std::shuffle(order.begin(), order.end(), std::mt19937(seed));
    int wrong = 0;
    for (const std::string& rel : order) {
      if (ReadUncached(mnt() + "/" + rel) != ReadFile(src() + "/" + rel)) ++wrong;
    }
    return wrong;
  }
  static const nlohmann::json& Tier(const nlohmann::json& stats, const std::string& name) {
    for (const auto& t : stats["cache"]["tiers"]) {
      if (t["name"] == name) return t;
    }
    static const nlohmann::json none;
    return none;
  }
  std::string src() const { return tmp_ / "src"; }
  std::string dst() const { return tmp_ / "data.mmfs"; }
  std::string mnt() const { return tmp_ / "mnt"; }
  TempDir tmp_;
  std::vector<std::string> files_;
  uint64_t total_bytes_ = 0;
};

TEST_F(CacheMountTest, EpochsLargerThanRamAddUp) {
  // RAM budget about a third of the dataset. Sample reads only (extents=off): the sums below
  // count the tier's misses by what served them, and its byte ratio; extent reads have their
  // own tests (extent_mount_test.cc).
  std::string budget = std::to_string(total_bytes_ / 3 / 1024) + "K";
  ForegroundMount m(dst(), mnt(), {"--ram-cache", budget, "-o", "extents=off"});
  ASSERT_TRUE(m.mounted());
  EXPECT_EQ(Epoch(0), 0);
  {
    // A fresh mount has nothing in the kernel's cache: every byte read came from the daemon,
    // in a READ reply or pushed with a LOOKUP reply (a sample's caption after its image). A
    // reader may outrun a push and READ the same bytes: only then can the sum exceed the data.
    auto s = Stats();
    uint64_t served = s["bytes_served"].get<uint64_t>();
    uint64_t pushed = s["readahead"]["pushed"]["bytes"].get<uint64_t>();
    EXPECT_LE(served, total_bytes_) << s.dump(2);
    EXPECT_GE(served + pushed, total_bytes_) << s.dump(2);
  }
  for (unsigned e = 1; e < 3; ++e) EXPECT_EQ(Epoch(e), 0) << "epoch " << e;
  auto s = Stats();
  const auto& ram = Tier(s, "ram");
  uint64_t lookups = ram["lookups"].get<uint64_t>();
  uint64_t hits = ram["hits"].get<uint64_t>();
  EXPECT_EQ(hits + ram["misses"].get<uint64_t>(), lookups);
  // Each RAM miss was served by exactly one of: a prefetched file, an origin read.
  uint64_t prefetched = 0;
  for (const auto& [name, p] : s["readahead"]["patterns"].items()) {
    prefetched += p["used"].get<uint64_t>();
  }
  EXPECT_EQ(s["origin"]["reads"].get<uint64_t>() + prefetched, ram["misses"].get<uint64_t>());
  // Later epochs too, but for the odd page the kernel declined to drop (fadvise is advice).
  const uint64_t served = s["bytes_served"].get<uint64_t>();
  EXPECT_LE(served, 3 * total_bytes_);
  const uint64_t pushed = s["readahead"]["pushed"]["bytes"].get<uint64_t>();
  EXPECT_GE(served + pushed, 3 * total_bytes_ * 99 / 100);
  EXPECT_LE(ram["bytes_used"].get<uint64_t>(), ram["bytes_budget"].get<uint64_t>());
  // By bytes, epochs 2-3 hit about budget/dataset (1/3) and the first epoch cannot hit at all:
  // about 2/9 over the three. (By count it is higher: small captions fill the last gaps.)
  double ratio = 1.0 - static_cast<double>(s["origin"]["bytes"].get<uint64_t>()) /
                           static_cast<double>(3 * total_bytes_);
  EXPECT_GT(hits, 0u);
  EXPECT_GT(ratio, 0.15) << s.dump(2);
  EXPECT_LT(ratio, 0.34) << s.dump(2);
  EXPECT_EQ(m.StopWith(SIGTERM), 0);
}

TEST_F(CacheMountTest, CaptionsFollowingImagesHitTheCache) {
  // Too small to help: prefetch must. Sample reads only, so one origin read per sample.
  ForegroundMount m(dst(), mnt(), {"--ram-cache", "1M", "-o", "extents=off"});
  ASSERT_TRUE(m.mounted());
  int captions = 0, wrong = 0;
  // Samples in a shuffled order, as a DataLoader reads them: no run to detect, only pairs.
  std::vector<std::string> images;
  for (const std::string& rel : files_) {
    if (rel.size() > 4 && rel.substr(rel.size() - 4) == ".jpg") images.push_back(rel);
  }
  std::shuffle(images.begin(), images.end(), std::mt19937(3));
  for (const std::string& rel : images) {
    std::string caption = rel.substr(0, rel.size() - 4) + ".txt";
    wrong += ReadUncached(mnt() + "/" + rel) != ReadFile(src() + "/" + rel);
    wrong += ReadUncached(mnt() + "/" + caption) != ReadFile(src() + "/" + caption);
    ++captions;
  }
  EXPECT_EQ(wrong, 0);
  auto s = Stats();
  const auto& pm = s["readahead"]["patterns"]["sample_members"];
  EXPECT_GE(pm["used"].get<double>(), 0.95 * captions) << s.dump(2);
  EXPECT_EQ(s["origin"]["reads"].get<int>(), captions);  // one origin read per sample
  EXPECT_EQ(m.StopWith(SIGTERM), 0);
}

TEST_F(CacheMountTest, InOrderWalkIsPrefetchedAndCorrect) {
  ForegroundMount m(dst(), mnt(), {"--ram-cache", "1M"});
  ASSERT_TRUE(m.mounted());
  int wrong = 0;
  for (const std::string& rel : files_) {  // path order: images and captions, class by class
    wrong += ReadUncached(mnt() + "/" + rel) != ReadFile(src() + "/" + rel);
  }
  EXPECT_EQ(wrong, 0);
  auto s = Stats();
  const auto& ra = s["readahead"];
  uint64_t used = ra["patterns"]["sequential"]["used"].get<uint64_t>() +
                  ra["patterns"]["sample_members"]["used"].get<uint64_t>();
  EXPECT_GE(ra["runs_detected"].get<uint64_t>(), 1u) << s.dump(2);
  // Most files came from readahead, not from a demand read of the origin.
  EXPECT_GT(used, files_.size() / 2) << s.dump(2);
  EXPECT_LT(s["origin"]["reads"].get<uint64_t>(), files_.size() / 4) << s.dump(2);
  EXPECT_EQ(m.StopWith(SIGTERM), 0);
}

TEST_F(CacheMountTest, HintedSamplerPrefetchesShuffledDataLoaderEpochs) {
  // A RAM tier too small to help: what is not prefetched comes from the origin.
  ForegroundMount m(dst(), mnt(), {"--ram-cache", "1M"});
  ASSERT_TRUE(m.mounted());
  struct stat st;
  ASSERT_EQ(::lstat((mnt() + "/.mmfs/hint").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  auto run = RunCommand({"/usr/bin/python3", SourceDir() + "/tests/integration/hint_check.py",
                         src(), mnt(), "2"},
                        600);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("hint_check: OK 400 images x 2 epochs"), std::string::npos)
      << run.output;
  auto s = Stats();
  const auto& hint = s["readahead"]["hint"];
  EXPECT_EQ(hint["orders"], 2) << s.dump(2);
  EXPECT_EQ(hint["positions"], 400);
  EXPECT_EQ(hint["unknown_lines"], 0);
  // The second epoch found every file in the kernel's page cache: nothing reached the daemon to
  // move the cursor of the second order. Count what did reach it.
  const auto& p = s["readahead"]["patterns"]["hint"];
  uint64_t used = p["used"].get<uint64_t>() + p["late"].get<uint64_t>();
  uint64_t misses = Tier(s, "ram")["misses"].get<uint64_t>();
  EXPECT_GT(used, misses / 2) << "most daemon reads should find their file prefetched\n"
                              << s.dump(2);
  std::cerr << "hint prefetch: " << p.dump() << ", RAM misses " << misses << "\n";
  EXPECT_EQ(m.StopWith(SIGTERM), 0);
}

// What the push at LOOKUP/ioctl buys: a Python reader (buffered open(), so an isatty ioctl per
// file) of hinted, already prefetched samples gets every byte right with no READ at all; with
// -o push=off each file takes its READ.
TEST_F(CacheMountTest, HintedFilesArePushedSoPythonReadsThemWithoutAReadRequest) {
  std::vector<std::string> images;
  for (const std::string& rel : files_) {
    if (rel.size() > 4 && rel.substr(rel.size() - 4) == ".jpg") images.push_back(rel);
  }
  std::shuffle(images.begin(), images.end(), std::mt19937(5));
  images.resize(20);
  std::string hint, paths;
  for (const std::string& rel : images) {
    hint += rel + "\n";
    paths += mnt() + "/" + rel + "\n" + mnt() + "/" + rel.substr(0, rel.size() - 4) + ".txt\n";
  }
  WriteFile(tmp_ / "paths", paths);
  const std::string reader =
      "import hashlib, sys\n"
      "for p in open(sys.argv[1]).read().split():\n"
      "    with open(p, 'rb') as f:\n"
      "        print(hashlib.sha256(f.read()).hexdigest())\n";
  std::string expected;
  for (const std::string& rel : images) {
    for (const std::string& f : {rel, rel.substr(0, rel.size() - 4) + ".txt"}) {
      auto sum = RunCommand({"sha256sum", src() + "/" + f});
      expected += sum.output.substr(0, 64) + "\n";
    }
  }
  for (bool push : {true, false}) {
    SCOPED_TRACE(push ? "push=on" : "push=off");
    ForegroundMount m(dst(), mnt(), {"--ram-cache", "1M", "-o", push ? "push=on" : "push=off"});
    ASSERT_TRUE(m.mounted());
    WriteFile(mnt() + "/.mmfs/hint", hint);
    const size_t files = 2 * images.size();
    ASSERT_TRUE(WaitFor(
        [&] {
          auto p = Stats()["readahead"]["patterns"]["hint"];
          return p["issued"].get<size_t>() >= files;
        },
        30))
        << Stats().dump(2);
    // A stats snapshot counts the requests before its own READ.
    const uint64_t reads_before = Stats()["requests"]["read"]["count"].get<uint64_t>() + 1;
    auto run = RunCommand({"/usr/bin/python3", "-c", reader, tmp_ / "paths"});
    ASSERT_EQ(run.exit_code, 0) << run.output;
    EXPECT_EQ(run.output, expected);
    auto s = Stats();
    const uint64_t reads = s["requests"]["read"]["count"].get<uint64_t>() - reads_before;
    EXPECT_EQ(s["readahead"]["patterns"]["hint"]["used"], files) << s.dump(2);
    EXPECT_EQ(s["readahead"]["pushed"]["failed"], 0);
    if (push) {
      EXPECT_EQ(reads, 0u) << s.dump(2);
      EXPECT_EQ(s["readahead"]["pushed"]["files"], files);
    } else {
      EXPECT_EQ(reads, files) << s.dump(2);
      EXPECT_EQ(s["readahead"]["pushed"]["files"], 0);
    }
    EXPECT_EQ(s["origin"]["reads"], 0) << "every file came from the prefetch";
    EXPECT_EQ(m.StopWith(SIGTERM), 0);
  }
}

TEST_F(CacheMountTest, HintFileIsAbsentWithHintOff) {
  ForegroundMount m(dst(), mnt(), {"-o", "hint=off"});
  ASSERT_TRUE(m.mounted());
  struct stat st;
  errno = 0;
  EXPECT_EQ(::lstat((mnt() + "/.mmfs/hint").c_str(), &st), -1);
  EXPECT_EQ(errno, ENOENT);
  EXPECT_EQ(Stats()["readahead"]["hint"]["available"], false);
  EXPECT_EQ(m.StopWith(SIGTERM), 0);
}

TEST_F(CacheMountTest, SsdTierSurvivesRemountAndServesWithoutTheOrigin) {
  std::vector<std::string> opts = {"--ram-cache", "1M", "--cache-dir", tmp_ / "ssd"};
  {
    ForegroundMount m(dst(), mnt(), opts);
    ASSERT_TRUE(m.mounted());
    EXPECT_EQ(Epoch(1), 0);
    EXPECT_EQ(m.StopWith(SIGTERM), 0);  // flushes the SSD write queue
  }
  // Ruin the shard's data pages (its size and LMDB header stay, so it still mounts).
  RuinShardData();
  ForegroundMount m(dst(), mnt(), opts);
  ASSERT_TRUE(m.mounted());
  EXPECT_EQ(Epoch(2), 0);
  auto s = Stats();
  EXPECT_EQ(s["origin"]["reads"].get<uint64_t>(), 0u) << s.dump(2);
  EXPECT_EQ(Tier(s, "ssd")["hits"].get<uint64_t>(), files_.size());
  EXPECT_EQ(m.StopWith(SIGTERM), 0);
}

TEST_F(CacheMountTest, Kill9UnderLoadGivesReadersErrorsAndTheSsdCacheStaysUsable) {
  std::vector<std::string> opts = {"--ram-cache", "1M", "--cache-dir", tmp_ / "ssd"};
  {
    ForegroundMount m(dst(), mnt(), opts);
    ASSERT_TRUE(m.mounted());
    EXPECT_EQ(Epoch(1), 0);  // fills the SSD tier (its writes are asynchronous)
    auto entry_files = [&] {
      size_t n = 0;
      for (const auto& e : fsys::recursive_directory_iterator(tmp_ / "ssd")) n += e.is_regular_file();
      return n;
    };
    ASSERT_TRUE(WaitFor([&] { return entry_files() >= files_.size(); }, 30)) << entry_files();
    // Eight readers keep reading while the daemon is killed: each must return (with an error),
    // none may hang.
    std::atomic<int> finished{0};
    std::atomic<bool> stop{false};
    std::vector<std::thread> readers;
    for (int t = 0; t < 8; ++t) {
      readers.emplace_back([&, t] {
        for (size_t i = static_cast<size_t>(t); !stop.load(); i = (i + 7) % files_.size()) {
          if (ReadUncached(mnt() + "/" + files_[i]).rfind("<", 0) == 0) break;  // an error
        }
        ++finished;
      });
    }
    EXPECT_EQ(m.StopWith(SIGKILL), -1);
    EXPECT_TRUE(WaitFor([&] { return finished.load() == 8; }, 30)) << "a reader hangs";
    stop = true;
    for (auto& r : readers) r.join();
  }
  // The next mount cleans up the stale mount, serves everything correctly, and uses the SSD
  // entries written before the crash (a half-written one is a miss, never served).
  ForegroundMount m(dst(), mnt(), opts);
  ASSERT_TRUE(m.mounted());
  EXPECT_EQ(Epoch(2), 0);
  auto s = Stats();
  EXPECT_GE(Tier(s, "ssd")["hits"].get<uint64_t>(), files_.size() * 9 / 10) << s.dump(2);
  EXPECT_EQ(s["errors"]["checksum"], 0);
  EXPECT_EQ(m.StopWith(SIGTERM), 0);
}

TEST_F(CacheMountTest, DamagedShardGivesEioForItsFilesOnlyAndNamesThem) {
  // Zero 64 KiB in the middle of the shard (its size and header stay: it still mounts).
  std::string shard = dst() + "/shard-00000.mdb";
  std::string zeros(64 << 10, '\0');
  int fd = ::open(shard.c_str(), O_WRONLY);
  ASSERT_EQ(::pwrite(fd, zeros.data(), zeros.size(), static_cast<off_t>(fsys::file_size(shard) / 2)),
            static_cast<ssize_t>(zeros.size()));
  ::close(fd);
  ForegroundMount m(dst(), mnt(), {"--ram-cache", "1M", "--log-file", tmp_ / "daemon.log"});
  ASSERT_TRUE(m.mounted());
  int eio = 0, wrong = 0;
  for (const std::string& rel : files_) {
    std::string got = ReadUncached(mnt() + "/" + rel);
    if (got == "<read failed: " + std::to_string(EIO) + ">") {
      ++eio;
    } else if (got != ReadFile(src() + "/" + rel)) {
      ++wrong;
    }
  }
  EXPECT_EQ(wrong, 0) << "bytes that fail their checksum were served";
  EXPECT_GT(eio, 0);
  EXPECT_LT(eio, static_cast<int>(files_.size()) / 4);
  auto s = Stats();
  // Counted per failed READ; the kernel retries a failed page read once.
  EXPECT_GE(s["errors"]["checksum"].get<int>(), eio) << s.dump(2);
  EXPECT_LE(s["errors"]["checksum"].get<int>(), 2 * eio) << s.dump(2);
  std::string log = ReadFile(tmp_ / "daemon.log");
  EXPECT_NE(log.find("shard-00000.mdb at offset"), std::string::npos) << log;
  EXPECT_NE(log.find("train/"), std::string::npos) << log;
  EXPECT_EQ(::kill(m.pid(), 0), 0);
  EXPECT_EQ(m.StopWith(SIGTERM), 0);
  // A missing shard: the mount is refused, naming it.
  fsys::remove(shard);
  auto r = RunCommand({MmfsBinary(), "mount", dst(), mnt()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("shard-00000.mdb"), std::string::npos) << r.output;
  EXPECT_FALSE(IsMountPoint(mnt()));
}

// Two "hosts" (two mounts with their own small RAM tiers) share a cluster tier on three memcached
// servers: the second host's epoch comes from the cluster, not the origin; losing a server
// mid-epoch costs about its share of hits and no read.
TEST_F(CacheMountTest, ClusterTierSharesOneHostsEpochWithAnother) {
  MemcachedServer servers[3];
  std::string list;
  for (auto& s : servers) {
    ASSERT_TRUE(s.ready()) << "memcached did not start (is it installed?)";
    if (!list.empty()) list += ',';
    list += s.address();
  }
  std::vector<std::string> opts = {"--ram-cache", "1M", "--cluster-cache", list};
  {
    ForegroundMount a(dst(), mnt(), opts);
    ASSERT_TRUE(a.mounted());
    EXPECT_EQ(Epoch(1), 0);
    // The fill is asynchronous: wait until host A's queue is written.
    ASSERT_TRUE(WaitFor(
        [&] {
          auto c = Stats()["cluster"];
          return c["queued_bytes"] == 0 && c["writes"].get<uint64_t>() >= files_.size();
        },
        60))
        << Stats()["cluster"].dump(2);
    EXPECT_EQ(a.StopWith(SIGTERM), 0);
  }
  std::string mnt_b = tmp_ / "mnt-b";
  fsys::create_directories(mnt_b);
  ForegroundMount b(dst(), mnt_b, opts);
  ASSERT_TRUE(b.mounted());
  auto stats_b = [&] { return nlohmann::json::parse(ReadFile(mnt_b + "/.mmfs/stats")); };
  std::vector<std::string> order = files_;
  std::shuffle(order.begin(), order.end(), std::mt19937(4));
  int wrong = 0;
  for (const std::string& rel : order) {
    wrong += ReadUncached(mnt_b + "/" + rel) != ReadFile(src() + "/" + rel);
  }
  EXPECT_EQ(wrong, 0);
  auto s1 = stats_b();
  EXPECT_LE(s1["origin"]["reads"].get<uint64_t>(), files_.size() / 20) << s1.dump(2);
  EXPECT_GE(s1["cluster"]["hits"].get<uint64_t>(), files_.size() * 95 / 100) << s1.dump(2);
  EXPECT_EQ(s1["cluster"]["damaged"], 0);

  // A second epoch on B; one server dies a third of the way in.
  std::shuffle(order.begin(), order.end(), std::mt19937(5));
  for (size_t i = 0; i < order.size(); ++i) {
    if (i == order.size() / 3) servers[1].Kill();
    wrong += ReadUncached(mnt_b + "/" + order[i]) != ReadFile(src() + "/" + order[i]);
  }
  EXPECT_EQ(wrong, 0) << "a read failed or returned wrong bytes after a server died";
  auto s2 = stats_b();
  uint64_t hits2 = s2["cluster"]["hits"].get<uint64_t>() - s1["cluster"]["hits"].get<uint64_t>();
  uint64_t origin2 = s2["origin"]["reads"].get<uint64_t>() - s1["origin"]["reads"].get<uint64_t>();
  std::cerr << "epoch 2 with a server killed: " << hits2 << " cluster hits, " << origin2
            << " origin reads of " << files_.size() << " files\n";
  // About (1/3 + 2/3 * 2/3) of the files still hit; the rest went to the origin.
  EXPECT_LT(hits2, files_.size() * 95 / 100) << s2["cluster"].dump(2);
  EXPECT_GT(hits2, files_.size() / 3) << s2["cluster"].dump(2);
  EXPECT_GT(origin2, 0u);
  int down = 0;
  for (const auto& srv : s2["cluster"]["servers"]) down += !srv["up"].get<bool>();
  EXPECT_EQ(down, 1) << s2["cluster"].dump(2);
  auto human = RunCommand({MmfsBinary(), "stats", mnt_b});
  EXPECT_NE(human.output.find("cluster   "), std::string::npos) << human.output;
  EXPECT_NE(human.output.find(servers[1].address() + " DOWN"), std::string::npos) << human.output;
  std::string metrics = ReadFile(mnt_b + "/.mmfs/metrics");
  EXPECT_NE(metrics.find("mmfs_cluster_server_up{"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("mmfs_cache_hits_total{dataset="), std::string::npos);
  EXPECT_EQ(b.StopWith(SIGTERM), 0);
}

TEST_F(CacheMountTest, WarmupChecksEvictsAndServesWithTheOriginGone) {
  std::vector<std::string> opts = {"--ram-cache", "1M", "--cache-dir", tmp_ / "ssd"};
  {
    ForegroundMount m(dst(), mnt(), opts);
    ASSERT_TRUE(m.mounted());
    auto warm = RunCommand({MmfsBinary(), "warmup", mnt()}, 300);
    ASSERT_EQ(warm.exit_code, 0) << warm.output;
    EXPECT_NE(warm.output.find("warmed 800 files"), std::string::npos) << warm.output;
    // --check agrees with the tier's own numbers.
    auto check = RunCommand({MmfsBinary(), "warmup", "--check", "--json", mnt()});
    ASSERT_EQ(check.exit_code, 0) << check.output;
    auto c = nlohmann::json::parse(check.output.substr(check.output.find('[')));
    EXPECT_EQ(c[0]["ssd_files"].get<uint64_t>(), files_.size()) << c.dump();
    EXPECT_EQ(c[0]["ssd_bytes"].get<uint64_t>(), total_bytes_);
    EXPECT_EQ(Tier(Stats(), "ssd")["entries"].get<uint64_t>(), files_.size());
    // Idempotent.
    auto again = RunCommand({MmfsBinary(), "warmup", "--json", mnt()});
    auto a = nlohmann::json::parse(again.output.substr(again.output.find('{')));
    EXPECT_EQ(a["loaded_files"], 0) << again.output;
    EXPECT_EQ(a["already_cached"], files_.size());
    // --evict: that folder's reads go to the origin again.
    std::string dir = mnt() + "/train/class_000";
    auto evict = RunCommand({MmfsBinary(), "warmup", "--evict", mnt(), dir});
    ASSERT_EQ(evict.exit_code, 0) << evict.output;
    auto after = nlohmann::json::parse(
        RunCommand({MmfsBinary(), "warmup", "--check", "--json", mnt(), dir}).output);
    EXPECT_EQ(after[0]["ssd_files"], 0);
    EXPECT_EQ(after[0]["ram_files"], 0);
    // Bytes read from the shards, on demand or by readahead.
    auto shard_bytes = [&] {
      auto s = Stats();
      return s["origin"]["bytes"].get<uint64_t>() + s["readahead"]["bytes"].get<uint64_t>();
    };
    uint64_t before = shard_bytes();
    uint64_t dir_bytes = 0;
    for (const std::string& rel : files_) {
      if (rel.rfind("train/class_000/", 0) != 0) continue;
      std::string data = ReadUncached(mnt() + "/" + rel);
      EXPECT_EQ(data, ReadFile(src() + "/" + rel));
      dir_bytes += data.size();
    }
    EXPECT_GT(dir_bytes, 0u);
    EXPECT_GE(shard_bytes() - before, dir_bytes) << "evicted files did not come from the origin";
    EXPECT_EQ(m.StopWith(SIGTERM), 0);
  }
  // Ruin the shard's data; everything warmed (and re-read) is served from the SSD tier.
  RuinShardData();
  ForegroundMount m(dst(), mnt(), opts);
  ASSERT_TRUE(m.mounted());
  EXPECT_EQ(Epoch(9), 0);
  EXPECT_EQ(Stats()["origin"]["reads"].get<uint64_t>(), 0u);
  EXPECT_EQ(m.StopWith(SIGTERM), 0);
}

TEST_F(CacheMountTest, WhatIfPredictsTheMeasuredHitRatioAndPlots) {
  // RAM tier at a third of the dataset; 800 files are all sampled (rate 1), so the miniature
  // cache at 100% of the budget runs the tier's policy on the same reads.
  std::string budget = std::to_string(total_bytes_ / 3 / 1024) + "K";
  ForegroundMount m(dst(), mnt(), {"--ram-cache", budget});
  ASSERT_TRUE(m.mounted());
  for (unsigned e = 0; e < 4; ++e) EXPECT_EQ(Epoch(20 + e), 0);
  auto r = RunCommand({MmfsBinary(), "stats", "--what-if", "--json", mnt()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto w = nlohmann::json::parse(r.output);
  auto s = Stats();
  const auto& ram = Tier(s, "ram");
  double measured = ram["hits"].get<double>() / ram["lookups"].get<double>();
  double predicted = -1, at_double = -1;
  for (const auto& p : w["ram"]["points"]) {
    if (p["fraction"] == 1.0) predicted = p["hit_ratio"].get<double>();
    if (p["fraction"] == 2.0) at_double = p["hit_ratio"].get<double>();
  }
  EXPECT_NEAR(predicted, measured, 0.05) << w.dump(2);
  EXPECT_GT(at_double, predicted);  // twice the memory, more hits
  EXPECT_EQ(w["ram"]["sampling_rate"], 1.0);
  EXPECT_NEAR(w["ram"]["working_set_bytes"].get<double>() / static_cast<double>(total_bytes_), 1.0,
              0.05);
  auto human = RunCommand({MmfsBinary(), "stats", "--what-if", mnt()});
  EXPECT_NE(human.output.find("<- now"), std::string::npos) << human.output;
  std::string png = tmp_ / "what-if.png";
  auto plot = RunCommand({MmfsBinary(), "stats", "--plot", png, mnt()});
  ASSERT_EQ(plot.exit_code, 0) << plot.output;
  EXPECT_EQ(ReadFile(png).substr(1, 3), "PNG");
  EXPECT_EQ(m.StopWith(SIGTERM), 0);
}

TEST_F(CacheMountTest, DamagedSsdEntriesAreNeverServed) {
  std::vector<std::string> opts = {"--ram-cache", "1M", "--cache-dir", tmp_ / "ssd"};
  {
    ForegroundMount m(dst(), mnt(), opts);
    ASSERT_TRUE(m.mounted());
    EXPECT_EQ(Epoch(1), 0);
    EXPECT_EQ(m.StopWith(SIGTERM), 0);
  }
  int damaged = 0;
  for (const auto& e : fsys::recursive_directory_iterator(tmp_ / "ssd")) {
    if (!e.is_regular_file()) continue;
    if (damaged % 2 == 0) {
      int fd = ::open(e.path().c_str(), O_WRONLY);
      ASSERT_EQ(::pwrite(fd, "\xff\xff", 2, static_cast<off_t>(e.file_size() / 2)), 2);
      ::close(fd);
    } else {
      fsys::resize_file(e.path(), e.file_size() / 3);
    }
    if (++damaged == 60) break;
  }
  ForegroundMount m(dst(), mnt(), opts);
  ASSERT_TRUE(m.mounted());
  EXPECT_EQ(Epoch(2), 0);  // correct bytes, from the origin where the SSD copy was bad
  auto s = Stats();
  EXPECT_EQ(Tier(s, "ssd")["corrupt"].get<int>(), damaged) << s.dump(2);
  EXPECT_EQ(m.StopWith(SIGTERM), 0);
}

TEST_F(CacheMountTest, FullSsdStopsAdmissionAndTheMountKeepsServing) {
  fsys::create_directories(tmp_ / "ssd");
  ASSERT_EQ(::mount("tmpfs", (tmp_ / "ssd").c_str(), "tmpfs", 0, "size=1m"), 0)
      << "mounting a 1 MiB tmpfs needs root";
  ForegroundMount m(dst(), mnt(),
                    {"--ram-cache", "1M", "--cache-dir", tmp_ / "ssd", "--ssd-cache", "100M"});
  ASSERT_TRUE(m.mounted());
  EXPECT_EQ(Epoch(1), 0);
  EXPECT_EQ(Epoch(2), 0);
  auto s = Stats();
  const auto& ssd = Tier(s, "ssd");
  EXPECT_TRUE(ssd["admission_paused"].get<bool>()) << s.dump(2);
  EXPECT_LT(ssd["entries"].get<uint64_t>(), files_.size());
  EXPECT_EQ(s["errors"]["io"].get<uint64_t>(), 0u);
  EXPECT_EQ(m.StopWith(SIGTERM), 0);
}

}  // namespace
}  // namespace mmfs::testing
