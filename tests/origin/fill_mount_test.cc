// The fill of a dataset mounted by URL (fs/readahead/filler.h), end to end against nginx on
// 127.0.0.1, whose access log counts the bytes of every request:
//   - a look into the mount (ls -lR, find, stat, three files read) fetches none of the rest;
//   - the start of an epoch (64 files read) starts the fill, which brings the rest of the dataset
//     into the SSD tier, each shard byte fetched about once; the epoch then reads nothing from
//     the store, and a remount nothing but the shards' checks;
//   - a dataset larger than the SSD tier keeps a share there, and a second epoch after a
//     remount fetches only the rest;
//   - three mounts (three "hosts", each with its own memcached server) share one fill: the
//     store sends each shard byte about once for all three; with a server killed, a host that
//     joins later still reads every file, its lost share fetched from the store; a server
//     killed while the fill runs and every host reads fails no read.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/fault_proxy_helper.h"
#include "tests/integration/mount_helper.h"
#include "tests/memcached_helper.h"
#include "tests/nginx_helper.h"
#include "tests/origin/remote_mount_fixture.h"
#include "tests/test_util.h"

namespace mmfs {
namespace {

class FillMountTest : public RemoteMountTest {
 protected:
  int ExtraFiles() const override { return 120; }
  void SetUp() override {
    RemoteMountTest::SetUp();
    if (HasFatalFailure()) return;
    testing::NginxOptions o;
    o.access_log = true;
    server = std::make_unique<testing::NginxServer>(o);
    fsys::copy(dataset(), server->www() + "/ds.mmfs", fsys::copy_options::recursive);
    ASSERT_TRUE(server->Start()) << server->ErrorLog();
    url = server->url() + "/ds.mmfs";
    for (const auto& e : fsys::directory_iterator(dataset())) {
      if (e.path().extension() == ".mdb") shard_bytes += e.file_size();
    }
  }
  // Body bytes nginx sent for the shards so far (the combined log: `"GET /x" STATUS BYTES`).
  uint64_t ShardBytesSent() const {
    std::istringstream log(server->AccessLog());
    uint64_t total = 0;
    for (std::string line; std::getline(log, line);) {
      const size_t request = line.find("\"GET /ds.mmfs/shard-");
      if (request == std::string::npos) continue;
      const size_t end = line.find('"', request + 1);
      if (end == std::string::npos) continue;
      std::istringstream rest(line.substr(end + 1));
      int status = 0;
      uint64_t bytes = 0;
      rest >> status >> bytes;
      total += bytes;
    }
    return total;
  }
  nlohmann::json Fill() const { return testing::StatsJson(mnt())["fill"]; }
  bool FillDone() const {
    const nlohmann::json f = Fill();
    return f.is_object() && f["state"] == "done";
  }

