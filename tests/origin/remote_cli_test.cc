// `mmfs info URL` and `mmfs verify URL` (tools/mmfs/remote_dataset.h) against a real nginx on
// 127.0.0.1: a dataset packed here and copied into the server's root is described and checked
// over HTTP, its manifest and index copied into --cache-dir and reused while the remote
// manifest is unchanged, and a damaged shard on the server is named by verify. And what the
// command line refuses before it asks any server: credentials in a URL (never printed), other
// schemes, empty values, options that do not apply, a CA file that is not a regular file; and
// names from the server's manifest, which reach the terminal escaped.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/integration/mount_helper.h"
#include "tests/nginx_helper.h"
#include "tests/pack_helper.h"
#include "tests/test_util.h"

namespace mmfs {
namespace {

namespace fsys = std::filesystem;

class RemoteCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access(testing::kNginx, X_OK) != 0) GTEST_SKIP() << "no nginx (tools/install-deps.sh)";
    for (int i = 0; i < 12; ++i) {
      std::string stem = src.path();
      stem += "/d";
      stem += static_cast<char>('0' + i % 3);
      stem += "/img";
      stem += std::to_string(i);
      testing::WriteFile(stem + ".jpg",
                         testing::MakeJpeg(64 + i, 48, static_cast<unsigned>(i + 1)));
      testing::WriteFile(stem + ".txt", std::string("caption ") + std::to_string(i));
    }
    // Two larger files, so that the dataset has more than one shard.
    testing::WriteFile(src / "big/a.bin", std::string(700 << 10, 'a'));
    testing::WriteFile(src / "big/b.bin", std::string(700 << 10, 'b'));
    auto packed = testing::PackFolder(src.path(), work / "ds.mmfs", nullptr,
                                      pack::OnBadImage::kFail, 1 << 20);
    ASSERT_TRUE(packed.ok()) << packed.status().ToString();
    fsys::copy(work / "ds.mmfs", server.www() + "/ds.mmfs", fsys::copy_options::recursive);
    ASSERT_TRUE(server.Start()) << server.ErrorLog();
    url = server.url() + "/ds.mmfs";
  }
  testing::CommandResult Mmfs(const std::string& cmd) {
    return testing::RunCommand(
        {testing::MmfsBinary(), cmd, url, "--cache-dir", cache.path() + "/c"}, 60);
  }
  // `mmfs ARGS...`, given at most `seconds`.
  testing::CommandResult Run(std::vector<std::string> args, double seconds = 60) {
    args.insert(args.begin(), testing::MmfsBinary());
    return testing::RunCommand(args, seconds);
  }
  // The server's manifest, to edit.
  nlohmann::json Manifest() const {
    return nlohmann::json::parse(testing::ReadFile(server.www() + "/ds.mmfs/manifest.json"));
  }
  void SetManifest(const nlohmann::json& m) {
    testing::WriteFile(server.www() + "/ds.mmfs/manifest.json", m.dump(2));
  }
  testing::TempDir src, work, cache;
  testing::NginxServer server;
  std::string url;
};

TEST_F(RemoteCliTest, InfoAndVerifyByUrl) {
  auto info = Mmfs("info");
  EXPECT_EQ(info.exit_code, 0) << info.output;
  EXPECT_NE(info.output.find("mmfs dataset"), std::string::npos) << info.output;
  auto verify = Mmfs("verify");
  EXPECT_EQ(verify.exit_code, 0) << verify.output;
}

TEST_F(RemoteCliTest, TheIndexCopyIsReusedWhileTheManifestIsUnchanged) {
  ASSERT_EQ(Mmfs("info").exit_code, 0);
  // Without the index on the server, only the copy can serve.
  for (const auto& e : fsys::directory_iterator(server.www() + "/ds.mmfs")) {
    if (e.path().filename().string().find("index") != std::string::npos) fsys::remove(e.path());
  }
  auto again = Mmfs("verify");
  EXPECT_EQ(again.exit_code, 0) << again.output;
  // Without the copy either, the open fails naming what it could not fetch.
  fsys::remove_all(cache.path() + "/c/remote");
  auto gone = Mmfs("info");
  EXPECT_NE(gone.exit_code, 0);
  EXPECT_NE(gone.output.find("HTTP 404"), std::string::npos) << gone.output;
}

