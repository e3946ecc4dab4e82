// ViewNamespace: the derived image views of a dataset as trees of the mount (docs/views.md).
//
// `MNT/@N/` mirrors the whole dataset with view N's files: a resized image where the view has
// one, the original bytes otherwise, nothing for an entry the view left out. `@N` is found by
// name in the root and is not listed there (like `.mmfs`). With `mmfs mount --view N` the root
// itself is view N's root.
//
// Inodes are computed, never stored: with E base entries and views k = 0..V-1 (ascending side),
// the view copy of base entry i is inode 1 + E * (k + 1) + i, so the inode alone gives (k, i) by
// division; the control inodes start above all views (end_ino()). With a root view the base
// range 1..E is that view's tree instead. The numbers are stable across remounts of the same
// dataset with the same set of views. Sizes come from the view index (View::Lookup, O(log n)):
// nothing is decoded at lookup or read.
//
// Reads: a file the view serves as the original goes through the base read path (same cache
// keys, readahead and sample members as the original tree: the bytes are the same). A resized
// file goes through the same RAM/SSD/cluster tiers under a key of its own (ViewKey: never equal
// to a base key or another view's), loaded whole from its view shard and checked against its
// XXH3 (View::ReadVerified) before anything is cached or served. No readahead, hint or push for
// resized files.
//
// Ownership: owns the ViewSet; borrows the dataset, the file reader and the origin reader (for
//   error counting), which must outlive it. `base_read` must stay callable while serving.
// Thread-safety: all methods are thread-safe (counters are atomics; everything else is
// immutable after construction).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "cache/tier.h"
#include "fs/base/status.h"
#include "fs/core/fs_types.h"
#include "fs/core/stats.h"
#include "fs/format/dataset.h"
#include "fs/format/view_set.h"

namespace mmfs::fs {

class FileReader;
class OriginReader;

// The cache key of view `side`'s resized copy of base entry `index`. Base keys are entry
// indexes (< 2^40 in practice); the top bit keeps every view key out of that range, and the side
// (not the view's position in the set) keeps it stable when views are added or removed, which
// matters for the SSD tier, whose entries outlive the mount.
inline cache::CacheKey ViewKey(uint32_t side, uint64_t index) {
  return (1ull << 63) | (static_cast<uint64_t>(side) << 40) | (index & ((1ull << 40) - 1));
}

class ViewNamespace {
 public:
  // A read of base entry `e` through the original tree's path (readahead included).
  using BaseRead =
      std::function<Result<ReadData>(const format::Entry& e, uint64_t offset, size_t size,
                                     uint64_t stream)>;

  // `root_side` != 0: the mount's root is that view's root (REQUIRES: it is in `views`).
  ViewNamespace(const format::Dataset& dataset, format::ViewSet views, uint32_t root_side,
                FileReader& reader, OriginReader& origin, BaseRead base_read);

  // The first inode above every view's range (the control directory's).
  uint64_t end_ino() const { return 1 + entries_ * (views_.views().size() + 1); }
  // Whether `ino` is a view file or directory (with a root view: the base range too).
  bool Owns(uint64_t ino) const {
    return (ino > entries_ && ino < end_ino()) || (root_k_ >= 0 && ino >= 1 && ino <= entries_);
  }
  bool has_root_view() const { return root_k_ >= 0; }
  // `@N` in the root: view N's root directory; nullopt for any other name (or with a root view).
  std::optional<Attr> LookupInRoot(std::string_view name) const;

  Result<Attr> Lookup(uint64_t parent, std::string_view name);
  Result<Attr> GetAttr(uint64_t ino);
  Status ReadDir(uint64_t ino, uint64_t offset,
                 const std::function<bool(std::string_view, const Attr&, uint64_t)>& emit);
  Result<ReadData> Read(uint64_t ino, uint64_t offset, size_t size, uint64_t stream);
  Result<std::string> ReadLink(uint64_t ino);

  // Per view: files and bytes served, view shard reads.
  void Stats(std::vector<ViewStats>* out) const;
  const format::ViewSet& views() const { return views_; }

 private:
  struct Node {
    size_t k = 0;  // view position in views_
    format::Entry entry;
    format::ViewFile file;
  };
  struct Counters {
    std::atomic<uint64_t> files_served{0};  // READs at offset 0 of a regular file
    std::atomic<uint64_t> bytes_served{0};
    std::atomic<uint64_t> resized_loads{0};  // loads of a resized file from its view shard
    std::atomic<uint64_t> resized_load_bytes{0};
  };

  uint64_t Ino(size_t k, uint64_t index) const;
  // The node of `ino`; NotFound for an entry the view leaves out.
  Result<Node> NodeOf(uint64_t ino) const;
  Result<Node> NodeFor(size_t k, const format::Entry& e) const;
  Attr NodeAttr(const Node& n) const;
  Result<cache::Blob> LoadResized(const Node& n);

  const format::Dataset& dataset_;
  const format::ViewSet views_;
  const uint64_t entries_;
  int root_k_ = -1;
  FileReader& reader_;
  OriginReader& origin_;
  const BaseRead base_read_;
  std::unique_ptr<Counters[]> counters_;  // one per view
};

}  // namespace mmfs::fs