  std::unique_ptr<testing::NginxServer> server;
  std::string url;
  uint64_t shard_bytes = 0;
};

TEST_F(FillMountTest, ALookFetchesNothingAndAnEpochFetchesTheDatasetOnce) {
  auto mount = std::make_unique<testing::ForegroundMount>(
      url, mnt(), std::vector<std::string>{"--cache-dir", cache.path() + "/c"});
  ASSERT_TRUE(mount->mounted());
  const uint64_t checks = ShardBytesSent();  // the shards' magic, read at mount
  EXPECT_EQ(testing::Shell("ls -lR '" + mnt() + "' > /dev/null && find '" + mnt() +
                           "' -type f | wc -l > /dev/null")
                .exit_code,
            0);
  std::vector<std::string> three;
  for (const std::string& f : files) {
    if (f.rfind("many/", 0) == 0 && three.size() < 3) three.push_back(f);
  }
  for (const auto& [rel, error] : ReadAll(three)) EXPECT_EQ(error, 0);
  EXPECT_EQ(Fill()["state"], "waiting");
  EXPECT_LT(ShardBytesSent() - checks, shard_bytes / 100 + (64 << 10))
      << "a look fetched more than it read";

  // The start of an epoch: the trigger's worth of distinct files read. The fill then brings
  // the rest (the two large files among them) while the epoch reads on.
  std::vector<std::string> start;
  for (const std::string& f : files) {
    if (f.rfind("many/", 0) == 0 && start.size() < 64) start.push_back(f);
  }
  for (const auto& [rel, error] : ReadAll(start)) EXPECT_EQ(error, 0) << rel;
  ASSERT_TRUE(testing::WaitFor([&] { return FillDone(); }, 60)) << Fill().dump();
  const nlohmann::json f = Fill();
  EXPECT_EQ(f["trigger"], "64 files read");
  EXPECT_FALSE(f["share"].get<bool>());
  EXPECT_EQ(f["failed_files"].get<uint64_t>(), 0u);
  EXPECT_GE(f["fetched"]["bytes"].get<uint64_t>(), 1400u << 10) << "the large files";
  EXPECT_EQ(f["fetched"]["files"].get<uint64_t>() + f["present"]["files"].get<uint64_t>(),
            f["target"]["files"].get<uint64_t>());
  const uint64_t filled = ShardBytesSent();
  EXPECT_EQ(Diff(), "");
  EXPECT_EQ(ShardBytesSent(), filled) << "the rest of the epoch read nothing from the store";
  // Each shard byte about once, between the readers' own misses and the fill.
  const uint64_t fetched = ShardBytesSent() - checks;
  EXPECT_LE(static_cast<double>(fetched), 1.05 * static_cast<double>(shard_bytes))
      << fetched << " bytes for shards of " << shard_bytes;
  EXPECT_EQ(mount->StopWith(SIGTERM), 0);

  // A remount reads every file from the SSD tier: no shard byte but the checks.
  const uint64_t before = ShardBytesSent();
  auto again = std::make_unique<testing::ForegroundMount>(
      url, mnt(), std::vector<std::string>{"--cache-dir", cache.path() + "/c"});
  ASSERT_TRUE(again->mounted());
  const uint64_t remount_checks = ShardBytesSent() - before;
  EXPECT_EQ(Diff(), "");
  EXPECT_EQ(ShardBytesSent() - before, remount_checks);
  EXPECT_EQ(again->StopWith(SIGTERM), 0);
}

TEST_F(FillMountTest, ADatasetLargerThanTheSsdTierKeepsAShareAndLaterEpochsFetchTheRest) {
  const std::vector<std::string> options = {"--cache-dir", cache.path() + "/c", "--ssd-cache",
                                            "1M", "-o", "fill=on"};
  auto mount = std::make_unique<testing::ForegroundMount>(url, mnt(), options);
  ASSERT_TRUE(mount->mounted());
  ASSERT_TRUE(testing::WaitFor([&] { return FillDone(); }, 60)) << Fill().dump();
  const nlohmann::json f = Fill();
  EXPECT_TRUE(f["share"].get<bool>()) << f.dump();
  EXPECT_EQ(f["trigger"], "-o fill=on");
  const uint64_t share = f["target"]["bytes"].get<uint64_t>();
  EXPECT_GT(share, 0u);
  EXPECT_LT(share, 1u << 20);
  EXPECT_EQ(Diff(), "");
  EXPECT_EQ(mount->StopWith(SIGTERM), 0);

  // The next epoch, in a new mount (nothing in RAM): the share comes from the SSD tier, and
  // only the rest from the store.
  const uint64_t before = ShardBytesSent();
  auto again = std::make_unique<testing::ForegroundMount>(url, mnt(), options);
  ASSERT_TRUE(again->mounted());
  ASSERT_TRUE(testing::WaitFor([&] { return FillDone(); }, 60)) << Fill().dump();
  EXPECT_EQ(Fill()["fetched"]["bytes"].get<uint64_t>(), 0u) << "the share was still there";
  EXPECT_EQ(Diff(), "");
  const uint64_t epoch2 = ShardBytesSent() - before;
  EXPECT_LE(static_cast<double>(epoch2),
            1.1 * static_cast<double>(shard_bytes - share) + (64 << 10))
      << epoch2 << " bytes for shards of " << shard_bytes << " with a share of " << share;
  EXPECT_EQ(again->StopWith(SIGTERM), 0);
}

// Three hosts of a job as three mounts of one URL, each with its own cache directory and its
// own memcached server among the three (--cluster-self), sharing the fill through them.
class SharedFillMountTest : public FillMountTest {
 protected:
  void SetUp() override {
    FillMountTest::SetUp();
    if (HasFatalFailure()) return;
    for (auto& m : memcached) ASSERT_TRUE(m.ready()) << "memcached did not start";
  }
  std::string Servers() const {
    return memcached[0].address() + "," + memcached[1].address() + "," + memcached[2].address();
  }
  std::string HostMnt(int host) const { return host == 0 ? mnt() : mnts[host - 1].path(); }
  std::unique_ptr<testing::ForegroundMount> MountHost(int host, const std::string& cache_dir,
                                                      const std::string& chunk = "128K") {
    return std::make_unique<testing::ForegroundMount>(
        url, HostMnt(host),
        std::vector<std::string>{"--cache-dir", cache_dir, "--cluster-cache", Servers(),
                                 "--cluster-self", memcached[host].address(), "-o",
                                 "fill=on,fill_chunk=" + chunk});
  }
  nlohmann::json FillOf(int host) const { return testing::StatsJson(HostMnt(host))["fill"]; }
  bool DoneOn(int host) const {
    const nlohmann::json f = FillOf(host);
    return f.is_object() && f["state"] == "done";
  }
  std::string DiffOf(int host) const {
    auto d = testing::Shell("diff -r '" + src.path() + "' '" + HostMnt(host) + "' 2>&1");
    return d.exit_code == 0 ? "" : "diff -r: " + d.output;
  }

