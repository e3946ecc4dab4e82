// The FUSE low-level callbacks: a thin layer that turns kernel requests into Filesystem calls and
// Status results into errno replies. Nothing else in mmfs speaks errno to the kernel.
//
// What the kernel may cache it is told to cache (the data never changes): long entry and attribute
// timeouts, negative entries, cached directory listings; `open` and `opendir` answer ENOSYS where
// the kernel supports no_open and no_opendir, so warm reads never reach the daemon; `flush` is deliberately not implemented
// (even a no-op costs a round trip per close). A file the prefetcher has loaded is pushed into
// the page cache right after its LOOKUP reply (by the PagePusher's threads), so its READ never
// comes.
//
// Over /dev/fuse a READ whose bytes need a remote or slow origin is answered from a miss thread
// (Filesystem::StartRead, fs/read/miss_queue.h), so the request threads stay free for cache hits.
// Over io_uring (transport.h) callbacks run on the ring threads, one per CPU, and reply there;
// each serves the requests from its CPU one at a time, so a READ that waits on the origin holds
// up that CPU's other requests (transport.h says why they are not handed to other threads, and
// why a remote dataset is not served over the ring).
//
// Thread-safety: callbacks run on libfuse's worker threads (or ring threads); they share the
// Filesystem and the PagePusher (both thread-safe). PushPrefetched runs on the pushers' threads.
// A queued READ's reply runs on a miss thread and reads `dropper` until the server stops the
// miss threads (FuseServer::Serve), which it does before it clears `dropper`.
#pragma once

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include <sys/types.h>

#include <string>

#include "fs/core/filesystem.h"
#include "fs/fuse/page_cache_dropper.h"
#include "fs/fuse/page_pusher.h"

namespace mmfs::fs {

enum class ReaddirPlus { kOff, kAuto, kAlways };

struct FuseOpsConfig {
  Filesystem* fs = nullptr;  // not owned
  uid_t uid = 0;             // owner shown for every file
  gid_t gid = 0;
  double timeout_seconds = 86400.0 * 365;  // entry and attribute cache lifetime
  ReaddirPlus readdirplus = ReaddirPlus::kOff;
  unsigned max_background = 64;
  bool no_open = false;  // set at init: the kernel supports FUSE_CAP_NO_OPEN_SUPPORT
  // Let the kernel keep directory listings with no OPENDIR (FUSE_CAP_NO_OPENDIR_SUPPORT);
  // `no_opendir` is set at init when it does.
  bool cache_listings = true;
  bool no_opendir = false;
  // The mount's read-ahead, which caps the size of READ requests: written to
  // `read_ahead_sysfs_path` (/sys/class/bdi/MAJ:MIN/read_ahead_kb) at INIT, before the reply,
  // since the kernel lowers it to the reply's max_readahead when it processes the reply.
  unsigned read_ahead_kb = 0;  // 0 keeps the kernel's default (128 KiB)
  std::string read_ahead_sysfs_path;
  unsigned effective_read_ahead_kb = 128;  // set at INIT; the largest READ the kernel sends
  // Push prefetched files into the kernel's page cache when they are looked up (see OnLookup);
  // needs `session` (set by the server once the session exists) and `pusher` (made by the
  // server; requests only queue pushes, page_pusher.h says why).
  bool push_prefetched = true;
  fuse_session* session = nullptr;
  PagePusher* pusher = nullptr;
  // Hold once: a file the RAM tier holds leaves the page cache after its last READ (see
  // page_cache_dropper.h). Off unless the mount asks (mmfs mount: in shared-limit mode): with memory to
  // spare the kernel's copy is what makes warm reads free. The server makes the dropper.
  bool hold_once = false;
  PageCacheDropper* dropper = nullptr;
  // Requests come over io_uring (transport.h): set before the session is made. Otherwise INIT
  // turns the ring off, whatever libfuse's FUSE_URING_ENABLE says.
  bool ring = false;
};

// The callback table; pass a FuseOpsConfig* as the session's userdata.
const fuse_lowlevel_ops& FuseOperations();

// Stores `ino` into the kernel's page cache if the prefetcher holds it whole (notify_store);
// `wait`: a push of it under way elsewhere is waited for first. May wait in the kernel on pages a
// READ holds locked: for the PagePusher's threads only, never a request thread.
void PushPrefetched(FuseOpsConfig& cfg, fuse_ino_t ino, uint64_t stream, bool wait);

}  // namespace mmfs::fs
