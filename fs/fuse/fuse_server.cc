#include "fs/fuse/fuse_server.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <chrono>
#include <spdlog/spdlog.h>
#include <string>
#include <thread>

#include "fs/base/file_util.h"

namespace mmfs::fs {

Result<std::unique_ptr<FuseServer>> FuseServer::Mount(FuseOpsConfig* config,
                                                      const MountOptions& options) {
  std::unique_ptr<FuseServer> server(new FuseServer());
  server->options_ = options;
  struct stat st;
  if (::stat(options.mountpoint.c_str(), &st) != 0) {
    return Status::FromErrno(errno, "mount point " + options.mountpoint);
  }
  server->unmounted_dev_ = st.st_dev;

  std::vector<std::string> args = {"mmfs"};
  std::string opts = "ro,default_permissions,subtype=mmfs,fsname=" + options.fsname;
  for (const std::string& o : options.fuse_options) opts += "," + o;
  args.push_back("-o");
  args.push_back(opts);
  if (options.debug) args.push_back("-d");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  fuse_args fargs = FUSE_ARGS_INIT(static_cast<int>(argv.size()), argv.data());
  server->session_ =
      fuse_session_new(&fargs, &FuseOperations(), sizeof(fuse_lowlevel_ops), config);
  fuse_opt_free_args(&fargs);
  if (server->session_ == nullptr) {
    return Status::InvalidArgument("libfuse refused the mount options '" + opts + "'");
  }
  if (fuse_set_signal_handlers(server->session_) != 0) {
    return Status::IoError("cannot install signal handlers");
  }
  server->signals_installed_ = true;
  if (fuse_session_mount(server->session_, options.mountpoint.c_str()) != 0) {
    return Status::IoError("cannot mount at " + options.mountpoint +
                           " (see the message above; is /dev/fuse usable and fusermount3 "
                           "installed?)");
  }
  server->mounted_ = true;
  return server;
}

FuseServer::~FuseServer() {
  if (session_ == nullptr) return;
  if (mounted_) fuse_session_unmount(session_);
  if (signals_installed_) fuse_remove_signal_handlers(session_);
  fuse_session_destroy(session_);
}

void FuseServer::WaitReady(const std::function<void(const Status&)>& on_ready) {
  struct stat st;
  // Blocks until INIT is done and the root's attributes are served by the loop.
  if (::stat(options_.mountpoint.c_str(), &st) != 0) {
    on_ready(Status::FromErrno(errno, "checking the new mount at " + options_.mountpoint));
    return;
  }
  if (st.st_dev == unmounted_dev_) {
    on_ready(Status::IoError("the mount at " + options_.mountpoint + " went away before serving"));
    return;
  }
  if (options_.read_ahead_kb > 0) {
    // READ requests are capped by the mount's read-ahead; raise it so most files take one READ.
    std::string path = "/sys/class/bdi/" + std::to_string(major(st.st_dev)) + ":" +
                       std::to_string(minor(st.st_dev)) + "/read_ahead_kb";
    std::string value = std::to_string(options_.read_ahead_kb);
    auto fd = OpenFile(path, O_WRONLY);
    if (!fd.ok() || ::write(fd->get(), value.data(), value.size()) < 0) {
      spdlog::info("could not raise read-ahead via {} (needs root); READs stay at 128 KiB", path);
    }
  }
  on_ready(Status::Ok());
}

Status FuseServer::Serve(const std::function<void(const Status&)>& on_ready) {
  std::thread ready_thread([this, &on_ready] { WaitReady(on_ready); });
  fuse_loop_config* cfg = fuse_loop_cfg_create();
  fuse_loop_cfg_set_max_threads(cfg, options_.max_threads);
  fuse_loop_cfg_set_clone_fd(cfg, 0);
  int rc = fuse_session_loop_mt(session_, cfg);
  fuse_loop_cfg_destroy(cfg);
  // Unmount before joining: a readiness check still waiting on the mount then returns.
  fuse_session_unmount(session_);
  mounted_ = false;
  ready_thread.join();
  if (rc != 0 && rc != SIGINT && rc != SIGTERM && rc != SIGHUP) {
    return Status::IoError("FUSE session ended with error " + std::to_string(rc));
  }
  if (rc != 0) spdlog::info("signal {} received, unmounted {}", rc, options_.mountpoint);
  return Status::Ok();
}

}  // namespace mmfs::fs
