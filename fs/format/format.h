// The on-disk format of a packed mmfs dataset, shared by the writer (tools/pack) and the reader
// (fs/format/dataset.h). docs/format.md describes the same bytes for people; keep both in step.
//
// A dataset is a directory holding:
//   manifest.json     format version, counts, shard list with sizes and xxh3 checksums (JSON)
//   index.mmfs        fixed-size entry records plus a name table, mapped read-only at mount
//   shard-NNNNN.mdb   single-file LMDB environments holding one record per sample
//
// All integers are little-endian. Entry i has inode number i + 1 (the root is entry 0, inode 1),
// so inode numbers are computed, never stored, and are stable across remounts.
//
// Thread-safety: constants and plain structs only.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

namespace mmfs::format {

static_assert(std::endian::native == std::endian::little, "mmfs format assumes little-endian");

inline constexpr char kManifestFileName[] = "manifest.json";
inline constexpr char kIndexFileName[] = "index.mmfs";
inline constexpr char kFormatName[] = "mmfs-dataset";
inline constexpr uint32_t kFormatVersion = 1;
inline constexpr char kIndexMagic[8] = {'M', 'M', 'F', 'S', 'I', 'D', 'X', '\0'};
// LMDB's meta page magic (MDB_MAGIC in mdb.c), at byte 16 of a valid environment file.
inline constexpr uint32_t kLmdbMagic = 0xBEEFC0DE;
inline constexpr uint64_t kLmdbMagicOffset = 16;
inline constexpr uint64_t kDefaultShardSize = 1ull << 30;  // 1 GiB
inline constexpr size_t kMaxNameLength = 255;

// "shard-00042.mdb"
inline constexpr char kShardFilePattern[] = "shard-%05u.mdb";

// Entry kinds are the S_IFMT bits of EntryRecord::mode.
inline constexpr uint32_t kModeTypeMask = 0170000;
inline constexpr uint32_t kModeDirectory = 0040000;
inline constexpr uint32_t kModeRegular = 0100000;
inline constexpr uint32_t kModeSymlink = 0120000;
inline constexpr uint32_t kModePermissionMask = 0777;

// The st_mode a mount serves for a record's `mode`: its type and rwx bits only. setuid, setgid
// and sticky bits are never served, whatever the index says: an edited index must not give
// anyone a setuid program, even on a mount made with -o suid. (A type no pack writes, such as a
// device, never gets this far: Dataset::GetEntry answers Corruption for it.)
inline constexpr uint32_t ServedMode(uint32_t mode) {
  return (mode & kModeTypeMask) | (mode & kModePermissionMask);
}

struct IndexHeader {
  char magic[8];            // kIndexMagic
  uint32_t version;         // kFormatVersion
  uint32_t header_size;     // sizeof(IndexHeader)
  uint32_t entry_size;      // sizeof(EntryRecord)
  uint32_t reserved0;
  uint64_t entry_count;     // number of EntryRecords; entry 0 is the root directory
  uint64_t entries_offset;  // file offset of the first EntryRecord
  uint64_t strings_offset;  // file offset of the name table
  uint64_t strings_size;    // bytes in the name table
  uint64_t reserved1;
};
static_assert(sizeof(IndexHeader) == 64);

// One file, directory or symbolic link. Directories list their children as one contiguous run of
// records, sorted by name bytewise (memcmp, then shorter first), so lookup is a binary search and
// readdir is a walk. Records are in breadth-first order; format::IndexBuilder
// (dataset_writer.h) is the one place that numbers them so.
struct EntryRecord {
  // regular: byte offset of the contents inside the shard file (a pread offset, no B-tree walk)
  // directory: index of the first child record
  // symlink: offset of the link target in the name table
  uint64_t data_offset;
  // regular: file size in bytes; directory: number of children; symlink: target length
  uint64_t size;
  uint64_t checksum;     // regular: XXH3-64 of the contents; others 0
  uint64_t name_offset;  // offset of the name in the name table (root: empty name)
  int64_t mtime_ns;      // modification time, nanoseconds since the epoch
  uint32_t parent;       // index of the parent directory (root: 0)
  uint32_t shard;        // regular: shard number; others 0
  uint32_t sample;       // regular: sample number, the LMDB key of its record; others 0
  uint32_t mode;         // st_mode: type bits and permission bits
  uint16_t name_len;     // 0 only for the root
  uint16_t width;        // images: pixel width (0 if unknown or not an image)
  uint16_t height;       // images: pixel height
  uint16_t flags;        // reserved, 0
};
static_assert(sizeof(EntryRecord) == 64);

// LMDB records: key = sample number as 8 bytes big-endian (so keys sort in pack order and the
// writer can use MDB_APPEND); value = the bytes of the sample's files, concatenated in name order.

}  // namespace mmfs::format
