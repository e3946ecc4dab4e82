// Reading a packed dataset: the manifest and the index (mapped read-only). The format side only
// parses and locates: it says where each file's bytes lie (shard, offset, size, checksum) and
// checks bytes read elsewhere against the index; the shards themselves are read through an
// Origin (fs/origin/origin.h), to which ShardTree describes them.
//
// Opening checks what can be checked in time independent of the sample count (manifest fields,
// index header and size; each shard's size and LMDB magic are checked by the origin when
// ShardTree is added to it), so mounting a million files costs the same as mounting ten. Each
// entry is bounds-checked when it is used, so a damaged index yields a Corruption status for the
// damaged entries, never a wild read. LMDB itself is not opened by the reader.
//
// Ownership: owns the index mapping; holds no shard descriptor.
// Thread-safety: after Open (and LockIndex), every const method may be called from any number
// of threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "fs/format/format.h"
#include "fs/format/manifest.h"
#include "fs/format/span_window.h"
#include "fs/origin/origin.h"

namespace mmfs::format {

// A validated copy of one index record plus its name.
struct Entry {
  uint32_t index = 0;
  EntryRecord record{};
  std::string_view name;  // points into the mapped index; valid while the Dataset lives

  bool is_dir() const { return (record.mode & kModeTypeMask) == kModeDirectory; }
  bool is_regular() const { return (record.mode & kModeTypeMask) == kModeRegular; }
  bool is_symlink() const { return (record.mode & kModeTypeMask) == kModeSymlink; }
  uint64_t size() const { return record.size; }
  // Directories: [first_child, first_child + child_count).
  uint64_t first_child() const { return record.data_offset; }
  uint64_t child_count() const { return record.size; }
};

class Dataset {
 public:
  // Opens the dataset directory `dir`: its manifest and index, not its shards (ShardTree). Errors
  // name the file and the problem ("not an mmfs dataset", "format version 7 is not supported").
  static Result<std::unique_ptr<Dataset>> Open(const std::string& dir);
  ~Dataset();
  Dataset(const Dataset&) = delete;
  Dataset& operator=(const Dataset&) = delete;

  const Manifest& manifest() const { return manifest_; }
  const std::string& dir() const { return dir_; }
  uint64_t entry_count() const { return entry_count_; }

  Result<Entry> GetEntry(uint64_t index) const;
  // The child of directory `dir` named `name`; NotFound if there is none.
  Result<Entry> LookupChild(const Entry& dir, std::string_view name) const;
  // Symlink target.
  Result<std::string_view> LinkTarget(const Entry& link) const;
  // Starts reading directory `dir`'s records and names into the page cache (madvise WILLNEED;
  // returns at once). The index is mapped MADV_RANDOM, right for the binary search of a lookup
  // but one 4 KiB read per page fault for a listing: a 1,000-entry directory is 64 KB of records
  // and ~13 KB of names, contiguous (breadth-first numbering). Each is read with what follows
  // it, up to kIndexAheadBytes (SpanWindow): a walk's next directories come in the same reads.
  void PrefetchChildren(const Entry& dir) const;
  // Unmaps the same span from the daemon once a listing is done (MADV_DONTNEED; the page cache
  // keeps the pages, as it keeps a kernel filesystem's directory blocks). Without it a walk of
  // every directory leaves the whole index in the daemon's RSS: 74 MB at 1M entries. Nothing
  // once the index is locked (LockIndex): its pages are then meant to stay.
  void ReleaseChildren(const Entry& dir) const;
  // "train/cat/0001.jpg" (for messages; walks the parents).
  std::string PathOf(uint64_t index) const;

  // OK if `sum` (XXH3-64 of bytes read for `entry`) matches the index, else a Corruption that
  // names the shard, the offset and the path: the one message for every checksum failure.
  Status CheckSum(const Entry& entry, uint64_t sum) const;
  // The dataset's shards as an origin's tree (origin::kDatasetTree): where they are (the root of
  // a LocalFileOrigin over dir()), their sizes and magic as the manifest says, and the words of
  // a refusal ("shard-00002.mdb: size 10 bytes, the manifest says 4096 (truncated or
  // replaced?)").
  origin::TreeSpec ShardTree() const;

  // Keeps the index's pages in memory once read (mlock2 with MLOCK_ONFAULT: a page is locked
  // when first touched, so a mount still costs nothing until looked at). Without it the kernel
  // reclaims the mapped index as readily as any page cache, and in a memory cgroup at its limit
  // lookups wait for disk reads: 16,943 major faults on the 3 MB index of 20,000 samples in
  // three epochs (the equal-memory bench, docs/performance.md), a FUSE thread stalled on
  // each. For mounts whose memory plan reserves the whole index (shared-limit mode); a walk of
  // every directory then keeps it all.
  // Fails with the reason (RLIMIT_MEMLOCK below the index's size without CAP_IPC_LOCK, say);
  // the index then stays an ordinary mapping. Call before the dataset is shared.
  Status LockIndex();
  bool index_locked() const { return index_locked_; }
  // Identity of the dataset's contents (for cache namespaces): "ds-" + the index checksum.
  std::string Identity() const;

 private:
  Dataset() = default;
  Status OpenIndex();
  // Where directory `dir`'s records and names lie, as offsets in the index mapping (empty
  // spans for an empty directory or names out of order).
  struct ChildSpans {
    SpanWindow::Span records, names;
  };
  ChildSpans SpansOfChildren(const Entry& dir) const;
  // madvise(`advice`) over `span` of the index mapping, widened by `margin` bytes on both sides
  // (within the mapping).
  void Advise(SpanWindow::Span span, int advice, size_t margin) const;
  static constexpr size_t kFaultAroundBytes = 64 << 10;
  // How far ahead of a listed directory's run the index is read: 1 MiB of records is ~16
  // directories of 1,000 files, 1 MiB of names ~80 (one request each; measured on a
  // cold walk of 1,000,000 entries).
  static constexpr uint64_t kIndexAheadBytes = 1 << 20;

  std::string dir_;
  Manifest manifest_;
  const char* index_map_ = nullptr;  // owned mapping of the index file
  size_t index_map_size_ = 0;
  bool index_locked_ = false;  // set by LockIndex before the dataset is shared
  const EntryRecord* entries_ = nullptr;  // points into index_map_
  uint64_t entry_count_ = 0;
  const char* strings_ = nullptr;  // points into index_map_
  uint64_t strings_size_ = 0;
  // The last read-ahead windows of the records and of the names (PrefetchChildren).
  mutable SpanWindow record_window_{kIndexAheadBytes}, name_window_{kIndexAheadBytes};
};

}  // namespace mmfs::format
