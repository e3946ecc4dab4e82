// FuseServer: owns one FUSE session: creates it, mounts it, runs the multithreaded request loop
// until the kernel ends the session, and unmounts on the way out. SIGINT/SIGTERM/SIGHUP detach
// the mount lazily: readers holding files open keep reading them, and the loop ends when the
// last one closes (at once when none is open).
//
// Start-up order follows libfuse's examples: fuse_session_new, signal handlers, mount, loop;
// teardown unwinds in reverse. Mount finds the new mount's device so that INIT can raise its
// read-ahead (the cap on READ size); a helper thread checks the mount table and reports it
// mounted. Neither touches the mount itself (a daemon's request to its own mount can deadlock it
// if it is killed meanwhile).
//
// Requests come over /dev/fuse or io_uring (transport.h): Mount chooses, tells the Filesystem's
// stats, and asks libfuse for the ring with `-o io_uring`.
//
// Thread-safety: one thread calls Mount and Serve; callbacks run on libfuse's worker threads.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/file_util.h"
#include "base/status.h"
#include "fs/fuse/fuse_ops.h"
#include "fs/fuse/overlay_front.h"
#include "fs/fuse/transport.h"

namespace mmfs::fs {

struct MountOptions {
  std::string mountpoint;
  std::string fsname;                   // shown in /proc/mounts ("mmfs:/data/train.mmfs")
  std::vector<std::string> fuse_options;  // passed to libfuse as -o (allow_other, ...)
  bool debug = false;                   // libfuse request tracing
  unsigned max_threads = 16;
  unsigned read_ahead_kb = 1024;        // 0 leaves the kernel default (128)
  // Stack a read-only overlayfs on the FUSE mount (overlay_front.h); needs root.
  bool overlay_front = false;
  // How requests reach the daemon (transport.h); the choice is made by Mount, which refuses
  // `uring` when the library or the kernel lacks it.
  Transport transport = Transport::kAuto;
  bool remote_origin = false;  // served from a URL: auto keeps /dev/fuse (transport.h)
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

  // Where the FUSE mount is: the mount point, or the overlay front's directory.
  const std::string& FuseMountpoint() const;

 private:
  FuseServer() = default;
  void WaitReady(const std::function<void(const Status&)>& on_ready);
  Status InstallSignalHandlers();
  void WatchSignals();  // on its own thread while Serve runs
  // Detaches the mount lazily (DetachMount, fs/fuse/unmount.h); the session ends when
  // the last open file is closed.
  void Detach();

  // On its own thread while Serve runs, with an overlay front: ends the session when the
  // overlay is unmounted (`umount MNT`), as fusermount3 -u does for a plain FUSE mount.
  void WatchOverlay();

  MountOptions options_;
  FuseOpsConfig* config_ = nullptr;  // not owned
  std::unique_ptr<OverlayFront> front_;  // with options_.overlay_front
  std::atomic<bool> front_mounted_{false};
  std::atomic<bool> start_failed_{false};  // WaitReady found a problem: Serve fails
  UniqueFd overlay_stop_;  // an eventfd that ends WatchOverlay
  struct fuse_session* session_ = nullptr;  // owned
  bool signals_installed_ = false;
  bool mounted_ = false;
  UniqueFd signal_read_, signal_write_;  // the handler writes signal numbers; 0 ends the watch
  std::atomic<int> stop_signal_{0};
  // With config_->hold_once: made in Serve before any other thread starts, destroyed after they
  // are joined. Stopped (Stop is idempotent and thread-safe) before fuse_session_exit, while
  // request threads still answer the READs an invalidation in progress may wait for.
  std::unique_ptr<PageCacheDropper> dropper_;
  // With config_->push_prefetched: made and stopped like the dropper, for the same reason (a
  // push in progress may wait on a page that a READ holds).
  std::unique_ptr<PagePusher> pusher_;
};

}  // namespace mmfs::fs
