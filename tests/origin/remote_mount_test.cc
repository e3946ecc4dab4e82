// `mmfs mount URL MNT` end to end, against real servers on 127.0.0.1 that the test starts:
//   - s3:// on s3rver (tests/s3rver_helper.h), in the foreground and as a daemon (which forks
//     after the origin was made: its curl handles must still serve in the child); the server
//     killed mid-epoch and started again on the same port; an object replaced during a mount;
//   - https:// on nginx with a CA the test makes (openssl): with --ca-file it mounts, without
//     it the mount is refused naming the certificate; a remount is served from the cache
//     directory (nginx's access log shows the index was not fetched again);
//   - http:// through tests/origin/fault_proxy.py in front of nginx: 500s, 429s, a truncated and
//     a slow body are retried to the exact bytes; a persistent 500 on one shard is EIO for its
//     files after the retry budget while the other shard's files serve, and nothing is sticky;
//     a shard named with control characters is logged escaped.
// The short retry budgets come from MMFS_TEST_REMOTE_RETRY_MS (tools/mmfs/remote_dataset.cc).
// Every read is either the source's exact bytes or an error: never other bytes.
#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/fault_proxy_helper.h"
#include "tests/integration/mount_helper.h"
#include "tests/nginx_helper.h"
#include "tests/origin/remote_mount_fixture.h"
#include "tests/pack_helper.h"
#include "tests/s3rver_helper.h"
#include "tests/test_util.h"

namespace mmfs {
namespace {

namespace fsys = std::filesystem;

// `mmfs mount DATASET MNT EXTRA...` without -f: returns once the daemon serves. The destructor
// unmounts it (mmfs umount, else a forced cleanup) and waits for the daemon to go.
class DaemonMount {
 public:
  DaemonMount(const std::string& dataset, const std::string& mnt,
              const std::vector<std::string>& extra)
      : mnt_(mnt) {
    std::vector<std::string> argv = {testing::MmfsBinary(), "mount", dataset, mnt};
    argv.insert(argv.end(), extra.begin(), extra.end());
    result_ = testing::RunCommand(argv, 90);
  }
  ~DaemonMount() {
    if (!Unmount()) testing::ForceCleanup(mnt_);
  }
  DaemonMount(const DaemonMount&) = delete;
  DaemonMount& operator=(const DaemonMount&) = delete;

  bool mounted() const { return result_.exit_code == 0 && testing::IsMountPoint(mnt_); }
  const std::string& output() const { return result_.output; }
  // mmfs umount, then the daemon gone; true if nothing is left (or nothing was mounted).
  bool Unmount() {
    if (testing::IsMountPoint(mnt_)) {
      auto u = testing::RunCommand({testing::MmfsBinary(), "umount", mnt_}, 30);
      if (u.exit_code != 0) return false;
    }
    return testing::WaitFor([&] { return testing::FindDaemons(mnt_).empty(); }, 20);
  }