TEST_F(RemoteCliTest, VerifyNamesADamagedShardOnTheServer) {
  const std::string shard = server.www() + "/ds.mmfs/shard-00000.mdb";
  ASSERT_TRUE(fsys::exists(shard));
  std::string bytes = testing::ReadFile(shard);
  bytes[bytes.size() - 100] ^= 0x5a;
  testing::WriteFile(shard, bytes);
  auto verify = Mmfs("verify");
  EXPECT_EQ(verify.exit_code, 1) << verify.output;
  EXPECT_NE(verify.output.find("shard-00000.mdb"), std::string::npos) << verify.output;
}

TEST_F(RemoteCliTest, AMissingShardRefusesTheOpen) {
  fsys::remove(server.www() + "/ds.mmfs/shard-00000.mdb");
  auto info = Mmfs("info");
  EXPECT_NE(info.exit_code, 0);
  EXPECT_NE(info.output.find("shard-00000.mdb"), std::string::npos) << info.output;
}

TEST_F(RemoteCliTest, MountsByUrlAndServesTheSameFiles) {
  ASSERT_TRUE(fsys::exists(server.www() + "/ds.mmfs/shard-00001.mdb"));
  testing::TempDir mnt;
  testing::ForegroundMount mount(url, mnt.path(), {"--cache-dir", cache.path() + "/c"});
  ASSERT_TRUE(mount.mounted());
  auto diff = testing::Shell("diff -r '" + src.path() + "' '" + mnt.path() + "'");
  EXPECT_EQ(diff.exit_code, 0) << diff.output;
  EXPECT_EQ(mount.StopWith(SIGTERM), 0);
}

TEST_F(RemoteCliTest, AShardReplacedUnderTheMountIsEioWhileOthersServe) {
  testing::TempDir mnt;
  testing::ForegroundMount mount(url, mnt.path(), {"--cache-dir", cache.path() + "/c"});
  ASSERT_TRUE(mount.mounted());
  // Same size, another byte and another mtime: nginx's ETag changes.
  const std::string shard = server.www() + "/ds.mmfs/shard-00000.mdb";
  std::string bytes = testing::ReadFile(shard);
  bytes[bytes.size() / 2] ^= 1;
  testing::WriteFile(shard + ".new", bytes);
  struct timespec times[2] = {{1000000000, 0}, {1000000000, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, (shard + ".new").c_str(), times, 0), 0);
  fsys::rename(shard + ".new", shard);
  auto read = testing::Shell("cd '" + mnt.path() + "' && for f in $(find . -type f); do " +
                             "cat \"$f\" > /dev/null 2>&1 && echo OK || echo EIO; done");
  EXPECT_NE(read.output.find("EIO"), std::string::npos) << read.output;
  EXPECT_NE(read.output.find("OK"), std::string::npos) << read.output;
  EXPECT_EQ(mount.StopWith(SIGTERM), 0);
}

// Whether `text` holds a byte a terminal acts on: ESC, BEL, CR, or any other control character
// but the newlines that end lines.
bool HasRawControl(const std::string& text) {
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\n') || u == 0x7f) return true;
  }
  return false;
}

// A password in a URL was printed by the refusal meant to protect it (`mmfs mount` put the URL
// before its message; s3:// and endpoint refusals showed it whole). In no form, for no command.
TEST_F(RemoteCliTest, ACredentialInAUrlIsNeverPrinted) {
  const std::string host = url.substr(std::string("http://").size());  // 127.0.0.1:PORT/ds.mmfs
  testing::TempDir mnt;
  const std::vector<std::vector<std::string>> cases = {
      {"http://alice:SECRET@" + host},
      {"http://alice%40corp.example:SECRET@" + host},
      {"http://:SECRET@" + host},
      {"http://alice:SECRET@" + host + "?x=1"},
      {"https://alice:SECRET@" + host + "#frag"},
      {"s3://alice:SECRET@bkt/ds.mmfs"},
      {"s3://bkt/ds.mmfs", "--endpoint", "http://alice:SECRET@127.0.0.1:1/?x=1"},
      {"s3://bkt/ds.mmfs", "--endpoint", "ftp://alice:SECRET@127.0.0.1:1"},
  };
  for (const std::vector<std::string>& given : cases) {
    for (const char* command : {"info", "verify", "mount"}) {
      std::vector<std::string> args = {command, given[0]};
      if (std::string(command) == "mount") args.push_back(mnt.path());
      args.insert(args.end(), given.begin() + 1, given.end());
      args.insert(args.end(), {"--cache-dir", cache.path() + "/c"});
      auto r = Run(args, 30);
      EXPECT_NE(r.exit_code, 0) << command << " " << given[0] << ": " << r.output;
      EXPECT_EQ(r.output.find("SECRET"), std::string::npos)
          << command << " " << given[0] << ": " << r.output;
      EXPECT_NE(r.output.find("***@"), std::string::npos) << r.output;
      EXPECT_FALSE(testing::IsMountPoint(mnt.path()));
    }
  }
}

