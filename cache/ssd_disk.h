// SsdDisk: the three calls through which the SSD tier (ssd_tier.h) asks its disk how much room
// is left and moves an entry's bytes: the seam where tests put a disk that is full or fails
// (tests/fakes/fake_ssd_disk.h) without a filesystem of their own. Opening, renaming, listing
// and deleting the tier's files stay the tier's own system calls: they are not where a disk
// runs out of room or fails a sector.
//
// This class is the real disk; a fake overrides what it changes. A tier given none uses Real().
//
// Thread-safety: every method may be called from any number of threads at once (the tier's
// writer thread and its lookups do); the real one keeps no state.
#pragma once

#include <sys/statvfs.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/file_util.h"
#include "base/status.h"

namespace mmfs::cache {

class SsdDisk {
 public:
  virtual ~SsdDisk() = default;

  // fstatvfs(2) of the filesystem holding `dir_fd`: 0, or -1 with errno set.
  virtual int StatVfs(int dir_fd, struct statvfs* out) { return ::fstatvfs(dir_fd, out); }
  // All `len` bytes at `fd`'s position (WriteFull, base/file_util.h).
  virtual Status Write(int fd, const void* buf, size_t len, std::string_view path) {
    return WriteFull(fd, buf, len, path);
  }
  // Exactly `len` bytes at `offset` (the generic full read of base/file_util.h).
  virtual Status Read(int fd, void* buf, size_t len, uint64_t offset, std::string_view path) {
    return PreadFull(fd, buf, len, offset, path);
  }

  // The real disk, shared by every tier given none.
  static SsdDisk& Real() {
    static SsdDisk disk;
    return disk;
  }
};

}  // namespace mmfs::cache
