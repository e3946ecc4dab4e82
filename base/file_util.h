// Small POSIX file helpers that turn errno into Status: owned descriptors, full reads and writes,
// durable atomic writes. Used by the format writer/reader, the packer and the CLI.
//
// Thread-safety: UniqueFd is a value type; the functions are reentrant.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace mmfs {

// Owns a file descriptor and closes it on destruction.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.Release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { Reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int Release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void Reset(int fd = -1);

 private:
  int fd_ = -1;
};

Result<UniqueFd> OpenFile(const std::string& path, int flags, mode_t mode = 0644);

// Reads exactly `len` bytes at `offset`, retrying short reads and EINTR. A read that ends early
// (the file is shorter than expected) is a Corruption naming `path`.
Status PreadFull(int fd, void* buf, size_t len, uint64_t offset, std::string_view path);
Status WriteFull(int fd, const void* buf, size_t len, std::string_view path);

Result<std::string> ReadWholeFile(const std::string& path, uint64_t max_bytes);
// Writes `data` to `path` through a temporary file, fsync and rename.
Status WriteFileDurably(const std::string& path, std::string_view data);
Status FsyncPath(const std::string& path);

// xxh3-64 of a whole file, streamed.
Result<uint64_t> HashFile(const std::string& path);

// Calls `clean` with each directory `parent_dir`/<prefix><pid>-... whose process <pid> no longer
// exists: what a daemon killed before it could clean up left behind. The PID in the name is what
// makes a directory safe to remove; the live daemons' own are never passed.
void ForEachDirOfGoneProcess(const std::string& parent_dir, const std::string& prefix,
                             const std::function<void(const std::string& dir)>& clean);

// "0123456789abcdef" and back.
std::string HexU64(uint64_t v);
bool ParseHexU64(std::string_view text, uint64_t* out);

}  // namespace mmfs
