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
// Ownership: nothing is kept; the call forks and reaps the helper itself.
// Thread-safety: safe from any thread; everything the helper's child needs (argv, the pipe) is
// prepared before fork, so the child only calls async-signal-safe functions.
#pragma once

#include <string>

#include "fs/base/status.h"

namespace mmfs::fs {

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

}  // namespace mmfs::fs
