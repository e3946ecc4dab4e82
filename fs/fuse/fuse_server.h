// FuseServer: owns one FUSE session: creates it, mounts it, runs the multithreaded request loop
// until unmount or SIGINT/SIGTERM/SIGHUP, and unmounts on the way out.
//
// Start-up order follows libfuse's examples: fuse_session_new, signal handlers, mount, loop;
// teardown unwinds in reverse. A helper thread finds the new mount in the mount table, raises its
// read-ahead (the cap on READ size) and reports it mounted; it never touches the mount itself
// (a daemon's request to its own mount can deadlock it if it is killed meanwhile).
//
// Thread-safety: one thread calls Mount and Serve; callbacks run on libfuse's worker threads.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fs/base/status.h"
#include "fs/fuse/fuse_ops.h"

namespace mmfs::fs {

struct MountOptions {
  std::string mountpoint;
  std::string fsname;                   // shown in /proc/mounts ("mmfs:/data/train.mmfs")
  std::vector<std::string> fuse_options;  // passed to libfuse as -o (allow_other, ...)
  bool debug = false;                   // libfuse request tracing
  unsigned max_threads = 16;
  unsigned read_ahead_kb = 1024;        // 0 leaves the kernel default (128)
};

class FuseServer {
 public:
  // Creates the session and mounts it. `config` must outlive the server.
  static Result<std::unique_ptr<FuseServer>> Mount(FuseOpsConfig* config,
                                                   const MountOptions& options);
  ~FuseServer();
  FuseServer(const FuseServer&) = delete;
  FuseServer& operator=(const FuseServer&) = delete;

  // Serves requests until unmounted or signalled. `on_ready` is called once, from another
  // thread, with OK once the mount is in place, or with the reason it is not.
  Status Serve(const std::function<void(const Status&)>& on_ready);

 private:
  FuseServer() = default;
  void WaitReady(const std::function<void(const Status&)>& on_ready);

  MountOptions options_;
  struct fuse_session* session_ = nullptr;  // owned
  bool signals_installed_ = false;
  bool mounted_ = false;
};

}  // namespace mmfs::fs
