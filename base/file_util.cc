#include "base/file_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <vector>

namespace mmfs {

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) Reset(other.Release());
  return *this;
}

void UniqueFd::Reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

Result<UniqueFd> OpenFile(const std::string& path, int flags, mode_t mode) {
  int fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
  if (fd < 0) return Status::FromErrno(errno, "open " + path);
  return UniqueFd(fd);
}

Status PreadFull(int fd, void* buf, size_t len, uint64_t offset, std::string_view path) {
  auto* p = static_cast<char*>(buf);
  size_t done = 0;
  while (done < len) {
    ssize_t n = ::pread(fd, p + done, len - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno(errno, "read " + std::string(path));
    }
    if (n == 0) {
      return Status::Corruption(std::string(path) + ": file ends at " +
                                std::to_string(offset + done) + ", expected at least " +
                                std::to_string(offset + len) + " bytes");
    }
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status WriteFull(int fd, const void* buf, size_t len, std::string_view path) {
  const auto* p = static_cast<const char*>(buf);
  size_t done = 0;
  while (done < len) {
    ssize_t n = ::write(fd, p + done, len - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno(errno, "write " + std::string(path));
    }
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Result<std::string> ReadWholeFile(const std::string& path, uint64_t max_bytes) {
  MMFS_ASSIGN_OR_RETURN(UniqueFd fd, OpenFile(path, O_RDONLY));
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno(errno, "read " + path);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max_bytes) {
      return Status::InvalidArgument(path + ": larger than " + std::to_string(max_bytes) +
                                     " bytes, refusing to load it");
    }
  }
  return out;
}

Status FsyncPath(const std::string& path) {
  MMFS_ASSIGN_OR_RETURN(UniqueFd fd, OpenFile(path, O_RDONLY));
  if (::fsync(fd.get()) != 0) return Status::FromErrno(errno, "fsync " + path);
  return Status::Ok();
}

Status WriteFileDurably(const std::string& path, std::string_view data) {
  std::string tmp = path + ".tmp";
  {
    MMFS_ASSIGN_OR_RETURN(UniqueFd fd, OpenFile(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644));
    MMFS_RETURN_IF_ERROR(WriteFull(fd.get(), data.data(), data.size(), tmp));
    if (::fsync(fd.get()) != 0) return Status::FromErrno(errno, "fsync " + tmp);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    return Status::FromErrno(errno, "rename " + tmp + " to " + path);
  }
  return Status::Ok();
}

Result<uint64_t> HashFile(const std::string& path) {
  MMFS_ASSIGN_OR_RETURN(UniqueFd fd, OpenFile(path, O_RDONLY));
  XXH3_state_t* state = XXH3_createState();
  if (state == nullptr) return Status::ResourceExhausted("out of memory hashing " + path);
  XXH3_64bits_reset(state);
  std::vector<char> buf(1 << 20);
  Status status;
  for (;;) {
    ssize_t n = ::read(fd.get(), buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      status = Status::FromErrno(errno, "read " + path);
      break;
    }
    if (n == 0) break;
    XXH3_64bits_update(state, buf.data(), static_cast<size_t>(n));
  }
  uint64_t digest = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  if (!status.ok()) return status;
  return digest;
}

std::string HexU64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

bool ParseHexU64(std::string_view text, uint64_t* out) {
  if (text.size() != 16) return false;
  uint64_t v = 0;
  for (char c : text) {
    v <<= 4;
    if (c >= '0' && c <= '9') {
      v |= static_cast<uint64_t>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      v |= static_cast<uint64_t>(c - 'a' + 10);
    } else {
      return false;
    }
  }
  *out = v;
  return true;
}

void ForEachDirOfGoneProcess(const std::string& parent_dir, const std::string& prefix,
                             const std::function<void(const std::string& dir)>& clean) {
  DIR* d = ::opendir(parent_dir.c_str());
  if (d == nullptr) return;
  std::vector<std::string> gone;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    long pid = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
    if (pid <= 0 || ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    gone.push_back(parent_dir + "/" + name);
  }
  ::closedir(d);
  for (const std::string& dir : gone) clean(dir);
}

}  // namespace mmfs