 private:
  const std::string mnt_;
  testing::CommandResult result_;
};

// A CA and a certificate it signed for 127.0.0.1, made with the openssl tool in `dir`:
// ca.crt, server.crt, server.key. The output of the command that failed, "" on success.
std::string MakeTestCertificates(const std::string& dir) {
  const std::string key = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -noenc";
  std::string script = "set -e; cd '" + dir + "'\n";
  script += "openssl req -x509" + key + " -keyout ca.key -out ca.crt -days 2";
  script += " -subj /CN=mmfs-test-ca -addext basicConstraints=critical,CA:TRUE";
  script += " -addext keyUsage=critical,keyCertSign,cRLSign\n";
  script += "openssl req" + key + " -keyout server.key -out server.csr -subj /CN=127.0.0.1\n";
  script += "printf 'subjectAltName=IP:127.0.0.1\\nbasicConstraints=CA:FALSE\\n";
  script += "extendedKeyUsage=serverAuth\\n' > server.ext\n";
  script += "openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial";
  script += " -out server.crt -days 2 -extfile server.ext\n";
  auto r = testing::Shell("(" + script + ") 2>&1", 60);
  return r.exit_code == 0 ? "" : "openssl (Debian's openssl package): " + r.output;
}


// --- s3:// on s3rver -----------------------------------------------------------------------

class S3MountTest : public RemoteMountTest {
 protected:
  void SetUp() override {
    RemoteMountTest::SetUp();
    if (HasFatalFailure()) return;
    ASSERT_TRUE(s3.installed()) << s3.NotInstalled();
    ASSERT_TRUE(s3.Start()) << s3.Log();
    std::string error;
    ASSERT_TRUE(s3.PutTree("bkt", "data/ds.mmfs", dataset(), &error)) << error;
  }
  std::vector<std::string> S3Options(std::vector<std::string> more = {}) const {
    more.insert(more.begin(), {"--endpoint", s3.url()});
    return Options(more);
  }
  const std::string url = "s3://bkt/data/ds.mmfs";
  testing::S3rverServer s3{"bkt"};
};

TEST_F(S3MountTest, MountsInTheForegroundAndServesTheSameFiles) {
  testing::ForegroundMount mount(url, mnt(), S3Options());
  ASSERT_TRUE(mount.mounted());
  EXPECT_EQ(Diff(), "");
  EXPECT_EQ(mount.StopWith(SIGTERM), 0);
}

// The daemon forks after the origin was made (and its curl handles used: the shards' checks);
// every read after that is the child's.
TEST_F(S3MountTest, MountsAsADaemonAndServesTheSameFiles) {
  DaemonMount mount(url, mnt(), S3Options());
  ASSERT_TRUE(mount.mounted()) << mount.output();
  EXPECT_EQ(testing::FindDaemons(mnt()).size(), 1u);
  EXPECT_EQ(Diff(), "");
  EXPECT_TRUE(mount.Unmount());
}

TEST_F(S3MountTest, AServerKilledMidEpochIsEioUntilItComesBackWithoutARemount) {
  ::setenv("MMFS_TEST_REMOTE_RETRY_MS", "300", 1);
  testing::ForegroundMount mount(url, mnt(), S3Options());
  ASSERT_TRUE(mount.mounted());
  const size_t half = files.size() / 2;
  const std::vector<std::string> first(files.begin(), files.begin() + half);
  const std::vector<std::string> rest(files.begin() + half, files.end());
  for (const auto& [rel, error] : ReadAll(first)) EXPECT_EQ(error, 0) << rel;

  s3.Stop();
  // Nothing of the rest was read yet, so nothing of it is cached: every read needs the server.
  for (const auto& [rel, error] : ReadAll(rest)) EXPECT_EQ(error, EIO) << rel;
  struct statfs st;
  EXPECT_EQ(::statfs(mnt().c_str(), &st), 0) << "the mount stopped serving";
  EXPECT_EQ(::kill(mount.pid(), 0), 0) << "the daemon exited";
  for (const auto& [rel, error] : ReadAll(first)) EXPECT_EQ(error, 0) << rel << " (cached)";

  ASSERT_TRUE(s3.Start()) << s3.Log();
  for (const auto& [rel, error] : ReadAll(rest)) EXPECT_EQ(error, 0) << rel;
  EXPECT_EQ(mount.StopWith(SIGTERM), 0);
}

TEST_F(S3MountTest, AnObjectReplacedDuringTheMountIsEioNamingTheShard) {
  const std::string log = work / "mount.log";
  testing::ForegroundMount mount(url, mnt(), S3Options({"--log-file", log}));
  ASSERT_TRUE(mount.mounted());
  // Same size, one byte changed: s3rver's ETag (the MD5) changes.
  std::string bytes = testing::ReadFile(dataset() + "/shard-00000.mdb");
  bytes[bytes.size() / 2] ^= 1;
  testing::WriteFile(work / "replacement.mdb", bytes);
  ASSERT_EQ(s3.Put("bkt", "data/ds.mmfs/shard-00000.mdb", work / "replacement.mdb"), 200);

  int eio = 0, ok = 0;
  for (const auto& [rel, error] : ReadAll(files)) (error == 0 ? ok : eio) += 1;
  EXPECT_GT(eio, 0) << "no file of the replaced shard failed";
  EXPECT_GT(ok, 0) << "the other shard's files did not serve";
  EXPECT_TRUE(testing::WaitFor(
      [&] {
        return testing::ReadFile(log).find("shard-00000.mdb: replaced under a running mount") !=
               std::string::npos;
      },
      10))
      << testing::ReadFile(log);
  EXPECT_EQ(mount.StopWith(SIGTERM), 0);
}

// --- https:// on nginx with a test CA --------------------------------------------------------

class HttpsMountTest : public RemoteMountTest {
 protected:
  void SetUp() override {
    RemoteMountTest::SetUp();
    if (HasFatalFailure()) return;
    const std::string failed = MakeTestCertificates(certs.path());
    ASSERT_EQ(failed, "");
    server = std::make_unique<testing::NginxServer>(
        testing::NginxOptions{certs / "server.crt", certs / "server.key", /*access_log=*/true});
    fsys::copy(dataset(), server->www() + "/ds.mmfs", fsys::copy_options::recursive);
    ASSERT_TRUE(server->Start()) << server->ErrorLog();
    url = server->url() + "/ds.mmfs";
  }
  // Requests in nginx's access log whose request line starts with `what` ("GET /ds.mmfs/x").
  int Logged(const std::string& what) const {
    const std::string log = server->AccessLog();
    std::string quoted(1, '"');
    quoted += what;
    int n = 0;
    for (size_t at = log.find(quoted); at != std::string::npos; at = log.find(quoted, at + 1)) {
      ++n;
    }
    return n;
  }
  testing::TempDir certs;
  std::unique_ptr<testing::NginxServer> server;
  std::string url;
};

TEST_F(HttpsMountTest, MountsWithTheCaFileAndIsRefusedWithoutIt) {
  auto refused = testing::RunCommand(
      {testing::MmfsBinary(), "mount", url, mnt(), "--cache-dir", cache.path() + "/c"}, 60);
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.output.find("certificate"), std::string::npos) << refused.output;
  EXPECT_FALSE(testing::IsMountPoint(mnt()));

