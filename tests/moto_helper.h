// A real S3 API server on 127.0.0.1 for the S3 origin's tests: moto_server (the moto project's
// stand-alone server) on a free port, started and stopped by the test, dying with the test
// process (PR_SET_PDEATHSIG). Objects are put with the curl tool, signed with SigV4.
//
// Thread-safety: test-only; one thread drives it.
#pragma once

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "tests/nginx_helper.h"

namespace mmfs::testing {

// moto_server's path on PATH, or "" when it is not installed.
inline std::string FindOnPath(const std::string& tool) {
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const std::string candidate = dirs.substr(start, end - start) + "/" + tool;
    if (end > start && ::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

class MotoServer {
 public:
  MotoServer() : binary_(FindOnPath("moto_server")), port_(FreePort()) {}
  ~MotoServer() { Stop(); }
  MotoServer(const MotoServer&) = delete;
  MotoServer& operator=(const MotoServer&) = delete;

  bool installed() const { return !binary_.empty(); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  // Starts the server and waits (30 s at most: Python starts slowly) until it accepts
  // connections.
  bool Start() {
    pid_ = ::fork();
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      const std::string log = dir_ / "moto.log";
      if (std::freopen(log.c_str(), "w", stdout) == nullptr ||
          std::freopen(log.c_str(), "a", stderr) == nullptr) {
        ::_exit(126);
      }
      const std::string port = std::to_string(port_);
      ::execl(binary_.c_str(), binary_.c_str(), "-H", "127.0.0.1", "-p", port.c_str(),
              static_cast<char*>(nullptr));
      ::_exit(127);
    }
    if (pid_ < 0) return false;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      if (Listening(port_)) return true;
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return false;
      }
      ::usleep(5000);  // polling the port, with a deadline
    }
    return false;
  }

  void Stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }

  // PUT `file` (or the bucket, when `key` is empty) with SigV4 as `key_id`:`secret`; the HTTP
  // status curl saw, or -1.
  int Put(const std::string& bucket, const std::string& key, const std::string& file,
          const std::string& key_id, const std::string& secret) {
    const std::string out = dir_ / "status";
    std::string cmd =
        "curl -s -o /dev/null -w '%{http_code}' --aws-sigv4 aws:amz:us-east-1:s3 -u '" + key_id +
        ":" + secret + "' ";
    cmd += key.empty() ? "-X PUT " : "-T '" + file + "' ";
    cmd += "'" + url() + "/" + bucket + (key.empty() ? "" : "/" + key) + "' > '" + out + "'";
    if (std::system(cmd.c_str()) != 0) return -1;
    return std::atoi(ReadFile(out).c_str());
  }

  std::string Log() const { return ReadFile(dir_ / "moto.log"); }

 private:
  TempDir dir_;
  const std::string binary_;
  const int port_;
  pid_t pid_ = -1;
};

}  // namespace mmfs::testing
