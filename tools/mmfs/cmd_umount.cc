// mmfs umount: unmounts an mmfs mount, and only that. The mount table says what is at the path
// (a FUSE mount of subtype mmfs, or the overlayfs front of `mmfs mount --overlay`), and whose it
// is; anything else is refused with what it is, before any unmount is tried, so that root typing
// the wrong path cannot take away a tmpfs or a disk. The mount checked is the one unmounted: both
// go through the parent directory opened once, and its mount ID (fs/fuse/unmount.h).

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "base/mount_table.h"
#include "fs/control/line_pipe.h"
#include "fs/fuse/overlay_front.h"
#include "fs/fuse/unmount.h"
#include "tools/mmfs/commands.h"

namespace mmfs::cli {

namespace {

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
  // The parent directory is opened once; the table lookup, the mount ID check and umount2 all go
  // through it (fs/fuse/unmount.h), so a directory on the path swapped for a symlink meanwhile
  // cannot make this unmount anything but the mount checked below.
  Result<fs::HeldMountPoint> held = fs::HoldMountPoint(args.mountpoint);
  if (!held.ok()) {
    const int err = held.status().sys_errno();
    PrintError("cannot unmount " + shown + ": " +
               (err != 0 ? std::string(std::strerror(err)) : held.status().message()));
    return 1;
  }
  // A stale mount (its daemon killed) answers stat with ENOTCONN but is in the table: the table,
  // not stat or statfs, says what is mounted.
  std::optional<MountEntry> mount = FindMount(held->table_path);
  if (!mount) {
    struct stat st;
    if (::fstatat(held->dir.get(), held->name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      PrintError("cannot unmount " + shown + ": " + std::strerror(errno));
    } else {
      PrintError(shown + " is not a mount point (nothing is mounted there)");
    }
    return 1;
  }
  // What the type proves: that the mount was made as an mmfs one, so root's mistake (a wrong
  // path, a tmpfs or a disk there) is refused. What it does not: that mmfs made it. Any user may
  // mount their own FUSE program with `-o subtype=mmfs`, and root may then unmount it; root could
  // have unmounted it anyway, and another user only unmounts their own (NotYours, fusermount3).
  const bool fuse = mount->fs_type == fs::kMmfsFuseType;
  const bool overlay = fs::OverlayFront::IsFront(*mount);
  if (!fuse && !overlay) {
    const std::string what = mount->fs_type == "overlay"
                                 ? "an overlay mount not made by 'mmfs mount --overlay'"
                                 : fs::FsTypeWithArticle(mount->fs_type) + " mount";
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
  // Only if the mount under the held directory is still the table entry checked above.
  Status s = fs::DetachHeldMount(*held, mount->mount_id, detach);
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
