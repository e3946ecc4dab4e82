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
// Reads: the Filesystem reads every file of a view (FileOf) through the same read path as the
// original tree (FileReader and the Prefetcher, view_files.h): the same tiers,
// readahead, sample members, hint and push, with a resized file under a key of its own (ViewKey)
// loaded from its view shard and checked against its XXH3 before anything is cached or served.
//
// Ownership: borrows the dataset, the view files and the origin reader (for error counting),
//   which must outlive it.
// Thread-safety: all methods are thread-safe (everything is immutable after construction).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "cache/tier.h"
#include "fs/format/dataset.h"
#include "fs/format/view_set.h"
#include "fs/names/fs_types.h"
#include "fs/read/view_files.h"
#include "fs/stats/stats.h"

namespace mmfs::fs {

class ViewNamespace {
 public:
  // With views.root_tree() != 0 the mount's root is that view's root.
  ViewNamespace(const format::Dataset& dataset, ViewFiles& views, OriginReader& origin);

  // The first inode above every view's range (the control directory's).
  uint64_t end_ino() const { return 1 + entries_ * views_.tree_count(); }
  // Whether `ino` is a view file or directory (with a root view: the base range too).
  bool Owns(uint64_t ino) const {
    return (ino > entries_ && ino < end_ino()) ||
           (views_.root_tree() != 0 && ino >= 1 && ino <= entries_);
  }
  bool has_root_view() const { return views_.root_tree() != 0; }
  // `@N` in the root: view N's root directory; nullopt for any other name (or with a root view).
  std::optional<Attr> LookupInRoot(std::string_view name) const;

  Result<Attr> Lookup(uint64_t parent, std::string_view name);
  Result<Attr> GetAttr(uint64_t ino);
  Status ReadDir(uint64_t ino, uint64_t offset,
                 const std::function<bool(std::string_view, const Attr&, uint64_t)>& emit);
  Result<std::string> ReadLink(uint64_t ino);
  // The file `ino` is (any kind of entry); NotFound for a left-out file or a foreign inode.
  Result<TreeFile> FileOf(uint64_t ino) const;
  // `ls MNT/.mmfs/views`: one (name, symlink target) per view served, the target relative to
  // `.mmfs/views/` ("../../@256"; with a root view, that view only, "../..").
  std::vector<std::pair<std::string, std::string>> ServedViews() const;

 private:
  uint64_t Ino(size_t tree, uint64_t index) const;
  Attr NodeAttr(const TreeFile& n) const;

  const format::Dataset& dataset_;
  ViewFiles& views_;
  const uint64_t entries_;
  OriginReader& origin_;
};

}  // namespace mmfs::fs
