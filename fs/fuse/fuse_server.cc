#include "fs/fuse/fuse_server.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/mount.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <spdlog/spdlog.h>
#include <string>
#include <thread>

#include "base/file_util.h"
#include "base/mount_table.h"
#include "fs/control/line_pipe.h"
#include "fs/fuse/auto_unmount.h"
#include "fs/fuse/unmount.h"

namespace mmfs::fs {

Result<std::unique_ptr<FuseServer>> FuseServer::Mount(FuseOpsConfig* config,
                                                      const MountOptions& options) {
  std::unique_ptr<FuseServer> server(new FuseServer());
  server->options_ = options;
  struct stat st;
  if (::stat(options.mountpoint.c_str(), &st) != 0) {
    return Status::FromErrno(errno, "mount point " + options.mountpoint);
  }

  std::vector<std::string> args = {"mmfs"};
  std::string opts = "ro,default_permissions,subtype=mmfs,fsname=" + options.fsname;
  bool own_auto_unmount = false;
  for (const std::string& o : options.fuse_options) {
    if (o == "auto_unmount" && NeedsOwnAutoUnmount()) {
      own_auto_unmount = true;  // auto_unmount.h: this libfuse's watcher would not start
      continue;
    }
    opts += "," + o;
  }
  // Last, so that no earlier word (suid, dev) undoes them: a dataset is data, and root's mount
  // must never run a file as its owner or open a device through it, whatever its index says.
  opts += ",nosuid,nodev";
  // The overlay serves every user (overlay_front.h); its control directory link must too.
  if (options.overlay_front && opts.find("allow_other") == std::string::npos) {
    opts += ",allow_other";
  }
  args.push_back("-o");
  args.push_back(opts);
  MMFS_ASSIGN_OR_RETURN(
      TransportChoice transport,
      ChooseTransport(options.transport, kLibraryHasRing,
                      ReadKernelRingOffer(), options.remote_origin));
  config->ring = transport.ring;
  if (transport.ring) {
    args.push_back("-o");
    args.push_back("io_uring");
  }
  config->fs->metrics().SetTransport(transport.ring, transport.why);
  spdlog::info("requests over {}", transport.why);
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
  config->session = server->session_;
  server->config_ = config;
  if (options.overlay_front) {
    if (::geteuid() != 0) {
      return Status::InvalidArgument("--overlay needs root (it mounts an overlayfs)");
    }
    MMFS_ASSIGN_OR_RETURN(server->front_,
                          OverlayFront::Create(LinePipe::DefaultParentDir(),
                                               options.mountpoint, options.fsname));
    int stop = ::eventfd(0, EFD_CLOEXEC);
    if (stop < 0) return Status::FromErrno(errno, "eventfd");
    server->overlay_stop_.Reset(stop);
  }
  MMFS_RETURN_IF_ERROR(server->InstallSignalHandlers());
  const std::string& fuse_at = server->FuseMountpoint();
  if (fuse_session_mount(server->session_, fuse_at.c_str()) != 0) {
    return Status::IoError("cannot mount at " + fuse_at +
                           " (see the message above; is /dev/fuse usable and fusermount3 "
                           "installed?)");
  }
  server->mounted_ = true;
  // Known only now that the mount exists; used when the loop (Serve) answers INIT. A mount that
  // cannot be found cannot be shown to be nosuid,nodev, so it is not served either.
  // Unmounted by the destructor, before any request is answered.
  std::optional<MountEntry> mount = FindMount(fuse_at);
  if (!mount) {
    return Status::IoError("the mount at " + fuse_at + " is not in the mount table under that "
                           "name (a symlink in the path?), so its nosuid,nodev flags cannot be "
                           "checked; refusing to serve it");
  }
  if (!HasMountOption(mount->mount_options, "nosuid") ||
      !HasMountOption(mount->mount_options, "nodev")) {
    return Status::IoError("the mount at " + fuse_at + " came up with flags '" +
                           mount->mount_options + "', without nosuid,nodev; refusing to "
                           "serve it");
  }
  if (own_auto_unmount) {
    Status watch = StartAutoUnmountWatcher(fuse_at, mount->mount_id);
    if (!watch.ok()) {
      return Status::IoError("-o auto_unmount: " + watch.message() + "; refusing to serve a "
                             "mount that would outlive the daemon");
    }
  }
  config->read_ahead_kb = options.read_ahead_kb;
  config->read_ahead_sysfs_path = "/sys/class/bdi/" + mount->device + "/read_ahead_kb";
  return server;
}

namespace {
// The write end of the signal pipe; the handler only writes the signal number to it.
std::atomic<int> g_signal_fd{-1};

void OnStopSignal(int sig) {
  int fd = g_signal_fd.load();
  unsigned char b = static_cast<unsigned char>(sig);
  if (fd >= 0) (void)!::write(fd, &b, 1);
}
}  // namespace

Status FuseServer::InstallSignalHandlers() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return Status::FromErrno(errno, "pipe");
  signal_read_.Reset(fds[0]);
  signal_write_.Reset(fds[1]);
  g_signal_fd.store(fds[1]);
  struct sigaction sa {};
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    if (::sigaction(sig, &sa, nullptr) != 0) return Status::FromErrno(errno, "sigaction");
  }
  ::signal(SIGPIPE, SIG_IGN);
  signals_installed_ = true;
  return Status::Ok();
}

