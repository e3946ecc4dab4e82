// mmfs umount: unmounts an mmfs mount, and only that. The mount table says what is at the path
// (a FUSE mount of subtype mmfs, or the overlayfs front of `mmfs mount --overlay`), and whose it
// is; anything else is refused with what it is, before any unmount is tried, so that root typing
// the wrong path cannot take away a tmpfs or a disk.

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>

#include "fs/base/mount_table.h"
#include "fs/core/line_pipe.h"
#include "fs/fuse/overlay_front.h"
#include "fs/fuse/unmount.h"
#include "tools/mmfs/commands.h"

namespace mmfs::cli {

namespace {

// The path as the mount table lists it. Its directory is resolved (symlinks, `..`); its last
// name is resolved only when it is a symlink (umount(8) follows one too): resolving the mount
// point itself would ask the mount, which answers ENOTCONN once its daemon died.
std::string MountTablePath(const std::string& given) {
  std::error_code ec;
  std::string path = std::filesystem::absolute(given, ec).string();
  if (ec) path = given;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  auto real = [](const std::string& p) -> std::optional<std::string> {
    char* r = ::realpath(p.c_str(), nullptr);
    if (r == nullptr) return std::nullopt;
    std::string out = r;
    std::free(r);
    return out;
  };
  struct stat st;
  const size_t slash = path.rfind('/');
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if ((::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) || base == "." || base == ".." ||
      base.empty()) {
    return real(path).value_or(path);
  }
  const std::string dir = slash == 0 ? "/" : path.substr(0, slash);
  std::optional<std::string> real_dir = real(dir);
  if (!real_dir) return path;
  return (*real_dir == "/" ? "" : *real_dir) + "/" + base;
}

// "a tmpfs", "an ext4".
std::string WithArticle(const std::string& word) {
  const bool vowel = !word.empty() && std::strchr("aeiouAEIOU", word[0]) != nullptr;
  return (vowel ? "an " : "a ") + word;
}

// "root", "alice (uid 1000)", "uid 1234".
std::string UserName(uid_t uid) {
  if (uid == 0) return "root";
  struct passwd pw;
  struct passwd* found = nullptr;
  char buf[4096];
  if (::getpwuid_r(uid, &pw, buf, sizeof buf, &found) == 0 && found != nullptr) {
    return std::string(found->pw_name) + " (uid " + std::to_string(uid) + ")";
  }
  return "uid " + std::to_string(uid);
}

// Why the caller may not unmount `mount` (empty: it may, or let the kernel decide). Root may
// unmount any mmfs mount; another user only a FUSE mount made under their own uid, which is
// what fusermount3 checks too; but its refusal would come without a reason.
std::string NotYours(const std::string& shown, const MountEntry& mount, bool overlay) {
  if (::geteuid() == 0) return "";
  if (overlay) {
    return shown + " is an mmfs --overlay mount, made by root; only root may unmount it";
  }
  std::optional<std::string> owner = MountOptionValue(mount.super_options, "user_id");
  if (!owner) return "";
  char* end = nullptr;
  errno = 0;
  unsigned long owner_uid = std::strtoul(owner->c_str(), &end, 10);
  if (errno != 0 || end == owner->c_str() || *end != '\0') return "";
  if (owner_uid == ::getuid()) return "";
  const std::string name = UserName(static_cast<uid_t>(owner_uid));
  if (owner_uid == 0) return shown + " is root's mmfs mount; only root may unmount it";
  return shown + " is the mmfs mount of " + name + "; only that user or root may unmount it";
}

}  // namespace

int RunUmount(const UmountArgs& args) {
  const std::string& shown = args.mountpoint;
  const std::string path = MountTablePath(args.mountpoint);
  // A stale mount (its daemon killed) answers stat with ENOTCONN but is in the table: the table,
  // not stat or statfs, says what is mounted.
  std::optional<MountEntry> mount = FindMount(path);
  if (!mount) {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) {
      PrintError("cannot unmount " + shown + ": " + std::strerror(errno));
    } else {
      PrintError(shown + " is not a mount point (nothing is mounted there)");
    }
    return 1;
  }
  const bool fuse = mount->fs_type == "fuse.mmfs";
  const bool overlay = fs::OverlayFront::IsFront(*mount);
  if (!fuse && !overlay) {
    const std::string what = mount->fs_type == "overlay"
                                 ? "an overlay mount not made by 'mmfs mount --overlay'"
                                 : WithArticle(mount->fs_type) + " mount";
    PrintError(shown + " is " + what + ", not an mmfs mount; refusing to unmount it");
    return 1;
  }
  if (std::string why = NotYours(shown, *mount, overlay); !why.empty()) {
    PrintError(why);
    return 1;
  }
  fs::DetachOptions detach;
  detach.lazy = args.lazy;
  detach.fuse_helper = fuse;  // fusermount3 unmounts FUSE mounts only
  detach.nofollow = true;     // `path` is what was checked above
  Status s = fs::DetachMount(path, detach);
  if (s.ok()) {
    if (overlay) {
      // An overlay made by a daemon that was killed: what it left under the run directory goes.
      const std::string run_dir = fs::LinePipe::DefaultParentDir();
      fs::OverlayFront::RemoveStale(run_dir);
      fs::LinePipe::RemoveStale(run_dir, "hint");
      fs::LinePipe::RemoveStale(run_dir, "control");
    }
    return 0;
  }
  // Who may unmount was checked above, so a refusal without an errno (fusermount3's) or EBUSY
  // means files are still open; -z detaches anyway.
  int err = s.sys_errno();
  bool busy = err == EBUSY || (err == 0 && !args.lazy);
  PrintError("could not unmount " + shown + ": " + s.message() +
             (busy ? " (files still open? 'mmfs umount -z' detaches it now and finishes when "
                     "they are closed)"
                   : ""));
  return 1;
}

}  // namespace mmfs::cli
