#include "fs/fuse/unmount.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "fs/base/file_util.h"

namespace mmfs::fs {

namespace {

// Runs fusermount3 -u [-z] MNT and waits for it. An exec failure comes back through a CLOEXEC
// pipe (the child writes its errno; a successful exec closes the pipe with nothing written), so
// "no fusermount3 installed" is told apart from "fusermount3 refused".
Status RunFusermount(const std::string& mountpoint, const DetachOptions& options) {
  std::string prog = "fusermount3", unmount = "-u", lazy = "-z", mnt = mountpoint;
  std::vector<char*> argv = {prog.data(), unmount.data()};
  if (options.lazy) argv.push_back(lazy.data());
  argv.push_back(mnt.data());
  argv.push_back(nullptr);
  int exec_pipe[2];
  if (::pipe2(exec_pipe, O_CLOEXEC) != 0) return Status::FromErrno(errno, "pipe");
  UniqueFd exec_read(exec_pipe[0]), exec_write(exec_pipe[1]);
  // Opened before fork: open(2) after fork in a threaded process is fine, but a failure there
  // would have nowhere to go.
  UniqueFd devnull(options.quiet ? ::open("/dev/null", O_WRONLY | O_CLOEXEC) : -1);
  pid_t pid = ::fork();
  if (pid < 0) return Status::FromErrno(errno, "fork");
  if (pid == 0) {
    if (devnull.valid()) ::dup2(devnull.get(), STDERR_FILENO);
    ::execvp(argv[0], argv.data());
    int err = errno;
    (void)!::write(exec_write.get(), &err, sizeof err);
    ::_exit(127);
  }
  exec_write.Reset();
  int exec_errno = 0;
  ssize_t n;
  do {
    n = ::read(exec_read.get(), &exec_errno, sizeof exec_errno);
  } while (n < 0 && errno == EINTR);
  int status = 0;
  pid_t waited;
  do {
    waited = ::waitpid(pid, &status, 0);
  } while (waited < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof exec_errno)) {
    return Status::FromErrno(exec_errno, "cannot run fusermount3 (install the fuse3 package)");
  }
  if (waited < 0) return Status::FromErrno(errno, "waitpid fusermount3");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return Status::IoError(WIFEXITED(status)
                               ? "fusermount3 failed (exit status " +
                                     std::to_string(WEXITSTATUS(status)) + ")"
                               : "fusermount3 was killed");
  }
  return Status::Ok();
}

}  // namespace

Status DetachMount(const std::string& mountpoint, const DetachOptions& options) {
  const int flags = (options.lazy ? MNT_DETACH : 0) | (options.nofollow ? UMOUNT_NOFOLLOW : 0);
  if (::umount2(mountpoint.c_str(), flags) == 0) return Status::Ok();
  int err = errno;
  if (err != EPERM || !options.fuse_helper) return Status::FromErrno(err, "umount2");
  return RunFusermount(mountpoint, options);
}

}  // namespace mmfs::fs
