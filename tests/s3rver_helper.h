// A real S3 API server on 127.0.0.1 for the S3 origin's tests: s3rver 3.7.1 (npm), installed by
// tools/install-deps.sh into /opt/mmfs-test-servers (or the binary $MMFS_S3RVER names), on a
// free port with its objects in a temp dir. It dies with the test process (PR_SET_PDEATHSIG);
// Stop and Start again bring it back on the same port over the same objects (a server that
// goes away and comes back). Objects are put with the curl tool, signed with SigV4.
//
// What s3rver 3.7 checks, read from its source (lib/middleware/authentication.js) and pinned by
// S3rverTest in tests/origin/s3_origin_test.cc:
//   - a SigV4 request must name a known access key (S3RVER, secret S3RVER: its only account),
//     else 403 InvalidAccessKeyId, and must carry x-amz-content-sha256, else 400 (as S3 does);
//   - the SigV4 signature itself is NOT verified ("Signature version 4 calculation is
//     unimplemented"): a request signed with the wrong secret is served;
//   - an unsigned request is served too: there are no private buckets.
// The tests that need a signature checked put tests/origin/fault_proxy.py in front of it with
// --sigv4-secret (fault_proxy_helper.h).
//
// Thread-safety: test-only; one thread drives it.
#pragma once

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/server_process.h"
#include "tests/test_util.h"

