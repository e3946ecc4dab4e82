// The parts every test server helper shares (nginx_helper.h, s3rver_helper.h,
// fault_proxy_helper.h): a free port on 127.0.0.1, whether something listens there, waiting
// for a started server to listen, and killing and reaping it.
//
// Thread-safety: test-only; one thread drives each server.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>

namespace mmfs::testing {

// A TCP port on 127.0.0.1 nobody listens on now (the kernel's choice for port 0).
inline int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  int port = -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

// Whether something accepts connections on 127.0.0.1:`port`.
inline bool Listening(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

// Waits until the server `*pid` (just forked) accepts connections on `port`: true then; false
// after `limit`, or at once if it exited (then reaped, and *pid is -1).
inline bool AwaitListening(pid_t* pid, int port, std::chrono::seconds limit) {
  if (*pid < 0) return false;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (Listening(port)) return true;
    int status = 0;
    if (::waitpid(*pid, &status, WNOHANG) == *pid) {
      *pid = -1;
      return false;
    }
    ::usleep(2000);  // polling the port, with a deadline
  }
  return false;
}

// Kills the server `*pid` and reaps it (nothing if it is not running); *pid is -1 after. Its
// port refuses connections when this returns.
inline void KillAndReap(pid_t* pid) {
  if (*pid <= 0) return;
  ::kill(*pid, SIGKILL);
  ::waitpid(*pid, nullptr, 0);
  *pid = -1;
}

}  // namespace mmfs::testing