// ftp://, file://, an upper-case scheme and a missing slash were all taken as local paths ("No
// such file or directory"). A scheme is case-insensitive (RFC 3986): HTTP:// reads the dataset;
// the others are named, with what mmfs reads.
TEST_F(RemoteCliTest, OtherSchemesAreNamedAndUpperCaseSchemesAreRead) {
  const std::string upper = "HTTP" + url.substr(4);
  auto info = Run({"info", upper, "--cache-dir", cache.path() + "/c"});
  EXPECT_EQ(info.exit_code, 0) << info.output;
  EXPECT_NE(info.output.find("mmfs dataset"), std::string::npos) << info.output;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"ftp://127.0.0.1/ds.mmfs", "mmfs does not read ftp:// URLs (it reads http://, https:// and "
                                  "s3:// URLs, and local paths)"},
      {"file://" + work.path() + "/ds.mmfs",
       "mmfs does not read file:// URLs (it reads http://, https:// and s3:// URLs, and local "
       "paths); for a local dataset give its path: " + work.path() + "/ds.mmfs"},
      {"http:/127.0.0.1/ds.mmfs", "not a URL: 'http:' needs '//' after it (http://HOST/PATH)"},
      {"S3:bkt/ds.mmfs", "not a URL: 's3:' needs '//' after it (s3://BUCKET/PATH)"},
  };
  testing::TempDir mnt;
  for (const auto& [given, message] : cases) {
    for (const char* command : {"info", "mount"}) {
      std::vector<std::string> args = {command, given};
      if (std::string(command) == "mount") args.push_back(mnt.path());
      auto r = Run(args, 30);
      EXPECT_NE(r.exit_code, 0) << r.output;
      EXPECT_NE(r.output.find(given + ": " + message), std::string::npos) << r.output;
      EXPECT_EQ(r.output.find("No such file or directory"), std::string::npos) << r.output;
      EXPECT_FALSE(testing::IsMountPoint(mnt.path()));
    }
  }
}

// `--endpoint "$EP"` with EP unset sent requests signed with the user's keys to AWS's endpoint.
// A value given empty is refused before anything is asked of any server. (AWS_ENDPOINT_URL
// points at a closed local port, so that even a build that took "" for "not given" asks nothing
// outside this machine.)
TEST_F(RemoteCliTest, AnEmptyEndpointCaFileOrCacheDirIsAnErrorNotTheDefault) {
  ::setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1", 1);
  ::setenv("MMFS_TEST_REMOTE_RETRY_MS", "100", 1);
  for (const char* option : {"--endpoint", "--ca-file", "--cache-dir"}) {
    auto r = Run({"info", "s3://bkt/ds.mmfs", option, ""}, 30);
    EXPECT_NE(r.exit_code, 0) << option << ": " << r.output;
    EXPECT_NE(r.output.find(std::string(option) + ": given empty"), std::string::npos)
        << r.output;
  }
  ::unsetenv("AWS_ENDPOINT_URL");
  ::unsetenv("MMFS_TEST_REMOTE_RETRY_MS");
}