namespace mmfs::testing {

// s3rver's only account.
inline constexpr const char* kS3rverKey = "S3RVER";
inline constexpr const char* kS3rverSecret = "S3RVER";

// The s3rver binary: $MMFS_S3RVER, else where tools/install-deps.sh puts it.
inline std::string S3rverBinary() {
  const char* env = std::getenv("MMFS_S3RVER");
  if (env != nullptr && env[0] != '\0') return env;
  return "/opt/mmfs-test-servers/node_modules/.bin/s3rver";
}

// This process's AWS settings as s3rver's account in us-east-1, and nothing else: the profile
// files are `scratch`/no-credentials and `scratch`/no-config (absent), and every other AWS
// variable that could change where or as whom requests go (and the test retry budget) unset.
inline void UseS3rverAccount(const std::string& scratch) {
  ::setenv("AWS_ACCESS_KEY_ID", kS3rverKey, 1);
  ::setenv("AWS_SECRET_ACCESS_KEY", kS3rverSecret, 1);
  ::setenv("AWS_REGION", "us-east-1", 1);
  ::setenv("AWS_SHARED_CREDENTIALS_FILE", (scratch + "/no-credentials").c_str(), 1);
  ::setenv("AWS_CONFIG_FILE", (scratch + "/no-config").c_str(), 1);
  for (const char* v : {"AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL",
                        "AWS_DEFAULT_REGION", "MMFS_TEST_REMOTE_RETRY_MS"}) {
    ::unsetenv(v);
  }
}

// Undoes UseS3rverAccount's settings (a test's TearDown): the next test starts from none.
inline void ForgetS3rverAccount() {
  for (const char* v : {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION",
                        "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE"}) {
    ::unsetenv(v);
  }
}

// The HTTP status of `curl ARGS... URL` (its body dropped), or -1 if curl did not run.
inline int CurlStatus(std::vector<std::string> args, const std::string& url) {
  std::vector<std::string> argv = {"curl", "-s", "-o", "/dev/null", "-w", "%{http_code}"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back(url);
  CommandResult r = RunCommand(argv, 60);
  if (r.exit_code != 0) return -1;
  return std::atoi(r.output.c_str());
}

// curl's arguments that sign a request with SigV4 for us-east-1 as `key_id`:`secret`. The
// payload is not hashed (S3 accepts UNSIGNED-PAYLOAD for a PUT's body).
inline std::vector<std::string> SigV4Args(const std::string& key_id, const std::string& secret) {
  return {"--aws-sigv4", "aws:amz:us-east-1:s3",
          "-u",          key_id + ":" + secret,
          "-H",          "x-amz-content-sha256: UNSIGNED-PAYLOAD"};
}

class S3rverServer {
 public:
  // A server whose `bucket` exists from its start (empty: none).
  explicit S3rverServer(std::string bucket = "")
      : binary_(S3rverBinary()), port_(FreePort()), bucket_(std::move(bucket)) {
    std::filesystem::create_directories(dir_ / "data");
  }
  ~S3rverServer() { Stop(); }
  S3rverServer(const S3rverServer&) = delete;
  S3rverServer& operator=(const S3rverServer&) = delete;

  bool installed() const { return ::access(binary_.c_str(), X_OK) == 0; }
  // Why it cannot start when it is not installed: a failure, not a skip, so that a broken
  // install is seen.
  std::string NotInstalled() const {
    return "no s3rver at " + binary_ + ": run `bash tools/install-deps.sh` (or set MMFS_S3RVER)";
  }
  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  // Starts the server (on the same port and objects as before, after a Stop) and waits, 30 s
  // at most (node starts in about a second, slower under load), until it accepts connections.
  bool Start() {
    if (pid_ > 0) return true;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      const std::string log = dir_ / "s3rver.log";
      if (std::freopen(log.c_str(), "a", stdout) == nullptr ||
          std::freopen(log.c_str(), "a", stderr) == nullptr) {
        ::_exit(126);
      }
      const std::string data = dir_ / "data";
      const std::string port = std::to_string(port_);
      std::vector<const char*> argv = {binary_.c_str(), "-d", data.c_str(), "-a",
                                       "127.0.0.1",     "-p", port.c_str(), "--silent"};
      if (!bucket_.empty()) {
        argv.push_back("--configure-bucket");
        argv.push_back(bucket_.c_str());
      }
      argv.push_back(nullptr);
      // s3rver makes a listing's continuation token with DES, which OpenSSL 3 keeps in its
      // legacy provider: without it every listing of more than one page is a 500.
      ::setenv("NODE_OPTIONS", "--openssl-legacy-provider", 1);
      ::execv(argv[0], const_cast<char* const*>(argv.data()));
      ::_exit(127);
    }
    return AwaitListening(&pid_, port_, std::chrono::seconds(30));
  }

  // Kills the server and reaps it: connections to it are refused when this returns.
  void Stop() { KillAndReap(&pid_); }

  // PUT `file` as `bucket`/`key` (or the bucket itself, when `key` is empty), signed as
  // `key_id`:`secret`; the HTTP status, or -1.
  int Put(const std::string& bucket, const std::string& key, const std::string& file,
          const std::string& key_id = kS3rverKey, const std::string& secret = kS3rverSecret) {
    std::vector<std::string> args = SigV4Args(key_id, secret);
    if (key.empty()) {
      args.insert(args.end(), {"-X", "PUT"});
    } else {
      args.insert(args.end(), {"-T", file});
    }
    return CurlStatus(args, url() + "/" + bucket + (key.empty() ? "" : "/" + key));
  }

  // Object `bucket`/`key` written to `file`; the HTTP status, or -1.
  int Get(const std::string& bucket, const std::string& key, const std::string& file) const {
    std::vector<std::string> argv = {"curl", "-s", "-o", file, "-w", "%{http_code}"};
    for (const std::string& a : SigV4Args(kS3rverKey, kS3rverSecret)) argv.push_back(a);
    argv.push_back(url() + "/" + bucket + "/" + key);
    CommandResult r = RunCommand(argv, 60);
    return r.exit_code == 0 ? std::atoi(r.output.c_str()) : -1;
  }

  // Every file under `dir` put as `bucket`/`prefix`/RELATIVE PATH; false (and what failed in
  // `*error`) if one is not answered 200.
  bool PutTree(const std::string& bucket, const std::string& prefix, const std::string& dir,
               std::string* error) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
      if (!e.is_regular_file()) continue;
      const std::string rel = std::filesystem::relative(e.path(), dir).string();
      const int status = Put(bucket, prefix + "/" + rel, e.path().string());
      if (status != 200) {
        *error = rel + ": HTTP " + std::to_string(status) + "\n" + Log();
        return false;
      }
    }
    return true;
  }

  std::string Log() const {
    std::error_code ec;
    return std::filesystem::exists(dir_ / "s3rver.log", ec) ? ReadFile(dir_ / "s3rver.log") : "";
  }

 private:
  TempDir dir_;
  const std::string binary_;
  const int port_;
  const std::string bucket_;
  pid_t pid_ = -1;
};

}  // namespace mmfs::testing