  DaemonMount mount(url, mnt(), Options({"--ca-file", certs / "ca.crt"}));
  ASSERT_TRUE(mount.mounted()) << mount.output();
  EXPECT_EQ(Diff(), "");
  EXPECT_TRUE(mount.Unmount());
}

// --view N by URL: the view's manifest and index are copied with the dataset's, its shards read
// from URL/views/N/, and the mount serves what a local mount of the same view serves.
TEST_F(HttpsMountTest, AViewIsServedByUrl) {
  auto added = testing::RunCommand({testing::MmfsBinary(), "view", "add", dataset(), "32"}, 120);
  ASSERT_EQ(added.exit_code, 0) << added.output;
  fsys::copy(dataset() + "/views", server->www() + "/ds.mmfs/views",
             fsys::copy_options::recursive);
  const std::string image = "d0/img0.jpg";
  std::string local_view;
  {
    DaemonMount local(dataset(), mnt(), {"--view", "32"});
    ASSERT_TRUE(local.mounted()) << local.output();
    local_view = testing::ReadFile(mnt() + "/" + image);
    ASSERT_TRUE(local.Unmount());
  }
  ASSERT_NE(local_view, Source(image));  // the view's image is another one

  DaemonMount mount(url, mnt(), Options({"--ca-file", certs / "ca.crt", "--view", "32"}));
  ASSERT_TRUE(mount.mounted()) << mount.output();
  EXPECT_TRUE(testing::ReadFile(mnt() + "/" + image) == local_view);
  EXPECT_EQ(testing::ReadFile(mnt() + "/d0/img0.txt"), Source("d0/img0.txt"));
  EXPECT_EQ(Logged("GET /ds.mmfs/views/32/view.mmfs"), 1) << server->AccessLog();
  EXPECT_GE(Logged("GET /ds.mmfs/views/32/shard-"), 1) << server->AccessLog();
  EXPECT_TRUE(mount.Unmount());

  // A view the server does not have is refused before the mount, naming it.
  auto missing = testing::RunCommand({testing::MmfsBinary(), "mount", url, mnt(), "--view", "64",
                                      "--ca-file", certs / "ca.crt", "--cache-dir",
                                      cache.path() + "/c"},
                                     60);
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.output.find("no such view"), std::string::npos) << missing.output;
  EXPECT_FALSE(testing::IsMountPoint(mnt()));
}

