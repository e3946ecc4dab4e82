// AutoUnmount: `-o auto_unmount` for root's mounts when mmfs is linked with libfuse 3.17 or
// later (the io_uring build): the mount goes away when the daemon dies in any way, kill -9
// included.
//
// Why mmfs does it itself: from 3.17 on, libfuse mounts directly as root and then starts
// `fusermount3 --auto-unmount` as the watcher, an option Debian 12's fusermount3 (3.14) does not
// know; it exits at once, libfuse does not notice, and the mount would be left behind. (With
// libfuse 3.14, and for every non-root mount, libfuse and fusermount3 do it as before.)
//
// The watcher is this binary started again (`mmfs __auto-unmount MNT MOUNT_ID`, in a session of
// its own) holding the read end of a pipe whose write end only the daemon holds: the read ends
// when the daemon has exited, however. Then, as `mmfs umount` does, it holds MNT's parent,
// checks that the mount there is still the one the daemon made (its mount ID) and an mmfs mount
// (the table's type fuse.mmfs: run by hand, the command must not detach a tmpfs), and detaches
// it lazily; a daemon that unmounted on its way out left another mount ID, and nothing is done.
// It holds none of the daemon's or the caller's descriptors but the pipe: its stdin, stdout and
// stderr are /dev/null (it outlives `mmfs mount`, whose caller may wait for the end of its
// output), and what goes wrong is also sent to syslog.
//
// Thread-safety: StartAutoUnmountWatcher may run while other threads do (posix_spawn; every
// descriptor it makes is close-on-exec). RunAutoUnmountWatcher is a process's main function.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace mmfs::fs {

// Whether an auto_unmount mount needs the daemon's own watcher: root, a libfuse of 3.17 or later.
bool NeedsOwnAutoUnmount();

// Starts the watcher for the FUSE mount at `mountpoint` (made by this process; `mount_id` from
// the mount table: nothing here looks at the mount itself, which answers no request until the
// loop runs). The pipe's write end stays open, close-on-exec, until the process ends.
Status StartAutoUnmountWatcher(const std::string& mountpoint, int64_t mount_id);

// The watcher (argv: MNT MOUNT_ID, the pipe's read end on descriptor 3); returns the exit code.
int RunAutoUnmountWatcher(const std::string& mountpoint, const std::string& mount_id);

inline constexpr const char* kAutoUnmountCommand = "__auto-unmount";

}  // namespace mmfs::fs
