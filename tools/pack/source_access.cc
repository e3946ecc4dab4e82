#include "tools/pack/source_access.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <vector>

#include "base/file_util.h"

namespace mmfs::pack {

namespace {

std::string Octal(uint32_t mode) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04o", mode & 07777);
  return buf;
}

std::string FileCount(uint64_t n) { return std::to_string(n) + (n == 1 ? " file" : " files"); }

const char* ReachName(uint32_t reach) {
  switch (reach & 0044) {
    case 0044: return "readable by other users";
    case 0040: return "readable by their group only";
    case 0004: return "readable by others but not their group";
    default: return "readable by their owner only";
  }
}

}  // namespace

uint32_t FolderReach(const std::string& real_path) {
  uint32_t reach = 0044;
  std::string path = real_path;
  while (!path.empty()) {
    struct stat st;
    if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      // The search bit of a class (0010, 0001) moved to its read bit (0040, 0004).
      reach &= (st.st_mode & 0011) << 2;
    }
    if (path == "/") break;
    size_t slash = path.rfind('/');
    path = slash == 0 ? "/" : slash == std::string::npos ? "" : path.substr(0, slash);
  }
  return reach;
}

void AccessTally::AddFile(const std::string& path, uid_t uid, gid_t gid, uint32_t mode,
                          uint32_t folder_reach) {
  uint32_t reach = mode & 0044 & folder_reach;
  ++files_;
  reach_all_ &= reach;
  if ((reach & 0040) != 0) group_readable_gids_.insert(gid);
  Class& owner = owners_[uid];
  if (owner.files++ == 0) owner.example = path;
  Class& level = reaches_[reach];
  if (level.files++ == 0) {
    level.example = path;
    level.example += " (";
    level.example += Octal(mode);
    level.example += ')';
  }
}

uint32_t AccessTally::shared_reach(gid_t output_gid) const {
  uint32_t reach = reach_all_;
  for (gid_t g : group_readable_gids_) {
    if (g != output_gid) reach &= ~0040u;
  }
  return reach;
}

// Built with += only: GCC 12 -O3 reports false -Wrestrict warnings for chains of operator+.
std::string AccessTally::MixedWarning() const {
  if (owners_.size() <= 1 && reaches_.size() <= 1) return "";
  std::string line = "the sources mix";
  if (owners_.size() > 1) {
    line += ' ';
    line += std::to_string(owners_.size());
    line += " owners (";
    const char* sep = "";
    for (const auto& [uid, c] : owners_) {
      line += sep;
      line += "uid ";
      line += std::to_string(uid);
      line += ": ";
      line += FileCount(c.files);
      line += ", e.g. ";
      line += c.example;
      sep = ", ";
    }
    line += ')';
  }
  if (reaches_.size() > 1) {
    if (owners_.size() > 1) line += " and";
    line += ' ';
    line += std::to_string(reaches_.size());
    line += " access levels (";
    const char* sep = "";
    // Most private first: 0 (owner only) sorts before 0044.
    for (const auto& [reach, c] : reaches_) {
      line += sep;
      line += FileCount(c.files);
      line += ' ';
      line += ReachName(reach);
      line += ", e.g. ";
      line += c.example;
      sep = ", ";
    }
    line += ')';
  }
  line += "; the dataset cannot keep them apart: whoever reads its shards (or the mount, with "
          "allow_other) reads them all, so its files get only the read bits every source file "
          "has; pack them separately to keep them apart";
  return line;
}

Result<OutputModes> RestrictOutputModes(const std::string& dir, const AccessTally& tally) {
  UniqueFd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (dfd.get() < 0) return Status::FromErrno(errno, "open " + dir);
  struct stat dst;
  if (::fstat(dfd.get(), &dst) != 0) return Status::FromErrno(errno, "stat " + dir);
  OutputModes out;
  out.file_mode = 0600 | tally.shared_reach(dst.st_gid);
  uint32_t given = out.file_mode;  // narrowed by the modes the umask left the files
  std::vector<std::string> names;
  {
    int fd = ::dup(dfd.get());
    if (fd < 0) return Status::FromErrno(errno, "dup " + dir);
    DIR* d = ::fdopendir(fd);
    if (d == nullptr) {
      ::close(fd);
      return Status::FromErrno(errno, "read directory " + dir);
    }
    while (struct dirent* de = ::readdir(d)) {
      std::string name = de->d_name;
      if (name != "." && name != "..") names.push_back(std::move(name));
    }
    ::closedir(d);
  }
  for (const std::string& name : names) {
    std::string path = dir + "/" + name;
    UniqueFd fd(::openat(dfd.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
    if (fd.get() < 0) return Status::FromErrno(errno, "open " + path);
    struct stat st;
    if (::fstat(fd.get(), &st) != 0) return Status::FromErrno(errno, "stat " + path);
    if (!S_ISREG(st.st_mode)) continue;
    const uint32_t mode = st.st_mode & 0777 & out.file_mode;
    if (::fchmod(fd.get(), mode) != 0) return Status::FromErrno(errno, "chmod " + path);
    given &= mode | 0600;
  }
  // A class may search the folder where it may read the files.
  out.dir_mode = 0700 | (given & 0044) | ((given & 0044) >> 2);
  if (::fchmod(dfd.get(), out.dir_mode) != 0) return Status::FromErrno(errno, "chmod " + dir);
  return out;
}

}  // namespace mmfs::pack