TEST_F(HttpsMountTest, ARemountIsServedFromTheCacheDirectory) {
  const std::vector<std::string> options = Options({"--ca-file", certs / "ca.crt"});
  {
    testing::ForegroundMount mount(url, mnt(), options);
    ASSERT_TRUE(mount.mounted());
    EXPECT_EQ(Diff(), "");
    EXPECT_EQ(mount.StopWith(SIGTERM), 0);
  }
  EXPECT_EQ(Logged("GET /ds.mmfs/index.mmfs"), 1) << server->AccessLog();
  EXPECT_EQ(Logged("GET /ds.mmfs/manifest.json"), 1);
  const int shard_gets = Logged("GET /ds.mmfs/shard-");

  testing::ForegroundMount again(url, mnt(), options);
  ASSERT_TRUE(again.mounted());
  // The manifest is asked for again (has the dataset changed?); the index copy still matches
  // it, so it is not fetched.
  EXPECT_EQ(Logged("GET /ds.mmfs/manifest.json"), 2);
  EXPECT_EQ(Logged("GET /ds.mmfs/index.mmfs"), 1) << server->AccessLog();
  // Each shard is checked again (one small GET of its magic) and nothing more: the files come
  // from the SSD tier in the same cache directory.
  EXPECT_EQ(Diff(), "");
  EXPECT_EQ(Logged("GET /ds.mmfs/shard-"), shard_gets + 2) << server->AccessLog();
  EXPECT_EQ(again.StopWith(SIGTERM), 0);
}

// --- http:// through the fault proxy, in front of nginx ----------------------------------------

class FaultMountTest : public RemoteMountTest {
 protected:
  void SetUp() override {
    RemoteMountTest::SetUp();
    if (HasFatalFailure()) return;
    fsys::copy(dataset(), server.www() + "/ds.mmfs", fsys::copy_options::recursive);
    ASSERT_TRUE(server.Start()) << server.ErrorLog();
    ASSERT_TRUE(proxy.Start()) << proxy.Log();
    url = proxy.url() + "/ds.mmfs";
  }
  int Faults() const {
    nlohmann::json stats = proxy.Stats();
    return stats.is_null() ? -1 : stats["faults"].get<int>();
  }
  // A mount through the proxy, its faults set only once it serves (the manifest, the index and
  // the shards' checks go through untouched).
  std::unique_ptr<testing::ForegroundMount> Mount() {
    return std::make_unique<testing::ForegroundMount>(url, mnt(), Options());
  }
  testing::NginxServer server;
  testing::FaultProxy proxy{server.url()};
  std::string url;
};

TEST_F(FaultMountTest, ServerErrorsAndThrottlingAreRetriedToTheExactBytes) {
  auto mount = Mount();
  ASSERT_TRUE(mount->mounted());
  ASSERT_TRUE(proxy.Fault("500", 3, ".mdb"));
  Read a = ReadThrough(mnt() + "/big/a.bin");
  EXPECT_EQ(a.error, 0);
  EXPECT_TRUE(a.bytes == Source("big/a.bin"));
  EXPECT_EQ(Faults(), 3);
  ASSERT_TRUE(proxy.Fault("429", 3, ".mdb"));
  Read b = ReadThrough(mnt() + "/big/b.bin");
  EXPECT_EQ(b.error, 0);
  EXPECT_TRUE(b.bytes == Source("big/b.bin"));
  EXPECT_EQ(Faults(), 6);
  EXPECT_EQ(mount->StopWith(SIGTERM), 0);
}

TEST_F(FaultMountTest, TruncatedAndSlowBodiesGiveTheExactBytes) {
  auto mount = Mount();
  ASSERT_TRUE(mount->mounted());
  // Content-Length promises the whole range, half comes, the connection closes: twice.
  ASSERT_TRUE(proxy.Fault("truncate", 2, ".mdb"));
  Read a = ReadThrough(mnt() + "/big/a.bin");
  EXPECT_EQ(a.error, 0);
  EXPECT_TRUE(a.bytes == Source("big/a.bin"));
  EXPECT_EQ(Faults(), 2);
  // The body in 16 pieces over 2 s: slow, but well above the transport's stall limit.
  ASSERT_TRUE(proxy.Fault("slow", 1, ".mdb", 2));
  Read b = ReadThrough(mnt() + "/big/b.bin");
  EXPECT_EQ(b.error, 0);
  EXPECT_TRUE(b.bytes == Source("big/b.bin"));
  EXPECT_EQ(Faults(), 3);
  EXPECT_EQ(mount->StopWith(SIGTERM), 0);
}

