#include "cache/cache_dir.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace mmfs::cache {

namespace {

constexpr char kPlanted[] = "; refusing it (another user may have planted it)";
// Links followed on the way to the cache directory before giving up (as the kernel's ELOOP).
constexpr int kMaxLinks = 16;

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

// Inside a user namespace (`unshare -Urm`: the user's own uid mapped, nothing else) an owner the
// namespace has no uid for shows as the overflow uid (65534): the host's root owns / and /home,
// and they look like nobody's. But so does every other host user: such an owner is trusted as
// root only where the walk shows it must be the host's root or someone trusted as much (see
// CheckPathDir). Outside a user namespace (the identity map) no owner is unmapped. /proc
// unreadable, or a map that gives 65534 a user of its own (a rootless container's range): none
// is, and such a path is refused as before.
struct UidMap {
  bool in_user_namespace = false;
  uid_t overflow = 65534;
  std::vector<std::pair<uint64_t, uint64_t>> inside;  // [first, first + count) of each line
};

const UidMap& ThisUidMap() {
  static const UidMap map = [] {
    UidMap m;
    std::ifstream uid_map("/proc/self/uid_map");
    uint64_t first = 0, outside = 0, count = 0;
    while (uid_map >> first >> outside >> count) m.inside.emplace_back(first, first + count);
    m.in_user_namespace = !m.inside.empty() && !(m.inside.size() == 1 && first == 0 &&
                                                 outside == 0 && count == 4294967295ull);
    std::ifstream overflow("/proc/sys/kernel/overflowuid");
    uint64_t o = 0;
    if (overflow >> o) m.overflow = static_cast<uid_t>(o);
    return m;
  }();
  return map;
}

bool IsUnmappedOwner(uid_t uid) {
  const UidMap& map = ThisUidMap();
  if (!map.in_user_namespace || uid != map.overflow) return false;
  for (const auto& [lo, hi] : map.inside) {
    if (uid >= lo && uid < hi) return false;  // a real user of the namespace
  }
  return true;
}

bool RootOrOwn(uid_t uid) { return uid == 0 || uid == ::geteuid(); }

std::string Trusted() {
  return ::geteuid() == 0 ? std::string("root") : "root or " + UserName(::geteuid());
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

// A directory on the way to the cache (the one given included) must belong to root or to the
// daemon's user, and nobody else may rename what it holds: not writable by group or others
// unless sticky. Otherwise another user could swap a level after it was checked.
// In a user namespace, a parent owned from outside it (IsUnmappedOwner) counts as root's while
// `above_private`: no level above it lets anyone but its owner write (a sticky /tmp does), so
// no other user could have made it; never for the cache directory itself. `*shared`: others may
// write to this level (sticky or not).
Status CheckPathDir(int fd, const std::string& shown, bool last, bool above_private,
                    bool* shared) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return Status::FromErrno(errno, "stat " + shown);
  std::string what = last ? "cache directory " + shown : shown + " (on the cache directory's path)";
  if (!S_ISDIR(st.st_mode)) return Status::NotADirectory(what + " is not a directory");
  *shared = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0;
  if (!RootOrOwn(st.st_uid) && !(above_private && !last && IsUnmappedOwner(st.st_uid))) {
    return Status::InvalidArgument(what + " is owned by " + UserName(st.st_uid) + ", not by " +
                                   Trusted() + " that runs mmfs" + kPlanted);
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st.st_mode & S_ISVTX) == 0) {
    return Status::InvalidArgument(
        what + " is writable by " + ((st.st_mode & S_IWOTH) != 0 ? "every user" : "its group") +
        " without the sticky bit; refusing it (another user could swap what it holds; "
        "chmod go-w or +t it, or choose another --cache-dir)");
  }
  return Status::Ok();
}

// "/a/b/c" -> {"a", "b", "c"}; the path is absolute and lexically normal.
std::vector<std::string> Components(const std::filesystem::path& p) {
  std::vector<std::string> out;
  for (const auto& part : p.relative_path()) {
    std::string s = part.string();
    if (!s.empty() && s != ".") out.push_back(s);
  }
  return out;
}

