#include "fs/fuse/dirent_encoder.h"

#include <linux/fuse.h>
#include <sys/stat.h>

#include <cstring>

namespace mmfs::fs {

size_t EncodeDirent(char* buf, size_t room, std::string_view name, uint64_t ino, uint32_t mode,
                    uint64_t next) {
  const size_t entry = FUSE_NAME_OFFSET + name.size();
  const size_t padded = FUSE_DIRENT_ALIGN(entry);
  if (padded > room) return padded;
  fuse_dirent d;
  d.ino = ino;
  d.off = next;
  d.namelen = static_cast<uint32_t>(name.size());
  d.type = (mode & S_IFMT) >> 12;  // the DT_* value, as libfuse and the kernel compute it
  std::memcpy(buf, &d, FUSE_NAME_OFFSET);
  std::memcpy(buf + FUSE_NAME_OFFSET, name.data(), name.size());
  std::memset(buf + entry, 0, padded - entry);
  return padded;
}

}  // namespace mmfs::fs