TEST_F(FaultMountTest, APersistentErrorIsEioForItsShardWhileTheOtherServes) {
  ::setenv("MMFS_TEST_REMOTE_RETRY_MS", "300", 1);
  auto mount = Mount();
  ASSERT_TRUE(mount->mounted());
  ASSERT_TRUE(proxy.Fault("500", -1, "shard-00000.mdb"));
  std::vector<std::string> failed;
  int ok = 0;
  for (const auto& [rel, error] : ReadAll(files)) {
    if (error != 0) {
      failed.push_back(rel);
    } else {
      ++ok;
    }
  }
  EXPECT_FALSE(failed.empty()) << "no file of shard-00000 failed";
  EXPECT_GT(ok, 0) << "shard-00001's files did not serve";
  // Each failed read was tried more than once before it gave up.
  EXPECT_GT(Faults(), static_cast<int>(failed.size()));
  struct statfs st;
  EXPECT_EQ(::statfs(mnt().c_str(), &st), 0) << "the mount stopped serving";

  // Nothing is sticky: once the server answers again, the same files read whole (after the
  // failure hold, at most the 300 ms budget here).
  ASSERT_TRUE(proxy.Clear());
  for (const std::string& rel : failed) {
    Read r;
    EXPECT_TRUE(testing::WaitFor([&] { return (r = ReadThrough(mnt() + "/" + rel)).error == 0; },
                                 10))
        << rel << ": " << std::strerror(r.error);
    EXPECT_TRUE(r.bytes == Source(rel)) << rel;
  }
  EXPECT_EQ(mount->StopWith(SIGTERM), 0);
}


// Every request thread's worth of readers (and more) wait on a store that answers 500 to every
// read: files the cache holds are still served in the time a hit takes, and once the store
// answers again the waiting readers get their exact bytes.
class FaultManyMountTest : public FaultMountTest {
 protected:
  int ExtraFiles() const override { return 48; }
};

TEST_F(FaultManyMountTest, CachedFilesAreServedAtOnceWhileEveryRequestThreadsWorthWaitsOnTheStore) {
  ::setenv("MMFS_TEST_REMOTE_RETRY_MS", "120000", 1);  // the waiting reads outlast the checks
  auto mount = Mount();  // 16 request threads, the default
  ASSERT_TRUE(mount->mounted());
  std::vector<std::string> many;
  for (const std::string& f : files) {
    if (f.rfind("many/", 0) == 0) many.push_back(f);
  }
  ASSERT_EQ(many.size(), 48u);
  const std::vector<std::string> cached(many.begin(), many.begin() + 8);
  const std::vector<std::string> waiting(many.begin() + 8, many.end());  // 40 readers
  for (const auto& [rel, error] : ReadAll(cached)) ASSERT_EQ(error, 0) << rel;

  ASSERT_TRUE(proxy.Fault("500", -1, ".mdb"));
  std::vector<Read> results(waiting.size());
  std::vector<std::thread> readers;
  for (size_t i = 0; i < waiting.size(); ++i) {
    readers.emplace_back([&, i] { results[i] = ReadThrough(mnt() + "/" + waiting[i]); });
  }
  // The readers end (the store answers again) whatever fails below.
  struct Finally {
    std::function<void()> run;
    ~Finally() { run(); }
  } finally{[&] {
    proxy.Clear();
    for (std::thread& t : readers) {
      if (t.joinable()) t.join();
    }
  }};
  // Every reader has been refused at least once and is being retried.
  ASSERT_TRUE(testing::WaitFor([&] { return Faults() >= 2 * static_cast<int>(waiting.size()); },
                               60))
      << Faults() << " faults";

  for (int round = 0; round < 3; ++round) {
    for (const std::string& rel : cached) {
      // Out of the page cache, so that the read reaches the daemon, whose RAM tier holds it.
      const std::string path = mnt() + "/" + rel;
      int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      ASSERT_GE(fd, 0) << path;
      ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
      ::close(fd);
      const auto start = std::chrono::steady_clock::now();
      Read r = ReadThrough(path);
      const auto took = std::chrono::steady_clock::now() - start;
      EXPECT_EQ(r.error, 0) << rel;
      EXPECT_TRUE(r.bytes == Source(rel)) << rel;
      EXPECT_LT(took, std::chrono::milliseconds(100)) << rel << " waited behind the store";
    }
  }
  const nlohmann::json stats = testing::StatsJson(mnt());
  uint64_t ram_hits = 0;
  for (const auto& t : stats["cache"]["tiers"]) {
    if (t["name"] == "ram") ram_hits = t["hits"].get<uint64_t>();
  }
  EXPECT_GE(ram_hits, 3 * cached.size()) << "the timed reads were served by the daemon";
  EXPECT_GE(stats["origin"]["queued"]["reads"].get<uint64_t>(), waiting.size());
  EXPECT_LE(stats["origin"]["queued"]["running"].get<uint64_t>(), 16u);

  finally.run();
  for (size_t i = 0; i < waiting.size(); ++i) {
    EXPECT_EQ(results[i].error, 0) << waiting[i];
    EXPECT_TRUE(results[i].bytes == Source(waiting[i])) << waiting[i];
  }
  EXPECT_EQ(mount->StopWith(SIGTERM), 0);
}