// One walk from "/" to `path`: every level opened with O_NOFOLLOW from the level above and
// checked on its descriptor. A link (at any level) is followed only when it belongs to root or
// the daemon's user and sits in a directory that passed the checks (nobody else could have put
// it there); the walk then starts over on its target. Sets `restart` to that new path.
Result<UniqueFd> WalkOnce(const std::filesystem::path& path, const std::string& given,
                          std::filesystem::path* restart) {
  int raw = ::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (raw < 0) return Status::FromErrno(errno, "open /");
  UniqueFd cur(raw);
  bool shared = false;
  MMFS_RETURN_IF_ERROR(CheckPathDir(cur.get(), "/", false, /*above_private=*/true, &shared));
  bool private_so_far = !shared;
  std::vector<std::string> parts = Components(path);
  if (parts.empty()) return Status::InvalidArgument("cache directory " + given + " is /");
  std::filesystem::path here = "/";
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string& name = parts[i];
    bool last = i + 1 == parts.size();
    std::filesystem::path next = here / name;
    std::string shown = next.string();
    struct stat lst;
    if (::fstatat(cur.get(), name.c_str(), &lst, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno != ENOENT) return Status::FromErrno(errno, "cache directory " + shown);
      // Parents the operator asked for are ordinary directories; the cache itself is ours alone.
      if (::mkdirat(cur.get(), name.c_str(), last ? 0700 : 0755) != 0 && errno != EEXIST) {
        return Status::FromErrno(errno, "cannot create " + shown);
      }
      if (::fstatat(cur.get(), name.c_str(), &lst, AT_SYMLINK_NOFOLLOW) != 0) {
        return Status::FromErrno(errno, "cache directory " + shown);
      }
    }
    if (S_ISLNK(lst.st_mode)) {
      if (!RootOrOwn(lst.st_uid)) {
        return Status::InvalidArgument((last ? "cache directory " : "") + shown +
                                       " is a symbolic link owned by " + UserName(lst.st_uid) +
                                       kPlanted);
      }
      char target[PATH_MAX];
      ssize_t n = ::readlinkat(cur.get(), name.c_str(), target, sizeof target - 1);
      if (n < 0) return Status::FromErrno(errno, "readlink " + shown);
      target[n] = '\0';
      std::filesystem::path t(target);
      std::filesystem::path rest = t.is_absolute() ? t : here / t;
      for (size_t j = i + 1; j < parts.size(); ++j) rest /= parts[j];
      *restart = rest.lexically_normal();
      return UniqueFd();
    }
    if (!S_ISDIR(lst.st_mode)) {
      return Status::NotADirectory((last ? "cache directory " : "") + shown +
                                   " is not a directory");
    }
    // The cache directory is read (listed, statvfs); its parents need only be searchable.
    raw = ::openat(cur.get(), name.c_str(),
                   (last ? O_RDONLY : O_PATH) | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (raw < 0) {
      if (errno == ELOOP || errno == ENOTDIR) {
        return Status::InvalidArgument(shown + " changed while being opened" + kPlanted);
      }
      return Status::FromErrno(errno, "cannot open " + shown);
    }
    cur = UniqueFd(raw);
    MMFS_RETURN_IF_ERROR(CheckPathDir(cur.get(), shown, last, private_so_far, &shared));
    private_so_far = private_so_far && !shared;
    here = next;
  }
  restart->clear();
  return cur;
}

}  // namespace

bool InUserNamespace() { return ThisUidMap().in_user_namespace; }

Result<UniqueFd> OpenCacheRootDir(const std::string& dir) {
  if (dir.empty()) return Status::InvalidArgument("empty cache directory");
  std::filesystem::path path(dir);
  if (path.is_relative()) {
    std::error_code ec;
    std::filesystem::path cwd = std::filesystem::current_path(ec);
    if (ec) return Status::IoError("cache directory " + dir + ": no working directory: " + ec.message());
    path = cwd / path;
  }
  // Lexical ".." is what the kernel would do too: no level of the walk may be a link we do not
  // follow ourselves, and a followed link restarts the walk on its normalised target.
  path = path.lexically_normal();
  for (int hops = 0; hops <= kMaxLinks; ++hops) {
    std::filesystem::path restart;
    MMFS_ASSIGN_OR_RETURN(UniqueFd fd, WalkOnce(path, dir, &restart));
    if (restart.empty()) return fd;
    path = restart;
  }
  return Status::InvalidArgument("cache directory " + dir + ": more than " +
                                 std::to_string(kMaxLinks) + " symbolic links on its path");
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

namespace {

// The pid holding a flock on the file (device, inode), from /proc/locks; 0 if not found.
long LockHolder(const struct stat& st) {
  std::ifstream in("/proc/locks");
  std::string line;
  while (std::getline(in, line)) {
    // "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF" (a blocked waiter has "->" after "1:")
    std::istringstream fields(line);
    std::string id, kind, mode, access, where;
    long pid = 0;
    if (!(fields >> id >> kind) || kind == "->" || kind != "FLOCK") continue;
    if (!(fields >> mode >> access >> pid >> where)) continue;
    unsigned maj = 0, min = 0;
    unsigned long long ino = 0;
    if (std::sscanf(where.c_str(), "%x:%x:%llu", &maj, &min, &ino) != 3) continue;
    if (ino == st.st_ino && maj == major(st.st_dev) && min == minor(st.st_dev)) return pid;
  }
  return 0;
}

}  // namespace

Status LockCacheDir(int fd, const std::string& shown) {
  if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return Status::Ok();
  if (errno != EWOULDBLOCK) return Status::FromErrno(errno, "cannot lock the cache directory " + shown);
  std::string who = "another mmfs mount";
  struct stat st;
  if (::fstat(fd, &st) == 0) {
    long pid = LockHolder(st);
    if (pid > 0) who += " (pid " + std::to_string(pid) + ")";
  }
  return Status::InvalidArgument("the SSD cache " + shown + " is in use by " + who +
                                 " of the same dataset; give this mount its own --cache-dir");
}

}  // namespace mmfs::cache
