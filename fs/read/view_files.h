// ViewFiles: the trees of a mount and, for a file of any tree, which bytes it is and where they
// come from (docs/views.md).
//
// Tree 0 is the original tree; tree k + 1 is view k of the ViewSet (ascending side). A file of a
// tree is a base entry seen through that tree: the entry itself in tree 0; in a view, the
// resized image (a view shard's bytes), the original (the same bytes as tree 0, the same cache
// key), or nothing (left out). Every room that loads or predicts files (FileReader, Prefetcher)
// works on these files and their cache keys, so a view's files go through the same tiers,
// readahead, sample members and hint as the originals, and a resized file's key (ViewKey) never
// meets an original's.
//
// Resized files are read here, from their view's tree of the origin through the origin reader
// (so they are counted by cause and timed like the originals), and checked against their XXH3
// before anything uses them; loads are also counted per view and by cause (demand, readahead),
// next to the files and bytes served.
//
// Ownership: owns the ViewSet; borrows the dataset and the origin reader (reads, error
// counting), which must outlive it.
// Thread-safety: all methods are thread-safe (counters are atomics; the rest is immutable).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "cache/tier.h"
#include "fs/format/dataset.h"
#include "fs/format/view_set.h"
#include "fs/read/origin_reader.h"
#include "fs/read/read_stats.h"

namespace mmfs::fs {

// The cache key of view `side`'s resized copy of base entry `index`. Base keys are entry
// indexes (< 2^40 in practice); the top bit keeps every view key out of that range, and the side
// (not the view's position in the set) keeps it stable when views are added or removed, which
// matters for the SSD tier, whose entries outlive the mount.
inline cache::CacheKey ViewKey(uint32_t side, uint64_t index) {
  return (1ull << 63) | (static_cast<uint64_t>(side) << 40) | (index & ((1ull << 40) - 1));
}
inline bool IsViewKey(cache::CacheKey key) { return (key >> 63) != 0; }
inline uint32_t ViewKeySide(cache::CacheKey key) {
  return static_cast<uint32_t>((key >> 40) & ((1u << 23) - 1));
}
inline uint64_t ViewKeyIndex(cache::CacheKey key) { return key & ((1ull << 40) - 1); }

// A regular file of a tree.
struct TreeFile {
  size_t tree = 0;          // 0: the original tree; k + 1: view k
  format::Entry entry;      // the base entry
  format::ViewFile file;    // what the tree serves for it (kOriginal in tree 0)
  cache::CacheKey key = 0;  // the entry's index, or ViewKey for a resized file
  bool resized() const { return file.source == format::ViewFile::Source::kView; }
  uint64_t size() const { return file.size; }
};

class ViewFiles {
 public:
  // `root_side` != 0: the mount's root shows that view (mmfs mount --view N); REQUIRES: it is in
  // `views`.
  ViewFiles(const format::Dataset& dataset, format::ViewSet views, uint32_t root_side,
            OriginReader& origin);

  const format::ViewSet& views() const { return views_; }
  size_t tree_count() const { return views_.views().size() + 1; }
  // The tree the mount's root shows: 0, or view k's tree k + 1 with --view.
  size_t root_tree() const { return root_tree_; }
  uint32_t side(size_t tree) const { return tree == 0 ? 0 : views_.views()[tree - 1]->side(); }
  // The tree of view `side`, or nullopt.
  std::optional<size_t> TreeOfSide(uint32_t side) const;

  // `e` as a file of `tree` (any entry kind; only regular files have bytes). NotFound for a file
  // the view leaves out; a damaged view index is counted (CountError).
  Result<TreeFile> Resolve(size_t tree, const format::Entry& e) const;
  // Sample members (MissLoader::SampleMembers) as files of `tree`; left-out files are dropped.
  std::vector<TreeFile> Members(size_t tree, const std::vector<format::Entry>& members) const;
  // The resized file a view key names (prefetch jobs carry keys); NotFound if it names none.
  Result<TreeFile> FileOfKey(cache::CacheKey key) const;
  // A path given to a control channel (the hint) as a tree and an entry: "@256/train/x.jpg" is
  // view 256's file, any other path the root tree's. `path` is relative to the root, or
  // absolute under `mountpoint` (may be empty).
  Result<std::pair<size_t, format::Entry>> ResolvePath(const std::string& mountpoint,
                                                       std::string_view path) const;

  // Loads resized file `f` whole and checks it. Errors are counted (CountError).
  Result<cache::Blob> Load(const TreeFile& f, ReadCause cause);
  // Loads resized `files`, neighbours in a view shard coalesced into one read; `found` gets each
  // file that passes its check. Failures are left for the files' own reads to report.
  void LoadMany(std::vector<TreeFile> files, ReadCause cause,
                const std::function<void(const TreeFile&, cache::Blob)>& found);

  // A READ reply of `bytes` from `tree` at `offset` (tree > 0).
  void CountServed(size_t tree, uint64_t offset, uint64_t bytes);
  // Per view: files and bytes served, resized files loaded by cause.
  void Stats(std::vector<ViewStats>* out) const;

 private:
  struct Counters {
    std::atomic<uint64_t> files_served{0};  // READs at offset 0 of a regular file
    std::atomic<uint64_t> bytes_served{0};
    std::atomic<uint64_t> resized_loads{0};  // demand loads of resized files from view shards
    std::atomic<uint64_t> resized_load_bytes{0};
    std::atomic<uint64_t> readahead_loads{0};  // the same, loaded ahead (readahead, hint, members)
    std::atomic<uint64_t> readahead_load_bytes{0};
  };
  void CountLoad(size_t tree, ReadCause cause, uint64_t bytes);

  const format::Dataset& dataset_;
  const format::ViewSet views_;
  size_t root_tree_ = 0;
  OriginReader& origin_;
  std::unique_ptr<Counters[]> counters_;  // one per view
};

}  // namespace mmfs::fs
