#include "tools/mmfs/daemonize.h"

#include <dirent.h>
#include <fcntl.h>
#include <malloc.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/sinks/syslog_sink.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string_view>
#include <vector>

#include "base/file_util.h"
#include "fs/origin/printable.h"
#include "tools/mmfs/commands.h"

namespace mmfs::cli {

int ForkDaemon(const std::string& mountpoint, const std::function<void()>& in_child,
               const std::function<int(const ReadinessReport&)>& serve) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    PrintError(std::string("pipe: ") + std::strerror(errno));
    return 1;
  }
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) {
    PrintError(std::string("fork: ") + std::strerror(errno));
    ::close(fds[0]);
    ::close(fds[1]);
    return 1;
  }
  if (pid > 0) {
    ::close(fds[1]);
    std::string msg;
    char buf[512];
    for (;;) {
      ssize_t n = ::read(fds[0], buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      msg.append(buf, static_cast<size_t>(n));
    }
    ::close(fds[0]);
    if (msg == kReady) {
      // The daemon is mounted; wait until it answers (statfs always reaches it). This process
      // holds no /dev/fuse descriptor, so a daemon dying now gives ENOTCONN, not a hang.
      struct statfs answer;
      if (::statfs(mountpoint.c_str(), &answer) == 0) return 0;
      // The daemon reported ready, then its session ended as the kernel connected (libfuse
      // refused the kernel's INIT, or the daemon died): what went wrong is in its log.
      msg = std::string("the mount does not answer (statfs: ") + std::strerror(errno) +
            "): the daemon stopped as the kernel connected; its log says why (syslog, "
            "--log-file, or run with -f)";
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    PrintError(msg.empty() ? "the mount daemon exited before the mount was ready (see syslog)"
                           : msg);
    return 1;
  }
  // Child: the daemon. It never reads stdin; nor may a helper it starts hold the caller's (an
  // ssh channel, a pipe) while the mount lives. stdout and stderr stay until the report, so that
  // errors before it reach the caller.
  ::close(fds[0]);
  if (int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC); devnull >= 0) {
    ::dup2(devnull, STDIN_FILENO);
    ::close(devnull);
  }
  ::setsid();
  if (::chdir("/") != 0) {
    // Not fatal: every path the daemon uses is absolute.
  }
  in_child();
  int report_fd = fds[1];
  return serve([&](const std::string& msg) {
    if (report_fd < 0) return;
    (void)WriteFull(report_fd, msg.data(), msg.size(), "readiness pipe");
    ::close(report_fd);
    report_fd = -1;
    int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    if (devnull >= 0) {
      ::dup2(devnull, STDIN_FILENO);
      ::dup2(devnull, STDOUT_FILENO);
      ::dup2(devnull, STDERR_FILENO);
      ::close(devnull);
    }
  });
}

void DropInheritedDescriptors(bool daemon) {
  if (::close_range(STDERR_FILENO + 1, ~0U, daemon ? 0 : CLOSE_RANGE_CLOEXEC) == 0) return;
  // A kernel before 5.11 (no CLOSE_RANGE_CLOEXEC; before 5.9 no close_range): one by one.
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return;
  const int own = ::dirfd(dir);
  std::vector<int> fds;
  while (dirent* e = ::readdir(dir)) {
    const int fd = std::atoi(e->d_name);
    if (fd > STDERR_FILENO && fd != own) fds.push_back(fd);
  }
  ::closedir(dir);
  for (int fd : fds) {
    if (daemon) {
      ::close(fd);
    } else {
      ::fcntl(fd, F_SETFD, ::fcntl(fd, F_GETFD) | FD_CLOEXEC);
    }
  }
}

namespace {

// A log line's message with its control characters escaped (origin::Printable): the daemon logs
// names from the dataset (paths, shards), and one holding ESC or CR must neither drive the
// terminal of a `mount -f` nor forge a line of the log.
class PrintableMessage final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    const std::string text =
        origin::Printable(std::string_view(msg.payload.data(), msg.payload.size()));
    dest.append(text.data(), text.data() + text.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<PrintableMessage>();
  }
};

// `pattern` with %* for the escaped message; `eol` ends each line ("" for syslog, which takes
// one message per call).
std::unique_ptr<spdlog::formatter> LogFormatter(const std::string& pattern, const std::string& eol) {
  auto formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::local, eol);
  formatter->add_flag<PrintableMessage>('*').set_pattern(pattern);
  return formatter;
}

}  // namespace

void SetUpLogging(const std::string& log_file, bool daemonized) {
  const std::string timed = "%Y-%m-%d %H:%M:%S.%e %l %*";
  spdlog::sink_ptr sink;
  if (!log_file.empty()) {
    sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(log_file);
    sink->set_formatter(LogFormatter(timed, spdlog::details::os::default_eol));
  } else if (daemonized) {
    // Formatted (the last argument), so that the message is escaped; syslog adds time and level.
    sink = std::make_shared<spdlog::sinks::syslog_sink_mt>("mmfs", LOG_PID, LOG_DAEMON, true);
    sink->set_formatter(LogFormatter("%*", ""));
  } else {
    sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
    sink->set_formatter(LogFormatter(timed, spdlog::details::os::default_eol));
  }
  auto logger = std::make_shared<spdlog::logger>("mmfs", sink);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

void NotifySystemd(const std::string& state) {
  const char* path = std::getenv("NOTIFY_SOCKET");
  if (path == nullptr || (path[0] != '/' && path[0] != '@')) return;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  size_t len = std::strlen(path);
  if (len >= sizeof addr.sun_path) return;
  std::memcpy(addr.sun_path, path, len);
  if (addr.sun_path[0] == '@') addr.sun_path[0] = '\0';  // "@" starts an abstract name
  UniqueFd fd(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return;
  auto addr_len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + len);
  if (::sendto(fd.get(), state.data(), state.size(), MSG_NOSIGNAL,
               reinterpret_cast<const sockaddr*>(&addr), addr_len) < 0) {
    spdlog::warn("cannot notify systemd at {}: {}", path, std::strerror(errno));
  }
}

void RaiseFileLimit() {
  struct rlimit rl;
  if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &rl) != 0) {
      spdlog::warn("cannot raise the open file limit: {}", std::strerror(errno));
    }
  }
}

// The daemon's memory beyond its tiers, kept small so that shared-limit mode leaves the RAM tier
// most of what it is given. glibc's defaults cost it tens of MiB: an
// arena per thread (16 FUSE threads, the prefetch workers, the writers), each keeping what was
// freed in it, and an mmap threshold that rises to the largest block freed (up to 32 MiB), after
// which every file-sized blob comes from an arena and its memory stays there when evicted.
// A few arenas and a fixed threshold: blobs of 256 KiB and more are mapped and unmapped on
// their own, so evicting them returns the memory at once.
void TuneAllocator() {
  ::mallopt(M_ARENA_MAX, 4);
  ::mallopt(M_MMAP_THRESHOLD, 256 * 1024);
  ::mallopt(M_TRIM_THRESHOLD, 4 * 1024 * 1024);
}

}  // namespace mmfs::cli
