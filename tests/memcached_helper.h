// A memcached server for a test, on a free loopback port, stopped (killed and reaped) when the
// object goes, and sent SIGTERM by the kernel if the test process dies first.
//
// Thread-safety: test-only.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "tests/test_util.h"

namespace mmfs::testing {

class MemcachedServer {
 public:
  MemcachedServer() {
    port_ = FreePort();
    pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (::getppid() != parent) ::_exit(1);
      std::string port = std::to_string(port_);
      // memcached refuses to run as root; setpriv drops to nobody and then sets the parent-death
      // signal (a change of user clears one set before), so the server dies with the test.
      // -U 0: no UDP; -m 64: MiB of memory.
      ::execlp("setpriv", "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
               "--pdeathsig=SIGKILL", "memcached", "-l", "127.0.0.1", "-p", port.c_str(), "-U",
               "0", "-m", "64", "-t", "2", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ready_ = WaitFor([&] { return Answers(); }, 20);
  }
  ~MemcachedServer() { Kill(); }
  MemcachedServer(const MemcachedServer&) = delete;
  MemcachedServer& operator=(const MemcachedServer&) = delete;

  bool ready() const { return ready_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  // Kills the server at once (a crash, as far as clients can tell).
  void Kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  static int FreePort() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(fd);
    return ntohs(a.sin_port);
  }
  bool Answers() const {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port_));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    ::close(fd);
    return ok;
  }

  int port_ = 0;
  pid_t pid_ = -1;
  bool ready_ = false;
};

}  // namespace mmfs::testing