// A read that fails does so within the bound, once: not a second bound for the READ the kernel
// sends again, nor for the sample read that follows a failed extent read.
TEST_F(FaultMountTest, AFailingReadFailsWithinItsBoundWithOneRequestFailedForGood) {
  ::setenv("MMFS_TEST_REMOTE_RETRY_MS", "3000", 1);
  auto mount = std::make_unique<testing::ForegroundMount>(
      url, mnt(), std::vector<std::string>{"--cache-dir", cache.path() + "/c", "-o", "extents=auto"});
  ASSERT_TRUE(mount->mounted());
  ASSERT_TRUE(proxy.Fault("500", -1, ".mdb"));
  const auto start = std::chrono::steady_clock::now();
  Read r = ReadThrough(mnt() + "/big/a.bin");
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.error, EIO);
  EXPECT_GE(took, 2.5);
  EXPECT_LT(took, 4.5) << "the bound is 3 s";
  const nlohmann::json remote = testing::StatsJson(mnt())["origin"]["remote"];
  EXPECT_EQ(remote["errors"].get<uint64_t>(), 1u) << remote.dump();
  ASSERT_TRUE(proxy.Clear());
  EXPECT_EQ(mount->StopWith(SIGTERM), 0);
}

// A shard name from the server's manifest with ESC, BEL and CR in it reached the daemon's log
// (a terminal, with -f) raw. Every log line shows it escaped.
TEST_F(FaultMountTest, AShardNamedWithControlCharactersIsLoggedEscaped) {
  const std::string hostile = "\x1b[31mshard\x07\r-00000.mdb";
  const std::string www = server.www() + "/ds.mmfs/";
  nlohmann::json m = nlohmann::json::parse(testing::ReadFile(www + "manifest.json"));
  ASSERT_EQ(m["shards"][0]["file"], "shard-00000.mdb");
  m["shards"][0]["file"] = hostile;
  testing::WriteFile(www + "manifest.json", m.dump(2));
  fsys::rename(www + "shard-00000.mdb", www + hostile);
  const std::string log = work / "mount.log";
  testing::ForegroundMount mount(url, mnt(), Options({"--log-file", log}));
  ASSERT_TRUE(mount.mounted());
  // Same size, another byte and another mtime: nginx's ETag changes.
  std::string bytes = testing::ReadFile(www + hostile);
  bytes[bytes.size() / 2] ^= 1;
  testing::WriteFile(www + "replacement", bytes);
  struct timespec times[2] = {{1000000000, 0}, {1000000000, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, (www + "replacement").c_str(), times, 0), 0);
  fsys::rename(www + "replacement", www + hostile);
  int eio = 0;
  for (const auto& [rel, error] : ReadAll(files)) eio += error != 0;
  EXPECT_GT(eio, 0) << "no file of the replaced shard failed";
  EXPECT_TRUE(testing::WaitFor(
      [&] {
        return testing::ReadFile(log).find("\\x1b[31mshard\\x07\\r-00000.mdb: replaced under a "
                                           "running mount") != std::string::npos;
      },
      10))
      << testing::ReadFile(log);
  const std::string text = testing::ReadFile(log);
  EXPECT_EQ(text.find_first_of("\x1b\x07\r"), std::string::npos) << text;
  EXPECT_EQ(mount.StopWith(SIGTERM), 0);
}

}  // namespace
}  // namespace mmfs