  // The three hosts mounted through `proxy` (a proxy in front of nginx that slows every shard
  // request to a fifth of a second, so that the fills are still under way while the test acts),
  // 64 KiB chunks; returns once host 0's fill has fetched something.
  void MountSlowedHosts(testing::FaultProxy& proxy,
                        std::unique_ptr<testing::ForegroundMount> (&hosts)[3]) {
    ASSERT_TRUE(proxy.Start()) << proxy.Log();
    ASSERT_TRUE(proxy.Fault("slow", -1, "shard-", 0.2));
    url = proxy.url() + "/ds.mmfs";
    for (int h = 0; h < 3; ++h) {
      hosts[h] = MountHost(h, cache.path() + "/host" + std::to_string(h), "64K");
      ASSERT_TRUE(hosts[h]->mounted()) << "host " << h;
    }
    ASSERT_TRUE(
        testing::WaitFor([&] { return FillOf(0)["fetched"].value("bytes", uint64_t{0}) > 0; }, 30))
        << FillOf(0).dump();
  }

  testing::MemcachedServer memcached[3];
  testing::TempDir mnts[2];
};

TEST_F(SharedFillMountTest, ThreeHostsFetchEachByteOnceAndALostServerCostsNoFile) {
  std::unique_ptr<testing::ForegroundMount> hosts[3];
  for (int h = 0; h < 3; ++h) {
    hosts[h] = MountHost(h, cache.path() + "/host" + std::to_string(h));
    ASSERT_TRUE(hosts[h]->mounted()) << "host " << h;
  }
  for (int h = 0; h < 3; ++h) {
    ASSERT_TRUE(testing::WaitFor([&] { return DoneOn(h); }, 60)) << FillOf(h).dump();
  }
  uint64_t claimed = 0, chunks = 0;
  for (int h = 0; h < 3; ++h) {
    const nlohmann::json f = FillOf(h);
    EXPECT_TRUE(f["hosts"]["shared"].get<bool>()) << f.dump();
    EXPECT_EQ(f["failed_files"].get<uint64_t>(), 0u);
    claimed += f["hosts"]["claimed_chunks"].get<uint64_t>();
    chunks = f["hosts"]["chunks"].get<uint64_t>();
  }
  EXPECT_GT(chunks, 6u);
  EXPECT_EQ(claimed, chunks) << "each chunk from the store by one host";
  // Every host serves the whole dataset, and the store sent each shard byte about once for the
  // three (the mounts' checks of the shards' first bytes aside).
  for (int h = 0; h < 3; ++h) EXPECT_EQ(DiffOf(h), "") << "host " << h;
  const uint64_t sent = ShardBytesSent();
  EXPECT_LE(static_cast<double>(sent), 1.05 * static_cast<double>(shard_bytes) + (256 << 10))
      << sent << " bytes for shards of " << shard_bytes;

  // A server dies and host 2 leaves; a new host joins in its place with an empty cache: what
  // the dead server held comes from the store, the rest from the cluster, and no read fails.
  memcached[1].Kill();
  EXPECT_EQ(hosts[2]->StopWith(SIGTERM), 0);
  hosts[2].reset();  // before the new mount: a ForegroundMount cleans up its mount point when it goes
  hosts[2] = MountHost(2, cache.path() + "/host2-again");
  ASSERT_TRUE(hosts[2]->mounted());
  ASSERT_TRUE(testing::WaitFor([&] { return DoneOn(2); }, 90)) << FillOf(2).dump();
  EXPECT_EQ(DiffOf(2), "");
  EXPECT_EQ(DiffOf(0), "") << "a host whose cluster lost a server still serves every file";
  const nlohmann::json f = FillOf(2);
  EXPECT_GT(f["hosts"]["peer"]["files"].get<uint64_t>(), 0u) << f.dump();
  // The dead server's share came from the store, in runs that read over the files the cluster
  // still had (one request rather than one per file): at most about the dataset once more.
  const uint64_t joined = ShardBytesSent() - sent;
  EXPECT_GT(joined, 0u) << "the dead server's share came from the store";
  EXPECT_LE(static_cast<double>(joined), 1.05 * static_cast<double>(shard_bytes) + (256 << 10));
  for (auto& h : hosts) EXPECT_EQ(h->StopWith(SIGTERM), 0);
}

// A server dies in the middle of the shared fill while every host reads the whole dataset: no
// read fails on any host, every fill finishes, and what the dead server held or was to hold
// comes from the store.
TEST_F(SharedFillMountTest, AServerKilledMidFillWhileEveryHostReadsFailsNoRead) {
  testing::FaultProxy proxy(server->url());
  std::unique_ptr<testing::ForegroundMount> hosts[3];
  MountSlowedHosts(proxy, hosts);
  if (HasFatalFailure()) return;
  std::string diffs[3];
  std::vector<std::thread> readers;
  for (int h = 0; h < 3; ++h) readers.emplace_back([&, h] { diffs[h] = DiffOf(h); });
  const bool fill_under_way = !DoneOn(0) || !DoneOn(1) || !DoneOn(2);
  memcached[1].Kill();
  for (auto& r : readers) r.join();
  EXPECT_TRUE(fill_under_way) << "the fills ended before the server died: slow the store more";
  for (int h = 0; h < 3; ++h) {
    EXPECT_EQ(diffs[h], "") << "host " << h;
    ASSERT_TRUE(testing::WaitFor([&] { return DoneOn(h); }, 90)) << FillOf(h).dump();
    EXPECT_EQ(FillOf(h)["failed_files"].get<uint64_t>(), 0u) << FillOf(h).dump();
  }
  // Each host here reads every file at once, faster than the slowed fill brings them: a miss of
  // a chunk no host has claimed reads the store, and so does every miss once the dead server's
  // claims and values are gone. So at most the dataset once per host, and the dead server's
  // share once more.
  const uint64_t sent = ShardBytesSent();
  EXPECT_LE(static_cast<double>(sent), 4.1 * static_cast<double>(shard_bytes) + (256 << 10))
      << sent << " bytes for shards of " << shard_bytes;
  for (auto& h : hosts) EXPECT_EQ(h->StopWith(SIGTERM), 0);
}

// Every host reads the whole dataset at once while the shared fill, slowed, is under way: a
// reader's miss of a file another host is fetching waits for the cluster rather than read the
// store, so the job reads the dataset from the store about once, not once per host.
TEST_F(SharedFillMountTest, ReadersFasterThanTheFillStillFetchEachByteAboutOnce) {
  testing::FaultProxy proxy(server->url());
  std::unique_ptr<testing::ForegroundMount> hosts[3];
  MountSlowedHosts(proxy, hosts);
  if (HasFatalFailure()) return;
  std::string diffs[3];
  std::vector<std::thread> readers;
  for (int h = 0; h < 3; ++h) readers.emplace_back([&, h] { diffs[h] = DiffOf(h); });
  for (auto& r : readers) r.join();
  uint64_t waits = 0, served = 0;
  for (int h = 0; h < 3; ++h) {
    EXPECT_EQ(diffs[h], "") << "host " << h;
    ASSERT_TRUE(testing::WaitFor([&] { return DoneOn(h); }, 90)) << FillOf(h).dump();
    const nlohmann::json f = FillOf(h);
    waits += f["hosts"]["demand_waits"].get<uint64_t>();
    served += f["hosts"]["demand_waits_served"].get<uint64_t>();
  }
  const uint64_t sent = ShardBytesSent();
  // About 1.6x on an idle machine: the three readers start together at the first file, before
  // any fill has claimed its chunk, and a miss of an unclaimed chunk reads the store. Without
  // the wait for another host's fetch, 2.5x. How many misses wait depends on how far the
  // readers run ahead of the fills, which the machine's load changes: the bound leaves room.
  EXPECT_LE(static_cast<double>(sent), 2.2 * static_cast<double>(shard_bytes) + (256 << 10))
      << sent << " bytes for shards of " << shard_bytes << "; " << waits << " misses waited for "
      << "another host, " << served << " served from the cluster";
  for (auto& h : hosts) EXPECT_EQ(h->StopWith(SIGTERM), 0);
}

}  // namespace
}  // namespace mmfs
