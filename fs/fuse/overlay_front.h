// OverlayFront: a read-only overlayfs stacked on the FUSE mount (`mmfs mount --overlay`), so that
// the kernel answers what FUSE forwards to the daemon on every open of a warm file.
//
// Why: the kernel sends every ioctl on a FUSE file to the daemon and never caches the answer, and
// CPython before 3.14 calls isatty() (an ioctl) in every open(): one round trip per file even when
// the data sits in the page cache, 40,000 per epoch of a 20,000-sample dataset. overlayfs answers
// ioctls itself, reads through to the FUSE file's page cache, and keeps its own dentries, so warm
// reads by Python loaders then cost the daemon nothing.
//
// Layout: PARENT/mmfs-front-<pid>-XXXXXX/fuse holds the FUSE mount; the overlay on the user's
// mount point has lowerdir=fuse:empty (overlayfs wants two lower layers when it has no upper one).
// The control directory's files change under one name (a fresh stats snapshot per lookup), which
// overlayfs reports as ESTALE, so `.mmfs` is then a symlink into the FUSE mount itself (see
// kControlDirDirectName). Needs CAP_SYS_ADMIN (root). The overlay checks permissions by mode bits
// for every user and reads as root underneath, like any mount root makes; the FUSE mount gets
// allow_other and these directories 0755 to match, so that `.mmfs` works for every user too.
//
// Thread-safety: Mount and Detach from one thread at a time; IsMounted from any thread.
#pragma once

#include <memory>
#include <string>

#include "base/mount_table.h"
#include "base/status.h"

namespace mmfs::fs {

class OverlayFront {
 public:
  // Creates the directories under `parent_dir` for an overlay at `mountpoint`, after removing
  // what killed daemons left there (their FUSE mounts are detached).
  // `source` names the overlay in the mount table (the FUSE mount's fsname, "mmfs:DST").
  static Result<std::unique_ptr<OverlayFront>> Create(const std::string& parent_dir,
                                                      const std::string& mountpoint,
                                                      const std::string& source);
  ~OverlayFront();  // removes the directories (a mount still on them keeps them)
  OverlayFront(const OverlayFront&) = delete;
  OverlayFront& operator=(const OverlayFront&) = delete;

  // Where the FUSE mount goes.
  const std::string& fuse_dir() const { return fuse_dir_; }
  // Mounts the overlay on the mount point; the FUSE mount at fuse_dir() must be serving.
  Status Mount();
  // Whether this overlay is in the mount table at the mount point (false once unmounted by
  // anyone: `umount MNT` is how the user stops an overlay mount).
  bool IsMounted() const;
  // Detaches the overlay and then the FUSE mount, lazily: open files keep working until they
  // are closed, and the FUSE session ends after that.
  void Detach();

  // Whether `mount` is an overlay front made by a daemon (live or killed): an overlay named
  // "mmfs:..." whose first lower layer is a front's fuse directory. Only root can mount an
  // overlay, so nobody else can make such an entry.
  static bool IsFront(const MountEntry& mount);

  // Detaches the FUSE mounts of daemons that are gone (killed) and removes their directories.
  static void RemoveStale(const std::string& parent_dir);

 private:
  OverlayFront() = default;

  std::string dir_, fuse_dir_, empty_dir_, mountpoint_, source_;
};

}  // namespace mmfs::fs
