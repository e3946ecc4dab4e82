#include "fs/origin/dataset_file.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>

namespace mmfs::origin {

// O_NONBLOCK: a FIFO planted in a file's place must not hang the open; no effect on a regular
// file.
Result<UniqueFd> OpenDatasetFile(const std::string& path, int flags) {
  auto fd = OpenFile(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | flags);
  if (!fd.ok()) {
    struct stat st;
    if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
      return Status::InvalidArgument(path + " is a symbolic link; mmfs does not follow links in "
                                     "a dataset (copy the file in its place)");
    }
    return fd.status();
  }
  struct stat st;
  if (::fstat(fd->get(), &st) != 0) return Status::FromErrno(errno, "stat " + path);
  if (!S_ISREG(st.st_mode)) return Status::InvalidArgument(path + " is not a regular file");
  return fd;
}

Result<std::string> ReadDatasetFile(const std::string& path, uint64_t max_bytes) {
  MMFS_ASSIGN_OR_RETURN(UniqueFd fd, OpenDatasetFile(path));
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Status::FromErrno(errno, path);
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    return Status::InvalidArgument(path + ": larger than " + std::to_string(max_bytes) +
                                   " bytes, refusing to load it");
  }
  std::string text(static_cast<size_t>(st.st_size), '\0');
  MMFS_RETURN_IF_ERROR(PreadFull(fd.get(), text.data(), text.size(), 0, path));
  return text;
}

}  // namespace mmfs::origin
