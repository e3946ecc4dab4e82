// tests/origin/fault_proxy.py for a test: an HTTP proxy on 127.0.0.1 in front of one local
// server (nginx, s3rver) that answers the next requests with a fault when told to (500, 429, a
// slow or a truncated body), counts what it forwarded, and can check SigV4 signatures. Started
// and stopped by the test; it dies with the test process (PR_SET_PDEATHSIG). Its control
// channel is its own /__ URLs, reached with the curl tool.
//
// Thread-safety: test-only; one thread drives it.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/server_process.h"
#include "tests/test_util.h"

namespace mmfs::testing {

class FaultProxy {
 public:
  // A proxy to `upstream` ("http://127.0.0.1:PORT"); `extra` are more arguments of
  // fault_proxy.py (--sigv4-key K --sigv4-secret S).
  explicit FaultProxy(std::string upstream, std::vector<std::string> extra = {})
      : upstream_(std::move(upstream)), extra_(std::move(extra)) {}
  ~FaultProxy() { Stop(); }
  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  // Starts it and waits (20 s at most) until it listens and has said on which port.
  bool Start() {
    const std::string port_file = dir_ / "port";
    pid_ = ::fork();
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      const std::string log = dir_ / "proxy.log";
      if (std::freopen(log.c_str(), "a", stdout) == nullptr ||
          std::freopen(log.c_str(), "a", stderr) == nullptr) {
        ::_exit(126);
      }
      std::vector<std::string> args = {
          "/usr/bin/python3", SourceDir() + "/tests/origin/fault_proxy.py",
          "--upstream",       upstream_,
          "--port-file",      port_file};
      args.insert(args.end(), extra_.begin(), extra_.end());
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    if (pid_ < 0) return false;
    const bool up = WaitFor(
        [&] {
          int status = 0;
          if (::waitpid(pid_, &status, WNOHANG) == pid_) {
            pid_ = -1;
            return true;  // it exited: no port will come
          }
          std::error_code ec;
          return std::filesystem::exists(port_file, ec);
        },
        20);
    if (!up || pid_ < 0) return false;
    port_ = std::atoi(ReadFile(port_file).c_str());
    return port_ > 0;
  }

  void Stop() { KillAndReap(&pid_); }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  // The next `count` `method` requests (-1: all, until Clear) whose path contains `match` get
  // `mode`: "500", "429", "slow" (the body over `seconds`) or "truncate". False if the proxy
  // did not take it.
  bool Fault(const std::string& mode, int count, const std::string& match = "",
             double seconds = 1, const std::string& method = "GET") {
    return Control("/__fault?mode=" + mode + "&count=" + std::to_string(count) + "&match=" + match +
                   "&seconds=" + std::to_string(seconds) + "&method=" + method);
  }
  bool Clear() { return Control("/__clear"); }

  // {"requests": N, "faults": N, "refused": N, "paths": {"GET /path": N}}; null (and a test
  // failure) if it does not answer.
  nlohmann::json Stats() const {
    CommandResult r = RunCommand({"curl", "-s", "--fail", url() + "/__stats"}, 30);
    auto stats = nlohmann::json::parse(r.output, nullptr, /*allow_exceptions=*/false);
    if (r.exit_code != 0 || stats.is_discarded()) {
      ADD_FAILURE() << "the fault proxy's stats: " << r.output << Log();
      return nullptr;
    }
    return stats;
  }
  // How many `method` requests it saw for paths containing `part`.
  int Count(const std::string& method, const std::string& part) const {
    nlohmann::json stats = Stats();
    if (stats.is_null()) return -1;
    int n = 0;
    for (const auto& [key, count] : stats["paths"].items()) {
      if (key.rfind(method + " ", 0) == 0 && key.find(part) != std::string::npos) {
        n += count.get<int>();
      }
    }
    return n;
  }

  std::string Log() const {
    std::error_code ec;
    return std::filesystem::exists(dir_ / "proxy.log", ec) ? ReadFile(dir_ / "proxy.log") : "";
  }

 private:
  bool Control(const std::string& path) {
    CommandResult r = RunCommand({"curl", "-s", "--fail", url() + path}, 30);
    return r.exit_code == 0 && r.output == "ok\n";
  }

  TempDir dir_;
  const std::string upstream_;
  const std::vector<std::string> extra_;
  pid_t pid_ = -1;
  int port_ = -1;
};

}  // namespace mmfs::testing