// --endpoint, --ca-file and --cache-dir were ignored without a word for a local dataset; a CA
// file for a plain http:// server was ignored too.
TEST_F(RemoteCliTest, OptionsThatDoNotApplyAreRefused) {
  const std::string local = work.path() + "/ds.mmfs";
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"--endpoint", "http://127.0.0.1:1"},
        std::vector<std::string>{"--ca-file", "/etc/ssl/certs/ca-certificates.crt"},
        std::vector<std::string>{"--cache-dir", cache.path() + "/c"}}) {
    std::vector<std::string> args = {"info", local};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = Run(args);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find(extra[0] + " does not apply: " + local + " is a local dataset"),
              std::string::npos)
        << r.output;
  }
  const std::string ca = work.path() + "/ca.pem";
  testing::WriteFile(ca, "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n");
  auto plain = Run({"info", url, "--ca-file", ca, "--cache-dir", cache.path() + "/c"});
  EXPECT_EQ(plain.exit_code, 1) << plain.output;
  EXPECT_NE(plain.output.find("--ca-file " + ca + " does not apply: " + url +
                              " is plain http://, which has no certificate to check"),
            std::string::npos)
      << plain.output;
}

// `--ca-file` naming a FIFO (or `<(cat ca.pem)`, a pipe) hung the mount: libcurl opened it and
// waited for a writer. Only a regular file is read, and it is looked at first; the command
// returns at once, naming what the path is.
TEST_F(RemoteCliTest, ACaFileThatIsAFifoIsRefusedAtOnce) {
  const std::string fifo = work.path() + "/ca.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // https:// to the plain server: the connection is made (a build that opened the file only for
  // the handshake would block there), and nothing is served.
  const std::string https = "https" + url.substr(4);
  testing::TempDir mnt;
  for (const char* command : {"info", "mount"}) {
    std::vector<std::string> args = {command, https};
    if (std::string(command) == "mount") args.push_back(mnt.path());
    args.insert(args.end(), {"--ca-file", fifo, "--cache-dir", cache.path() + "/c"});
    const auto start = std::chrono::steady_clock::now();
    auto r = Run(args, 20);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10)) << r.output;
    EXPECT_NE(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("--ca-file " + fifo + ": a FIFO or pipe"), std::string::npos)
        << r.output;
    EXPECT_FALSE(testing::IsMountPoint(mnt.path()));
  }
}

// Names in a server's manifest (here a shard's file name with ESC, BEL and CR in it, which the
// server serves) reached the terminal raw: `mmfs info` printed them, and errors naming them
// printed them too. Every message and line shows them escaped, as `mmfs verify` always did.
TEST_F(RemoteCliTest, ControlCharactersInNamesFromTheServerAreEscaped) {
  const std::string hostile = "\x1b[31mshard\x07\r-00000.mdb";
  const std::string escaped = "\\x1b[31mshard\\x07\\r-00000.mdb";
  nlohmann::json m = Manifest();
  ASSERT_EQ(m["shards"][0]["file"], "shard-00000.mdb");
  m["shards"][0]["file"] = hostile;
  m["tool"] = "mmfs \x1b]0;title\x07";
  SetManifest(m);
  fsys::rename(server.www() + "/ds.mmfs/shard-00000.mdb", server.www() + "/ds.mmfs/" + hostile);
  auto info = Mmfs("info");
  EXPECT_EQ(info.exit_code, 0) << info.output;
  EXPECT_NE(info.output.find(escaped), std::string::npos) << info.output;
  EXPECT_NE(info.output.find("mmfs \\x1b]0;title\\x07"), std::string::npos) << info.output;
  EXPECT_FALSE(HasRawControl(info.output)) << info.output;

  // A missing shard of that name: the refusal names it, escaped.
  fsys::remove(server.www() + "/ds.mmfs/" + hostile);
  m["shards"][0]["file"] = hostile;
  m["shards"][1]["file"] = "a/\x1b[2J\n" + m["shards"][1]["file"].get<std::string>();
  SetManifest(m);
  testing::TempDir mnt;
  auto refused = Mmfs("info");
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.output.find("a/\\x1b[2J\\n"), std::string::npos) << refused.output;
  EXPECT_FALSE(HasRawControl(refused.output)) << refused.output;
  auto mount = Run({"mount", url, mnt.path(), "--cache-dir", cache.path() + "/c"});
  EXPECT_NE(mount.exit_code, 0);
  EXPECT_NE(mount.output.find("a/\\x1b[2J\\n"), std::string::npos) << mount.output;
  EXPECT_FALSE(HasRawControl(mount.output)) << mount.output;
  EXPECT_FALSE(testing::IsMountPoint(mnt.path()));
}

}  // namespace
}  // namespace mmfs
