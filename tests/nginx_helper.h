// A real nginx on 127.0.0.1 for the remote origin's tests: a config written into a temp dir,
// one process (daemon off, master_process off) serving that dir's www/ on a free port, started
// and stopped by the test; with NginxOptions, over TLS with a given certificate and with an
// access log (one line per request). The server dies with the test process (PR_SET_PDEATHSIG),
// so a failing or killed test leaves no server behind.
//
// Thread-safety: test-only; one thread drives it.
#pragma once

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/server_process.h"
#include "tests/test_util.h"

namespace mmfs::testing {

inline constexpr const char* kNginx = "/usr/sbin/nginx";

struct NginxOptions {
  // Both set: HTTPS with this certificate (PEM, its chain) and key; else plain HTTP.
  std::string tls_cert, tls_key;
  bool access_log = false;  // AccessLog() then has a line per request
};

class NginxServer {
 public:
  explicit NginxServer(NginxOptions options = {})
      : tls_(!options.tls_cert.empty() && !options.tls_key.empty()), port_(FreePort()) {
    std::filesystem::create_directories(dir_ / "www");
    std::filesystem::create_directories(dir_ / "tmp");
    std::ofstream conf(dir_ / "nginx.conf");
    conf << "daemon off;\nmaster_process off;\nworker_processes 1;\n"
         << "pid " << (dir_ / "nginx.pid") << ";\n"
         << "error_log " << (dir_ / "error.log") << " warn;\n"
         << "events { worker_connections 64; }\n"
         << "http {\n  access_log "
         << (options.access_log ? (dir_ / "access.log") : std::string("off")) << ";\n"
         << "  client_body_temp_path " << (dir_ / "tmp") << ";\n"
         << "  proxy_temp_path " << (dir_ / "tmp") << ";\n"
         << "  fastcgi_temp_path " << (dir_ / "tmp") << ";\n"
         << "  uwsgi_temp_path " << (dir_ / "tmp") << ";\n"
         << "  scgi_temp_path " << (dir_ / "tmp") << ";\n"
         << "  server {\n    listen 127.0.0.1:" << port_ << (tls_ ? " ssl" : "") << ";\n";
    if (tls_) {
      conf << "    ssl_certificate " << options.tls_cert << ";\n"
           << "    ssl_certificate_key " << options.tls_key << ";\n";
    }
    conf << "    root " << www() << ";\n  }\n}\n";
  }
  ~NginxServer() { Stop(); }
  NginxServer(const NginxServer&) = delete;
  NginxServer& operator=(const NginxServer&) = delete;

  // The directory it serves, and its URL.
  std::string www() const { return dir_ / "www"; }
  std::string url() const {
    return (tls_ ? "https://127.0.0.1:" : "http://127.0.0.1:") + std::to_string(port_);
  }

  // Starts the server and waits (10 s at most) until it accepts connections.
  bool Start() {
    pid_ = ::fork();
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      const std::string conf = dir_ / "nginx.conf";
      ::execl(kNginx, kNginx, "-e", (dir_ / "error.log").c_str(), "-p", dir_.path().c_str(), "-c",
              conf.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    return AwaitListening(&pid_, port_, std::chrono::seconds(10));
  }

  // Stops the server and reaps it; the port is free again when this returns.
  void Stop() { KillAndReap(&pid_); }

  std::string ErrorLog() const { return ReadFile(dir_ / "error.log"); }
  // The access log ("" before the first request, or without NginxOptions::access_log).
  std::string AccessLog() const {
    std::error_code ec;
    return std::filesystem::exists(dir_ / "access.log", ec) ? ReadFile(dir_ / "access.log") : "";
  }

 private:
  TempDir dir_;
  const bool tls_;
  const int port_;
  pid_t pid_ = -1;
};

}  // namespace mmfs::testing
