#include "fs/control/line_pipe.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <spdlog/spdlog.h>

namespace mmfs::fs {

namespace {
constexpr size_t kMaxLine = 64 << 10;  // a longer line is no path or request; it is dropped
}

std::string LinePipe::DefaultParentDir() {
  if (::mkdir("/run/mmfs", 0755) == 0 || errno == EEXIST) {
    if (::access("/run/mmfs", W_OK | X_OK) == 0) return "/run/mmfs";
  }
  for (const char* var : {"XDG_RUNTIME_DIR", "TMPDIR"}) {
    const char* v = std::getenv(var);
    if (v != nullptr && *v == '/' && ::access(v, W_OK | X_OK) == 0) return v;
  }
  return "/tmp";
}

Result<std::unique_ptr<LinePipe>> LinePipe::Open(const std::string& parent_dir,
                                                 const std::string& name, mode_t fifo_mode,
                                                 LinePipeCallbacks callbacks) {
  std::unique_ptr<LinePipe> ch(new LinePipe());
  ch->name_ = name;
  RemoveStale(parent_dir, name);
  // The daemon's PID in the name lets a later daemon remove what a killed one left.
  std::string templ =
      parent_dir + "/mmfs-" + name + "-" + std::to_string(::getpid()) + "-XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr) return Status::FromErrno(errno, "create " + templ);
  ch->dir_ = templ;
  // Others may need to reach the FIFO (allow_other); its own mode decides who may write.
  ::chmod(ch->dir_.c_str(), 0711);
  ch->fifo_path_ = ch->dir_ + "/" + name;
  if (::mkfifo(ch->fifo_path_.c_str(), fifo_mode) != 0) {
    Status s = Status::FromErrno(errno, "create FIFO " + ch->fifo_path_);
    ::rmdir(ch->dir_.c_str());
    ch->dir_.clear();
    return s;
  }
  ::chmod(ch->fifo_path_.c_str(), fifo_mode);  // past the umask
  int efd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (efd < 0) return Status::FromErrno(errno, "eventfd");
  ch->stop_fd_.Reset(efd);
  ch->callbacks_ = std::move(callbacks);
  ch->reader_ = std::thread([raw = ch.get()] { raw->ReadLoop(); });
  return ch;
}

void LinePipe::RemoveStale(const std::string& parent_dir, const std::string& name) {
  ForEachDirOfGoneProcess(parent_dir, "mmfs-" + name + "-", [&](const std::string& dir) {
    ::unlink((dir + "/" + name).c_str());
    ::rmdir(dir.c_str());
  });
}

LinePipe::~LinePipe() {
  if (reader_.joinable()) {
    uint64_t one = 1;
    if (::write(stop_fd_.get(), &one, sizeof one) < 0) {
      spdlog::warn("cannot stop the {} pipe's reader: {}", name_, std::strerror(errno));
    }
    reader_.join();
  }
  if (!fifo_path_.empty()) ::unlink(fifo_path_.c_str());
  if (!dir_.empty()) ::rmdir(dir_.c_str());
}

void LinePipe::ReadLoop() {
  std::string buf(64 << 10, '\0');
  for (;;) {
    // Opened without waiting for a writer; poll() then sleeps until one writes or closes.
    UniqueFd fifo(::open(fifo_path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    if (!fifo.valid()) {
      spdlog::error("{} pipe {} stopped: {}", name_, fifo_path_, std::strerror(errno));
      return;
    }
    bool in_order = false;
    bool skipping = false;  // inside an overlong line
    std::string partial;
    for (;;) {
      pollfd fds[2] = {{fifo.get(), POLLIN, 0}, {stop_fd_.get(), POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0) {
        if (errno == EINTR) continue;
        spdlog::error("{} pipe poll: {}", name_, std::strerror(errno));
        return;
      }
      if (fds[1].revents != 0) return;
      ssize_t n = ::read(fifo.get(), buf.data(), buf.size());
      if (n < 0) {
        if (errno == EAGAIN || errno == EINTR) continue;
        spdlog::error("{} pipe read: {}", name_, std::strerror(errno));
        break;
      }
      if (n == 0) {  // the writer closed
        if (in_order) {
          if (!partial.empty() && !skipping) callbacks_.lines({partial});
          callbacks_.end();
        }
        break;
      }
      if (!in_order) {
        callbacks_.begin();
        in_order = true;
      }
      std::vector<std::string> lines;
      size_t start = 0;
      for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
        if (buf[i] != '\n') continue;
        if (!skipping) {
          partial.append(buf, start, i - start);
          lines.push_back(std::move(partial));
        }
        partial.clear();
        skipping = false;
        start = i + 1;
      }
      if (!skipping) partial.append(buf, start, static_cast<size_t>(n) - start);
      if (partial.size() > kMaxLine) {
        partial.clear();
        skipping = true;
      }
      if (!lines.empty()) callbacks_.lines(lines);
    }
  }
}

}  // namespace mmfs::fs
