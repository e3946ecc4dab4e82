#include "tools/stage/checkpoint_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace mmfs::stage {

namespace {

constexpr uint64_t kMaxCheckpointBytes = 1ull << 36;

}  // namespace

Result<uint64_t> ReadCheckpointFile(const std::string& path,
                                    const std::function<Status(std::string_view)>& header,
                                    const std::function<bool(std::string_view)>& line) {
  MMFS_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(path, kMaxCheckpointBytes));
  const std::string_view all(text);
  size_t header_end = all.find('\n');
  if (header_end == std::string_view::npos) {
    return Status::InvalidArgument(path + ": empty checkpoint");
  }
  if (Status s = header(all.substr(0, header_end)); !s.ok()) {
    if (s.code() == StatusCode::kCorruption) {
      return Status::InvalidArgument(path + ": empty checkpoint");
    }
    return s;
  }
  uint64_t usable = header_end + 1;
  for (size_t start = usable; start < all.size();) {
    size_t end = all.find('\n', start);
    if (end == std::string_view::npos) break;  // a line cut by the interruption
    if (!line(all.substr(start, end - start))) break;
    start = end + 1;
    usable = start;
  }
  return usable;
}

uint64_t CountCheckpointLines(const std::string& path) {
  Result<std::string> text = ReadWholeFile(path, kMaxCheckpointBytes);
  if (!text.ok()) return 0;
  uint64_t lines = static_cast<uint64_t>(std::count(text->begin(), text->end(), '\n'));
  return lines > 0 ? lines - 1 : 0;
}

Result<CheckpointFile> CheckpointFile::Create(const std::string& path, std::string_view header) {
  MMFS_ASSIGN_OR_RETURN(UniqueFd fd, OpenFile(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC));
  CheckpointFile f(path, std::move(fd));
  MMFS_RETURN_IF_ERROR(f.Append(header));
  return f;
}

Result<CheckpointFile> CheckpointFile::Continue(const std::string& path, uint64_t usable_bytes) {
  MMFS_ASSIGN_OR_RETURN(UniqueFd fd, OpenFile(path, O_WRONLY | O_CLOEXEC));
  if (::ftruncate(fd.get(), static_cast<off_t>(usable_bytes)) != 0 ||
      ::lseek(fd.get(), 0, SEEK_END) < 0) {
    return Status::FromErrno(errno, "truncate " + path);
  }
  return CheckpointFile(path, std::move(fd));
}

Status CheckpointFile::Append(std::string_view line) {
  std::string text(line);
  text += '\n';
  MMFS_RETURN_IF_ERROR(WriteFull(fd_.get(), text.data(), text.size(), path_));
  if (::fdatasync(fd_.get()) != 0) return Status::FromErrno(errno, "fsync " + path_);
  return Status::Ok();
}

}  // namespace mmfs::stage
