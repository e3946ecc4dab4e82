#include "fs/fuse/overlay_front.h"

#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <string>

#include "base/file_util.h"
#include "base/mount_table.h"

namespace mmfs::fs {

namespace {
constexpr char kPrefix[] = "mmfs-front-";

// The front's own directory and its two empty subdirectories; one with a mount still on it is
// left alone (rmdir fails with EBUSY).
void RemoveTree(const std::string& dir) {
  ::rmdir((dir + "/fuse").c_str());
  ::rmdir((dir + "/empty").c_str());
  ::rmdir(dir.c_str());
}
}  // namespace

bool OverlayFront::IsFront(const MountEntry& mount) {
  if (mount.fs_type != "overlay" || mount.source.rfind("mmfs:", 0) != 0) return false;
  std::optional<std::string> lower = MountOptionValue(mount.super_options, "lowerdir");
  if (!lower) return false;
  // PARENT/mmfs-front-<pid>-XXXXXX/fuse:PARENT/mmfs-front-<pid>-XXXXXX/empty
  const std::string first = lower->substr(0, lower->find(':'));
  const std::string suffix = "/fuse";
  if (first.size() <= suffix.size() ||
      first.compare(first.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return false;
  }
  const std::string dir = first.substr(0, first.size() - suffix.size());
  const std::string name = dir.substr(dir.rfind('/') + 1);
  return name.rfind(kPrefix, 0) == 0 && *lower == first + ":" + dir + "/empty";
}

void OverlayFront::RemoveStale(const std::string& parent_dir) {
  // A daemon killed with its mount in place left a dead FUSE mount in its directory.
  ForEachDirOfGoneProcess(parent_dir, kPrefix, [](const std::string& dir) {
    ::umount2((dir + "/fuse").c_str(), MNT_DETACH);
    RemoveTree(dir);
  });
}

Result<std::unique_ptr<OverlayFront>> OverlayFront::Create(const std::string& parent_dir,
                                                           const std::string& mountpoint,
                                                           const std::string& source) {
  RemoveStale(parent_dir);
  std::unique_ptr<OverlayFront> front(new OverlayFront());
  // The daemon's PID in the name lets a later daemon clean up after a killed one.
  std::string templ = parent_dir + "/" + kPrefix + std::to_string(::getpid()) + "-XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr) return Status::FromErrno(errno, "create " + templ);
  front->dir_ = templ;
  front->fuse_dir_ = templ + "/fuse";
  front->empty_dir_ = templ + "/empty";
  front->mountpoint_ = mountpoint;
  front->source_ = source;
  // mkdtemp made it 0700; every user may follow `.mmfs` into the FUSE mount.
  if (::chmod(templ.c_str(), 0755) != 0) return Status::FromErrno(errno, "chmod " + templ);
  for (const std::string& d : {front->fuse_dir_, front->empty_dir_}) {
    if (::mkdir(d.c_str(), 0755) != 0) return Status::FromErrno(errno, "create " + d);
  }
  return front;
}

OverlayFront::~OverlayFront() {
  if (!dir_.empty()) RemoveTree(dir_);
}

Status OverlayFront::Mount() {
  // No upper layer: the overlay is read-only, as the FUSE mount under it.
  std::string data = "lowerdir=" + fuse_dir_ + ":" + empty_dir_;
  if (::mount(source_.c_str(), mountpoint_.c_str(), "overlay", MS_RDONLY | MS_NOSUID | MS_NODEV,
              data.c_str()) != 0) {
    int err = errno;
    return Status::FromErrno(err, "mount an overlay on " + mountpoint_ +
                                      (err == EPERM ? " (--overlay needs root)" : ""));
  }
  return Status::Ok();
}

bool OverlayFront::IsMounted() const {
  auto mount = FindMount(mountpoint_);
  return mount && mount->fs_type == "overlay" &&
         mount->super_options.find("lowerdir=" + fuse_dir_ + ":") != std::string::npos;
}

void OverlayFront::Detach() {
  if (IsMounted()) ::umount2(mountpoint_.c_str(), MNT_DETACH);
  ::umount2(fuse_dir_.c_str(), MNT_DETACH);
}

}  // namespace mmfs::fs
