#include "fs/fuse/auto_unmount.h"

#define FUSE_USE_VERSION 312
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <signal.h>
#include <spawn.h>
#include <syslog.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "base/mount_table.h"
#include "fs/fuse/unmount.h"

extern char** environ;

namespace mmfs::fs {

namespace {
constexpr int kPipeFd = 3;  // where the watcher finds the read end
}  // namespace

bool NeedsOwnAutoUnmount() {
  return FUSE_VERSION >= FUSE_MAKE_VERSION(3, 17) && ::geteuid() == 0;
}

Status StartAutoUnmountWatcher(const std::string& mountpoint, int64_t mount_id) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Status::FromErrno(errno, "pipe for auto_unmount");
  UniqueFd read_end(fds[0]);
  std::vector<std::string> args = {"mmfs", kAutoUnmountCommand, mountpoint,
                                   std::to_string(mount_id)};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // The watcher outlives the command that mounted: a descriptor of the caller's it kept (the
  // stderr of `out=$(mmfs mount ...)`, a pipe of ssh or of a subprocess) would keep the caller
  // waiting for its end until the mount goes. It gets /dev/null for all three and the pipe;
  // what it has to say goes to syslog too (RunAutoUnmountWatcher).
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, read_end.get(), kPipeFd);  // dup2 clears CLOEXEC
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addclosefrom_np(&actions, kPipeFd + 1);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    ::close(fds[1]);
    return Status::FromErrno(rc, "starting the auto_unmount watcher");
  }
  // Not reaped: it outlives the daemon by design, and init reaps it then. The write end is left
  // open on purpose (close-on-exec, so no other child holds it): the process's end closes it.
  return Status::Ok();
}

namespace {

// To stderr (a terminal when run by hand; /dev/null when the daemon started it) and to syslog,
// where a daemonized mount's own log goes by default.
void Complain(const std::string& message) {
  std::fprintf(stderr, "mmfs %s: %s\n", kAutoUnmountCommand, message.c_str());
  ::openlog("mmfs", LOG_PID, LOG_DAEMON);
  ::syslog(LOG_ERR, "%s: %s", kAutoUnmountCommand, message.c_str());
  ::closelog();
}

}  // namespace

int RunAutoUnmountWatcher(const std::string& mountpoint, const std::string& mount_id) {
  // Nothing of the daemon's but the pipe: a descriptor it leaked (the FUSE device) would keep
  // the connection alive after the daemon's death.
  ::close_range(kPipeFd + 1, ~0U, 0);
  ::setsid();  // not stopped with the daemon's terminal or process group
  ::signal(SIGHUP, SIG_IGN);
  ::signal(SIGINT, SIG_IGN);
  char byte;
  for (;;) {
    const ssize_t n = ::read(kPipeFd, &byte, 1);
    if (n == 0) break;  // the daemon has exited
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return 1;
  }
  int64_t expected = 0;
  try {
    expected = std::stoll(mount_id);
  } catch (...) {
    Complain("not a mount ID: " + mount_id);
    return 2;
  }
  auto held = HoldMountPoint(mountpoint);
  if (!held.ok()) return 0;  // the directory is gone: so is the mount
  auto id = HeldMountId(*held);
  if (!id.ok() || *id != expected) return 0;  // the daemon unmounted on its way out
  // Only an mmfs mount, as `mmfs umount` checks: this command can be run by hand, by root, with
  // any mount ID, and must not take a tmpfs or a disk away.
  std::optional<MountEntry> entry;
  for (MountEntry& e : ReadMountTable()) {
    if (e.mount_id == expected) entry = std::move(e);
  }
  if (!entry) return 0;  // gone meanwhile
  if (entry->fs_type != kMmfsFuseType) {
    Complain(held->table_path + " is " + FsTypeWithArticle(entry->fs_type) +
             " mount, not an mmfs mount; refusing to unmount it");
    return 1;
  }
  Status s = DetachHeldMount(*held, expected,
                             DetachOptions{.lazy = true, .fuse_helper = false, .quiet = true});
  if (!s.ok()) {
    Complain("auto_unmount of " + mountpoint + " after the daemon ended: " + s.message());
    return 1;
  }
  return 0;
}

}  // namespace mmfs::fs
