// DetachMount: the one way mmfs takes a mount away: the daemon on a signal (fuse_server.cc),
// `mmfs mount` clearing a stale mount whose daemon died, and `mmfs umount`.
//
// The order, and why:
//   1. umount2(2) directly (MNT_DETACH when lazy). One system call, no fork: the daemon calls
//      this from its signal thread while the FUSE loop threads run, and a root daemon needs no
//      helper binary. An unprivileged caller gets EPERM at once, with no side effect.
//   2. Only on EPERM, the setuid helper `fusermount3 -u [-z]`, which checks that the caller owns
//      the FUSE mount and then makes the same umount2 call. Any other umount2 error (EBUSY,
//      EINVAL: not a mount point) is final: the helper would fail the same way and only add a
//      second, confusing message.
// A mount that is not FUSE (the overlay front, which is root's) is never handed to the helper:
// fusermount3 refuses it, so `fuse_helper = false` stops after step 1.
//
// Ownership: nothing is kept; the call forks and reaps the helper itself. The helper gets the
// caller's stdin, stdout and stderr (its complaints are the caller's to see) and no other
// descriptor.
// Thread-safety: safe from any thread; everything the helper's child needs (argv, the pipe) is
// prepared before fork, so the child only calls async-signal-safe functions.
//
// HoldMountPoint / DetachHeldMount: the same unmount for `mmfs umount`, which first checks what is
// mounted at a path the user gave. Checking one path and unmounting it by name again would let
// whoever owns a directory on that path swap it for a symlink in between and have root unmount
// something else (fusermount's CVE-2010-3879); UMOUNT_NOFOLLOW guards only the last name. So the
// parent directory is opened once, and its mount-table name, the mount ID check and umount2 all
// go through that descriptor. A mount point cannot be renamed or removed while mounted, so what
// was verified under the held directory is what umount2 takes away.
#pragma once

#include <cstdint>
#include <string>

#include "base/file_util.h"
#include "base/status.h"

namespace mmfs::fs {

// The mount table's type of an mmfs FUSE mount: "fuse." and the subtype the server sets. What
// `mmfs umount` and the auto_unmount watcher require before they unmount anything.
inline constexpr char kMmfsFuseType[] = "fuse.mmfs";

// "a tmpfs", "an ext4": a mount table type for "X is a tmpfs mount, not an mmfs mount".
std::string FsTypeWithArticle(const std::string& fs_type);

struct DetachOptions {
  bool lazy = true;         // MNT_DETACH / -z: open files stay readable, the mount goes at once
  bool fuse_helper = true;  // fall back to fusermount3 on EPERM (FUSE mounts only)
  bool quiet = false;       // the helper's stderr to /dev/null (its complaints are expected)
  // UMOUNT_NOFOLLOW: a symlink at `mountpoint` is not followed, so what goes is the mount the
  // caller found at that path in the mount table, not one a link swapped in meanwhile points to.
  bool nofollow = false;
};

// Detaches the mount at `mountpoint`. On failure the Status says which step failed; an umount2
// failure keeps its errno (sys_errno()), e.g. EBUSY for a busy mount without `lazy`.
Status DetachMount(const std::string& mountpoint, const DetachOptions& options = {});

// A mount point held by its parent directory. Owns `dir`; movable, not copyable.
struct HeldMountPoint {
  UniqueFd dir;            // O_PATH of the parent directory, opened once
  std::string name;        // the last name, only ever looked up in `dir` ("." for "/")
  std::string table_path;  // the mount table's name for it: `dir`'s own path + "/" + name
};

// Opens the parent of `path` (made absolute, trailing slashes dropped; `.`, `..` or a symlink as
// the last name are resolved first, as umount(8) does, since they do not name a mount point
// themselves). The last name is otherwise left alone: resolving it would ask the mount, which
// answers ENOTCONN once its daemon died. Fails with the errno of the open (ENOENT: the directory
// is missing).
Result<HeldMountPoint> HoldMountPoint(const std::string& path);

// The ID of the mount at `held` (the mount table's first field), from statx without asking the
// filesystem: a FUSE mount whose daemon hangs or died must not hang the caller.
Result<int64_t> HeldMountId(const HeldMountPoint& held);

// Unmounts what is at `held` if its mount ID is `expected_mount_id` (the table entry the caller
// checked); otherwise fails with nothing unmounted. umount2 gets the held directory's name with
// UMOUNT_NOFOLLOW; on EPERM (and `fuse_helper`), fusermount3 -u gets `table_path` and makes its
// own check. `nofollow` is implied. Changes the working directory during the call and restores
// it: for single-threaded callers (the command line), not the daemon.
Status DetachHeldMount(const HeldMountPoint& held, int64_t expected_mount_id,
                       const DetachOptions& options);

}  // namespace mmfs::fs
