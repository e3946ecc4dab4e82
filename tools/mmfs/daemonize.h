// What makes `mmfs mount` a well-behaved daemon, apart from what it serves: the fork with a
// readiness pipe, where its log goes, systemd's readiness protocol and the process's limits.
//
// The parent validates everything it can before it forks (cmd_mount.cc), so that errors reach
// the user's terminal; the child mounts and serves and tells the parent, once, through a pipe
// when the mount answers requests ("ready") or why it could not. Only then does the parent exit,
// and from then on nothing mmfs left running holds a descriptor of the caller's: `out=$(mmfs
// mount ...)`, a pipe to `tee`, ssh or Python's subprocess see the end of its output at once.
//
// Thread-safety: called from the main thread before any other thread exists (ForkDaemon must be:
// a fork copies only the calling thread).
#pragma once

#include <functional>
#include <string>

namespace mmfs::cli {

// The message a serving daemon reports when its mount answers; anything else is an error.
inline constexpr char kReady[] = "ready";
// Called exactly once by a daemon: kReady, or why it could not serve.
using ReadinessReport = std::function<void(const std::string&)>;

// Forks. The child points stdin at /dev/null, starts a new session, changes to /, calls
// `in_child` (logging set-up) and returns `serve(report)`; its `report` hands the message to the
// parent and then points stdout and stderr at /dev/null too (detached from the terminal only
// then, so earlier errors still reach it). The parent waits for that message and returns 0 once the mount at `mountpoint`
// answers statfs, else prints the daemon's message (or that it died) and returns 1.
int ForkDaemon(const std::string& mountpoint, const std::function<void()>& in_child,
               const std::function<int(const ReadinessReport&)>& serve);

// The descriptors the caller passed beyond stdin, stdout and stderr (a shell's, the lock file
// `flock(1)` holds, a CI runner's pipe): kept by a daemon, or by a helper it starts
// (fusermount3, the auto_unmount watcher), they would stay open as long as the mount, and
// whoever waits for their end would wait that long. `daemon`: they are closed; else (a mount in
// the foreground, the caller's own process) they are only kept from the helpers it starts
// (close-on-exec). REQUIRES: nothing of mmfs's own is open yet (the start of `mmfs mount`).
void DropInheritedDescriptors(bool daemon);

// Logs to `log_file` when given, else to syslog when daemonized, else to stderr.
void SetUpLogging(const std::string& log_file, bool daemonized);

// systemd's readiness protocol (sd_notify(3)) for Type=notify units running `mmfs mount -f`:
// one datagram to the socket named by $NOTIFY_SOCKET; nothing without it.
void NotifySystemd(const std::string& state);

// Many readers keep many files open and the SSD tier opens entries per read: run with the hard
// limit of descriptors, not the soft default of 1024.
void RaiseFileLimit();

// Fewer glibc arenas and a fixed mmap threshold, so that the memory of evicted blobs goes back
// at once (used with a memory budget; see daemonize.cc).
void TuneAllocator();

}  // namespace mmfs::cli