// On SIGINT/SIGTERM/SIGHUP: detach the mount lazily. With no file open the kernel ends the
// session at once; with files open their holders keep reading until they close them, then the
// kernel ends it. Either way the request loop then returns by itself.
void FuseServer::WatchSignals() {
  for (;;) {
    pollfd p = {signal_read_.get(), POLLIN, 0};
    if (::poll(&p, 1, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    unsigned char sig = 0;
    if (::read(signal_read_.get(), &sig, 1) != 1) continue;
    if (sig == 0) return;  // Serve is done
    stop_signal_.store(sig);
    spdlog::info("signal {} received: unmounting {} (lazily, if files are open)", sig,
                 options_.mountpoint);
    Detach();
  }
}

void FuseServer::Detach() {
  if (front_ != nullptr) {
    front_->Detach();  // root: no helper needed
    return;
  }
  Status s = DetachMount(options_.mountpoint);  // lazily; fusermount3 when not root
  if (!s.ok()) {
    spdlog::warn("cannot detach {} ({}); stopping the daemon", options_.mountpoint, s.message());
    // The kernel connection stays up: a push or an invalidation waiting on a page locked by a
    // READ needs a request thread to answer that READ, so both end before the request loop
    // does; the pusher first, since a push may queue a drop.
    if (pusher_ != nullptr) pusher_->Stop();
    if (dropper_ != nullptr) dropper_->Stop();
    fuse_session_exit(session_);
  }
}

FuseServer::~FuseServer() {
  if (signals_installed_) {
    g_signal_fd.store(-1);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::signal(sig, SIG_DFL);
  }
  if (session_ == nullptr) return;
  if (front_ != nullptr && mounted_) front_->Detach();
  if (mounted_) fuse_session_unmount(session_);
  fuse_session_destroy(session_);
}

void FuseServer::WaitReady(const std::function<void(const Status&)>& on_ready) {
  // Never stat our own mount here: if the daemon were killed while that request is in flight,
  // the thread would wait forever in the kernel and keep /dev/fuse open, so the dead mount could
  // not even be aborted. The mount table says everything needed. (Whoever started the daemon
  // checks that it answers: see cmd_mount.cc.)
  // A failed start ends the session too: whoever waits for the daemon must see it exit.
  auto fail = [&](const Status& s) {
    start_failed_.store(true);
    if (front_ != nullptr) {
      (void)DetachMount(FuseMountpoint());  // the overlay is not up: only the FUSE mount
    } else {
      Detach();
    }
    on_ready(s);
  };
  if (!FindMount(FuseMountpoint())) {
    fail(Status::IoError("the mount at " + FuseMountpoint() + " is not in the mount table"));
    return;
  }
  if (front_ != nullptr) {
    // overlayfs looks at the FUSE root while mounting: the request loop answers it.
    Status s = front_->Mount();
    if (!s.ok()) {
      fail(s);
      return;
    }
    front_mounted_.store(true);
  }
  on_ready(Status::Ok());
}

const std::string& FuseServer::FuseMountpoint() const {
  return front_ != nullptr ? front_->fuse_dir() : options_.mountpoint;
}

void FuseServer::WatchOverlay() {
  // poll() on the mount table reports every change to it (POLLPRI).
  UniqueFd table(::open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC));
  if (!table.valid()) {
    spdlog::warn("cannot watch the mount table; 'umount {}' will not stop the daemon",
                 options_.mountpoint);
    return;
  }
  for (;;) {
    pollfd p[2] = {{overlay_stop_.get(), POLLIN, 0}, {table.get(), POLLPRI, 0}};
    if (::poll(p, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (p[0].revents != 0) return;
    if (front_mounted_.load() && !front_->IsMounted()) {
      spdlog::info("the overlay at {} was unmounted; unmounting the FUSE mount under it",
                   options_.mountpoint);
      front_->Detach();
      return;
    }
  }
}

Status FuseServer::Serve(const std::function<void(const Status&)>& on_ready) {
  // Before the threads that may stop it (Detach) start; stopped after the loop and before the
  // session goes.
  if (config_->hold_once) {
    Filesystem* fs = config_->fs;
    dropper_ = std::make_unique<PageCacheDropper>(
        session_, [fs](bool dropped) { fs->CountPageCacheDrop(dropped); });
    config_->dropper = dropper_.get();
  }
  if (config_->push_prefetched) {
    FuseOpsConfig* config = config_;
    pusher_ = std::make_unique<PagePusher>(
        [config](fuse_ino_t ino, uint64_t stream, bool wait) {
          PushPrefetched(*config, ino, stream, wait);
        },
        // Over io_uring the threads that answer READs are the rings', one per CPU.
        PagePusherOptions{.request_threads = config_->ring ? static_cast<unsigned>(get_nprocs_conf())
                                                           : options_.max_threads},
        [fs = config_->fs](PushQueueEvent e) { fs->CountPush(e); });
    config_->pusher = pusher_.get();
  }
  std::thread ready_thread([this, &on_ready] { WaitReady(on_ready); });
  std::thread signal_thread([this] { WatchSignals(); });
  std::thread overlay_thread;
  if (front_ != nullptr) overlay_thread = std::thread([this] { WatchOverlay(); });
  fuse_loop_config* cfg = fuse_loop_cfg_create();
  fuse_loop_cfg_set_max_threads(cfg, options_.max_threads);
  fuse_loop_cfg_set_clone_fd(cfg, 0);
  int rc = fuse_session_loop_mt(session_, cfg);
  fuse_loop_cfg_destroy(cfg);
  // READs handed to the miss threads are answered (into a session that takes no more requests)
  // before anything they use goes: the dropper below, the session itself.
  config_->fs->StopMissThreads();
  // The request threads are gone; the pushers still read config_ (the dropper) until joined.
  // Once the loop has ended the connection is gone too (unmounted or aborted), so a push
  // waiting in the kernel has returned with an error.
  if (pusher_ != nullptr) pusher_->Stop();
  config_->pusher = nullptr;
  config_->dropper = nullptr;
  if (dropper_ != nullptr) dropper_->Stop();
  ready_thread.join();
  unsigned char done = 0;
  (void)!::write(signal_write_.get(), &done, 1);
  signal_thread.join();
  if (overlay_thread.joinable()) {
    uint64_t one = 1;
    (void)!::write(overlay_stop_.get(), &one, sizeof one);
    overlay_thread.join();
    front_->Detach();  // the loop can also end with the overlay still up (a FUSE error)
  }
  pusher_.reset();  // every thread that could reach them is joined
  dropper_.reset();
  fuse_session_unmount(session_);  // a no-op when the kernel already ended the session
  mounted_ = false;
  if (rc != 0) return Status::IoError("FUSE session ended with error " + std::to_string(rc));
  if (start_failed_.load()) return Status::IoError("the mount did not start (see above)");
  if (int sig = stop_signal_.load(); sig != 0) {
    spdlog::info("signal {} received, unmounted {}", sig, options_.mountpoint);
  }
  return Status::Ok();
}

}  // namespace mmfs::fs
