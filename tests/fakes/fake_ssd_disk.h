// FakeSsdDisk: the SSD tier's disk (cache/ssd_disk.h) with the room it reports and the failures
// of its writes and reads set by the test, for unit tests of what the tier does on a full or
// failing disk without mounting a filesystem of the right size or finding a bad sector.
//
// The bytes still go to the real files under the tier's directory (a test's temporary one):
// only the answers change. SetSpace makes every free-space question (the guard before each write,
// the default budget at opening) see a disk of `total` bytes with `free` of them free; unset,
// the real filesystem answers. FailNextWrites / FailNextReads make the next n writes or entry
// reads fail with `err` (EIO unless given; ENOSPC is a disk that filled up between the guard and
// the write), each failure taking one call. Counters: calls and bytes of each kind that went
// through, and the failures handed out.
//
// Thread-safety: every method may be called from any thread at any time (the tier's writer and
// its lookups call it at once); one mutex guards the settings, the counters are atomics.
#pragma once

#include <sys/statvfs.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

#include "base/status.h"
#include "cache/ssd_disk.h"

namespace mmfs::testing {

class FakeSsdDisk final : public cache::SsdDisk {
 public:
  // A disk of `total` bytes with `free` of them free (4 KiB blocks).
  void SetSpace(uint64_t total, uint64_t free) {
    std::lock_guard<std::mutex> lock(mu_);
    space_set_ = true;
    total_ = total;
    free_ = free;
  }
  void FailNextWrites(int n, int err = EIO) {
    std::lock_guard<std::mutex> lock(mu_);
    fail_writes_ = n;
    write_errno_ = err;
  }
  void FailNextReads(int n, int err = EIO) {
    std::lock_guard<std::mutex> lock(mu_);
    fail_reads_ = n;
    read_errno_ = err;
  }

  int StatVfs(int dir_fd, struct statvfs* out) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (space_set_) {
        *out = {};
        out->f_bsize = out->f_frsize = kBlock;
        out->f_blocks = static_cast<fsblkcnt_t>(total_ / kBlock);
        out->f_bfree = out->f_bavail = static_cast<fsblkcnt_t>(free_ / kBlock);
        return 0;
      }
    }
    return SsdDisk::StatVfs(dir_fd, out);
  }
  Status Write(int fd, const void* buf, size_t len, std::string_view path) override {
    if (int err = Take(&fail_writes_, &write_errno_); err != 0) {
      failed_writes_.fetch_add(1);
      return Status::FromErrno(err, "write " + std::string(path) + " (fake disk)");
    }
    writes_.fetch_add(1);
    written_bytes_.fetch_add(len);
    return SsdDisk::Write(fd, buf, len, path);
  }
  Status Read(int fd, void* buf, size_t len, uint64_t offset, std::string_view path) override {
    if (int err = Take(&fail_reads_, &read_errno_); err != 0) {
      failed_reads_.fetch_add(1);
      return Status::FromErrno(err, "read " + std::string(path) + " (fake disk)");
    }
    reads_.fetch_add(1);
    return SsdDisk::Read(fd, buf, len, offset, path);
  }

  // Calls that reached the real file (an entry's write is two: its header and its payload).
  uint64_t writes() const { return writes_.load(); }
  uint64_t written_bytes() const { return written_bytes_.load(); }
  uint64_t reads() const { return reads_.load(); }
  uint64_t failed_writes() const { return failed_writes_.load(); }
  uint64_t failed_reads() const { return failed_reads_.load(); }

  static constexpr uint64_t kBlock = 4096;

 private:
  // The errno for this call if a failure is due (and counts it taken), else 0.
  int Take(int* count, const int* err) {
    std::lock_guard<std::mutex> lock(mu_);
    if (*count <= 0) return 0;
    --*count;
    return *err;
  }

  std::mutex mu_;
  bool space_set_ = false;  // guarded by mu_, as is the rest up to the counters
  uint64_t total_ = 0, free_ = 0;
  int fail_writes_ = 0, write_errno_ = EIO;
  int fail_reads_ = 0, read_errno_ = EIO;
  std::atomic<uint64_t> writes_{0}, written_bytes_{0}, reads_{0}, failed_writes_{0},
      failed_reads_{0};
};

}  // namespace mmfs::testing
