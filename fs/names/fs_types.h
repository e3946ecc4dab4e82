// Values the filesystem core hands to its front-end (fs/fuse) and its rooms share: attributes,
// read results, the inode and control-file names.
//
// In fs/names, low in the core's layers (docs/architecture.md), so that the rooms, fs/control,
// fs/core, fs/fuse and the tools read one definition and none of them includes another for it.
// Owns nothing: a ReadData's bytes are kept alive by its `owner`.
//
// Thread-safety: plain values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace mmfs::fs {

inline constexpr uint64_t kRootIno = 1;
inline constexpr char kControlDirName[] = ".mmfs";
// Under an overlay front (fs/fuse/overlay_front.h) `.mmfs` is a symlink to the control directory
// under this name on the FUSE mount itself: overlayfs answers ESTALE for files that change under
// one name, as the stats snapshots do (a fresh one per lookup).
inline constexpr char kControlDirDirectName[] = ".mmfs.d";
inline constexpr char kStatsFileName[] = "stats";      // JSON
inline constexpr char kMetricsFileName[] = "metrics";  // Prometheus text format
inline constexpr char kHintFileName[] = "hint";        // symlink to the hint FIFO
inline constexpr char kControlFileName[] = "control";  // symlink to the control FIFO (warmup)
inline constexpr char kViewsDirName[] = "views";  // one symlink per view served: 256 -> ../../@256

struct Attr {
  uint64_t ino = 0;
  uint32_t mode = 0;  // st_mode
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  uint32_t nlink = 1;
  // Changes on every access (control files): the kernel must not cache its entry or attributes.
  bool is_volatile = false;
};

// What became of a push the FUSE layer queued (fs/fuse/page_pusher.h), for the counters.
enum class PushQueueEvent { kQueueFull, kWaited, kWaitSkipped, kWaitExpired };

struct StatFsInfo {
  uint64_t block_size = 4096;
  uint64_t blocks = 0;
  uint64_t files = 0;
  uint64_t name_max = 255;
};

// Bytes a read returns: a view into `owner` (a cache::Blob), which keeps them alive.
struct ReadData {
  std::shared_ptr<const std::string> owner;
  const char* data = nullptr;
  size_t size = 0;
  // The RAM tier holds the file: its pages in the kernel's page cache (this READ's and any the
  // kernel kept from before) would be a second copy (fs/fuse/page_cache_dropper.h).
  bool tier_holds = false;
  // The READ reached the file's end.
  bool at_end = false;
};

// How a listing hands out its entries: `emit(name, attr, next_offset)` returns false when the
// caller's buffer is full (that entry is emitted again on the next call).
using DirEmitter = std::function<bool(std::string_view, const Attr&, uint64_t)>;

// The "." (position 1) and ".." (position 2) of a listing resumed after `offset`, as every
// directory has them. Returns the index of the first child still to emit (children are at
// positions 3 + i), or nullopt when the buffer filled first.
inline std::optional<uint64_t> EmitDotEntries(uint64_t offset, const Attr& self,
                                              const Attr& parent, const DirEmitter& emit) {
  if (offset < 1 && !emit(".", self, 1)) return std::nullopt;
  if (offset < 2 && !emit("..", parent, 2)) return std::nullopt;
  return offset < 2 ? 0 : offset - 2;
}

}  // namespace mmfs::fs
