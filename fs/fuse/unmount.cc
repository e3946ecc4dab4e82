#include "fs/fuse/unmount.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "base/file_util.h"

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
    // Nothing else of the caller's (the daemon's /dev/fuse, a shard): close-on-exec, so that the
    // pipe still reports a failed exec.
    ::close_range(STDERR_FILENO + 1, ~0U, CLOSE_RANGE_CLOEXEC);
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

std::string FsTypeWithArticle(const std::string& fs_type) {
  const bool vowel = !fs_type.empty() && std::strchr("aeiouAEIOU", fs_type[0]) != nullptr;
  return (vowel ? "an " : "a ") + fs_type;
}

Status DetachMount(const std::string& mountpoint, const DetachOptions& options) {
  const int flags = (options.lazy ? MNT_DETACH : 0) | (options.nofollow ? UMOUNT_NOFOLLOW : 0);
  if (::umount2(mountpoint.c_str(), flags) == 0) return Status::Ok();
  int err = errno;
  if (err != EPERM || !options.fuse_helper) return Status::FromErrno(err, "umount2");
  return RunFusermount(mountpoint, options);
}

Result<HeldMountPoint> HoldMountPoint(const std::string& given) {
  std::error_code ec;
  std::string path = std::filesystem::absolute(given, ec).string();
  if (ec) path = given;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  size_t slash = path.rfind('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  struct stat st;
  if (name.empty() || name == "." || name == ".." ||
      (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode))) {
    // Resolved by name, once: the parent opened below is then what the name meant, and all
    // later steps go through it.
    if (char* real = ::realpath(path.c_str(), nullptr)) {
      path = real;
      std::free(real);
      slash = path.rfind('/');
      name = path.substr(slash + 1);
    }
  }
  HeldMountPoint held;
  const std::string dir = slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
  held.name = name.empty() ? "." : name;  // "/" itself: the root's own "."
  held.dir.Reset(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!held.dir.valid()) return Status::FromErrno(errno, "open " + dir);
  // The directory's name as the kernel has it for the open descriptor: what the mount table
  // lists below it, whatever the path's links pointed to before the open.
  char real_dir[PATH_MAX];
  const std::string self = "/proc/self/fd/" + std::to_string(held.dir.get());
  ssize_t n = ::readlink(self.c_str(), real_dir, sizeof real_dir - 1);
  if (n <= 0) return Status::FromErrno(n < 0 ? errno : ENOENT, "readlink " + self);
  real_dir[n] = '\0';
  const std::string base = real_dir;
  if (held.name == ".") {
    held.table_path = base;
  } else {
    held.table_path = (base == "/" ? "" : base) + "/" + held.name;
  }
  return held;
}

Result<int64_t> HeldMountId(const HeldMountPoint& held) {
  // An empty mask: FUSE answers it from the inode without a request, and without the
  // permission check that refuses other users (root included) a mount made without
  // allow_other; the mount ID comes from the VFS in any case.
  struct statx stx {};
  if (::statx(held.dir.get(), held.name.c_str(),
              AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_STATX_DONT_SYNC, 0, &stx) != 0) {
    return Status::FromErrno(errno, "statx " + held.table_path);
  }
  if ((stx.stx_mask & STATX_MNT_ID) == 0) {
    return Status::NotSupported("statx gave no mount ID for " + held.table_path +
                                " (Linux 5.8 or later is needed)");
  }
  return static_cast<int64_t>(stx.stx_mnt_id);
}

Status DetachHeldMount(const HeldMountPoint& held, int64_t expected_mount_id,
                       const DetachOptions& options) {
  UniqueFd old_cwd(::open(".", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!old_cwd.valid()) return Status::FromErrno(errno, "open the working directory");
  if (::fchdir(held.dir.get()) != 0) return Status::FromErrno(errno, "chdir " + held.table_path);
  int err = 0;
  Result<int64_t> id = HeldMountId(held);
  if (id.ok() && *id == expected_mount_id) {
    const int flags = (options.lazy ? MNT_DETACH : 0) | UMOUNT_NOFOLLOW;
    if (::umount2(held.name.c_str(), flags) != 0) err = errno;
  }
  // Restored before anything else: fusermount3 below resolves its path on its own.
  const int restore = ::fchdir(old_cwd.get()) == 0 ? 0 : errno;
  if (!id.ok()) return id.status();
  if (*id != expected_mount_id) {
    return Status::IoError("the mount at " + held.table_path +
                           " changed while it was checked (mount ID " + std::to_string(*id) +
                           ", the table said " + std::to_string(expected_mount_id) +
                           "); nothing unmounted");
  }
  if (err == 0) return Status::Ok();
  if (restore != 0) return Status::FromErrno(restore, "chdir back to the working directory");
  if (err != EPERM || !options.fuse_helper) return Status::FromErrno(err, "umount2");
  return RunFusermount(held.table_path, options);
}

}  // namespace mmfs::fs
