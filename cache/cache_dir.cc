#include "cache/cache_dir.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace mmfs::cache {

namespace {

constexpr char kPlanted[] = "; refusing it (another user may have planted it)";

std::string UserName(uid_t uid) {
  std::string s = "uid " + std::to_string(uid);
  struct passwd pw;
  struct passwd* found = nullptr;
  char buf[1024];
  if (::getpwuid_r(uid, &pw, buf, sizeof buf, &found) == 0 && found != nullptr) {
    s += std::string(" (") + found->pw_name + ")";
  }
  return s;
}

// The open directory must be owned by the daemon's user; ours, it is made 0700 if more open.
Status CheckOwnDir(int fd, const std::string& shown) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return Status::FromErrno(errno, "stat " + shown);
  if (!S_ISDIR(st.st_mode)) return Status::NotADirectory("cache directory " + shown + " is not a directory");
  if (st.st_uid != ::geteuid()) {
    return Status::InvalidArgument("cache directory " + shown + " is owned by " +
                                   UserName(st.st_uid) + ", not by " + UserName(::geteuid()) +
                                   " that runs mmfs" + kPlanted);
  }
  return Status::Ok();
}

Status Tighten(int fd, const std::string& shown) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return Status::FromErrno(errno, "stat " + shown);
  if ((st.st_mode & 07777) != 0700 && ::fchmod(fd, 0700) != 0) {
    return Status::FromErrno(errno, "chmod 0700 " + shown);
  }
  return Status::Ok();
}

}  // namespace

Result<UniqueFd> OpenCacheRootDir(const std::string& dir) {
  if (dir.empty()) return Status::InvalidArgument("empty cache directory");
  struct stat lst;
  if (::lstat(dir.c_str(), &lst) != 0) {
    if (errno != ENOENT) return Status::FromErrno(errno, "cache directory " + dir);
    std::error_code ec;
    std::filesystem::path parent = std::filesystem::path(dir).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    if (ec) return Status::IoError("cannot create " + parent.string() + ": " + ec.message());
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
      return Status::FromErrno(errno, "cannot create the cache directory " + dir);
    }
    if (::lstat(dir.c_str(), &lst) != 0) return Status::FromErrno(errno, "cache directory " + dir);
  }
  if (S_ISLNK(lst.st_mode) && lst.st_uid != ::geteuid() && lst.st_uid != 0) {
    return Status::InvalidArgument("cache directory " + dir + " is a symbolic link owned by " +
                                   UserName(lst.st_uid) + kPlanted);
  }
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno(errno, "cannot open the cache directory " + dir);
  UniqueFd owned(fd);
  // Root's directory is fine too (/tmp for a user): the levels below are checked one by one, and
  // in a sticky or closed directory nobody else can move them. Root's world-writable directory
  // without the sticky bit lets anyone swap what lies in it.
  struct stat st;
  if (::fstat(owned.get(), &st) != 0) return Status::FromErrno(errno, "stat " + dir);
  if (st.st_uid == 0 && st.st_uid != ::geteuid() && S_ISDIR(st.st_mode)) {
    if ((st.st_mode & S_IWOTH) != 0 && (st.st_mode & S_ISVTX) == 0) {
      return Status::InvalidArgument("cache directory " + dir +
                                     " is writable by every user without the sticky bit; "
                                     "refusing it (another user could swap what it holds)");
    }
    return owned;
  }
  MMFS_RETURN_IF_ERROR(CheckOwnDir(owned.get(), dir));
  return owned;
}

Result<UniqueFd> OpenOwnSubdir(int parent_fd, const std::string& name, const std::string& shown) {
  bool created = ::mkdirat(parent_fd, name.c_str(), 0700) == 0;
  if (!created && errno != EEXIST) {
    return Status::FromErrno(errno, "cannot create the cache directory " + shown);
  }
  int fd = ::openat(parent_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    struct stat st;
    if (::fstatat(parent_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
      if (S_ISLNK(st.st_mode)) {
        return Status::InvalidArgument("cache directory " + shown + " is a symbolic link" +
                                       kPlanted);
      }
      if (!S_ISDIR(st.st_mode)) {
        return Status::NotADirectory("cache directory " + shown +
                                     " is not a directory; refusing it");
      }
    }
    return Status::FromErrno(err, "cannot open the cache directory " + shown);
  }
  UniqueFd owned(fd);
  MMFS_RETURN_IF_ERROR(CheckOwnDir(owned.get(), shown));
  MMFS_RETURN_IF_ERROR(Tighten(owned.get(), shown));
  return owned;
}

}  // namespace mmfs::cache
