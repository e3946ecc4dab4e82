// The on-disk format of derived image views (smaller copies of a dataset's images), shared by
// the view builder (tools/view) and the reader (fs/format/view_set.h). docs/format.md ("Views")
// describes the same bytes for people; keep both in step.
//
// A view of side N lives in DST/views/N/ (N in decimal, no leading zeros) beside the dataset's
// own files, which it never changes:
//   manifest.json     format "mmfs-view", version, side, the base index it belongs to, counts,
//                     index and shard list with sizes and xxh3 checksums. Written last.
//   view.mmfs         a header plus one ViewRecord per base entry the view changes, sorted by
//                     entry number (binary search); mapped read-only.
//   shard-NNNNN.mdb   single-file LMDB environments, one record per resized image, exactly as
//                     the base's shards (fs/format/format.h), so a view's bytes are served with
//                     one pread at a recorded offset.
// A base entry without a record is served as the original (same bytes, same shard): images whose
// shorter side is at most N, non-image files, directories and symlinks. A view is built in
// DST/views/.N.partial-PID/ and renamed to DST/views/N/ when complete, so a reader never sees a
// half-built view; anything in DST/views/ whose name is not a decimal number is ignored.
//
// Thread-safety: constants and plain structs only.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "fs/format/format.h"

namespace mmfs::format {

inline constexpr char kViewsDirName[] = "views";
inline constexpr char kViewFormatName[] = "mmfs-view";
inline constexpr uint32_t kViewFormatVersion = 1;
inline constexpr char kViewIndexFileName[] = "view.mmfs";
inline constexpr char kViewIndexMagic[8] = {'M', 'M', 'F', 'S', 'V', 'I', 'E', 'W'};
// Sides a view may have: smaller makes no useful training image, larger no useful saving.
inline constexpr uint32_t kMinViewSide = 16;
inline constexpr uint32_t kMaxViewSide = 8192;

struct ViewIndexHeader {
  char magic[8];                 // kViewIndexMagic
  uint32_t version;              // kViewFormatVersion
  uint32_t header_size;          // sizeof(ViewIndexHeader)
  uint32_t record_size;          // sizeof(ViewRecord)
  uint32_t side;                 // N: the shorter side of every resized image
  uint64_t record_count;         // ViewRecords that follow the header
  uint64_t base_entry_count;     // entries of the base index this view was built from
  uint64_t base_index_checksum;  // XXH3-64 of that base index file (the manifest's index xxh3)
  uint64_t records_offset;       // file offset of the first ViewRecord (= header_size)
  uint64_t reserved;             // 0
};
static_assert(sizeof(ViewIndexHeader) == 64);

// What a record says about its base entry.
enum class ViewRecordKind : uint16_t {
  // The image resized: its bytes are in view shard `shard` at `data_offset`.
  kResized = 1,
  // The source image could not be decoded and the view was built with --on-bad skip: the file is
  // not in the view (a loader over the view does not see it). shard, offset, size, checksum: 0.
  kOmitted = 2,
};

struct ViewRecord {
  uint64_t data_offset;  // byte offset of the image inside the view shard file
  uint64_t size;         // bytes of the resized image
  uint64_t checksum;     // XXH3-64 of those bytes
  uint32_t entry;        // base entry number (index into the base's EntryRecords)
  uint32_t shard;        // view shard number
  uint16_t width;        // pixel size of the resized image as stored (before EXIF orientation)
  uint16_t height;
  uint16_t kind;         // ViewRecordKind
  uint16_t reserved;     // 0
};
static_assert(sizeof(ViewRecord) == 40);

// The size of the view image of a `width` x `height` image: the shorter side becomes `side`, the
// longer one keeps the aspect ratio (rounded to nearest, at least 1). Returns false when the
// image is not larger than that (shorter side <= side): it is served as it is, never upscaled.
inline bool ViewSize(uint32_t width, uint32_t height, uint32_t side, uint32_t* out_width,
                     uint32_t* out_height) {
  uint32_t shorter = width < height ? width : height;
  if (shorter <= side || side == 0) return false;
  uint32_t longer = width < height ? height : width;
  uint64_t scaled = (static_cast<uint64_t>(longer) * side + shorter / 2) / shorter;
  uint32_t l = scaled < 1 ? 1 : static_cast<uint32_t>(scaled);
  *out_width = width < height ? side : l;
  *out_height = width < height ? l : side;
  return true;
}

// "@N/rel": where the view of side N shows the base file `rel` in a mount, and the name that
// checksum errors use. Appended piece by piece: GCC 12 at -O3 reports a false -Wrestrict in
// operator+(const char*, std::string&&), which a plain Release build with MMFS_WERROR fails on.
inline std::string ViewPath(uint32_t side, std::string_view rel) {
  std::string path = "@";
  path += std::to_string(side);
  path += '/';
  path += rel;
  return path;
}

}  // namespace mmfs::format
