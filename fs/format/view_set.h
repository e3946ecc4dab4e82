// Reading the published views of a dataset (fs/format/view_format.h): which views exist, and for
// any base entry, what its view serves: the resized image in a view shard, the original bytes,
// or nothing (a damaged source left out with --on-bad skip).
//
// This is the format-side API the mount uses to serve MNT/@N/ (docs/views.md). As for the
// dataset (dataset.h), it only parses and locates: a view's shards are a tree of the dataset's
// Origin (fs/origin/origin.h), added when the view opens and read through the origin. Opening a
// view costs time independent of the number of files (manifest, index header and size; each
// shard's size and LMDB magic, checked by the origin); every record is bounds-checked when it is
// used, so a damaged view index yields a Corruption for the entries it touches, never a wild
// read. A view that does not open (damaged manifest or shard, built for another base index,
// newer version) is left out of the ViewSet with its reason; the dataset and its other views
// keep serving.
//
// Ownership: a View owns its index mapping; the origin owns its shard descriptors (if any). A
// ViewSet owns its Views.
// Thread-safety: after Open, every const method may be called from any number of threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "fs/format/dataset.h"
#include "fs/format/view_format.h"
#include "fs/format/view_manifest.h"
#include "fs/origin/origin.h"

namespace mmfs::format {

// How one base entry appears in a view.
struct ViewFile {
  enum class Source {
    kOriginal,  // the base entry itself: serve it exactly as the original tree does
    kView,      // a resized image: `size` bytes at `data_offset` of view shard `shard`
    kOmitted,   // not in the view (its source image did not decode; --on-bad skip)
  };
  Source source = Source::kOriginal;
  uint64_t size = 0;         // bytes served (st_size); kOmitted: 0
  uint64_t checksum = 0;     // XXH3-64 of those bytes
  uint32_t shard = 0;        // kView: view shard; kOriginal: base shard
  uint64_t data_offset = 0;  // kView: offset in the view shard; kOriginal: in the base shard
  uint16_t width = 0;        // images: pixel size of what is served (0 if unknown)
  uint16_t height = 0;
};

// "DST/views/256".
std::string ViewDir(const std::string& dataset_dir, uint32_t side);
// The side a directory name in DST/views/ stands for: decimal, no sign, no leading zero, within
// kMinViewSide..kMaxViewSide. False for anything else (".256.partial-12", "tmp", "0256").
bool ParseViewSide(std::string_view name, uint32_t* side);

class View {
 public:
  // Opens DST/views/<side>/ of the dataset whose manifest is `base`, and adds the view's shards
  // to `origin` (the dataset's: for local files, rooted at `dataset_dir`) as tree `tree`. Errors
  // name the file and the problem ("views/256/view.mmfs: size 10, the manifest says 4096",
  // "views/256: built for another index of this dataset (...); rebuild it"); after one, no shard
  // of the view is in the origin.
  static Result<std::unique_ptr<View>> Open(const std::string& dataset_dir, uint32_t side,
                                            const Manifest& base, origin::Origin& origin,
                                            uint32_t tree);
  ~View();
  View(const View&) = delete;
  View& operator=(const View&) = delete;

  uint32_t side() const { return manifest_.side; }
  const ViewManifest& manifest() const { return manifest_; }
  const std::string& dir() const { return dir_; }
  uint64_t record_count() const { return record_count_; }
  // The origin's tree of this view's shards: a kView file's bytes are at
  // ShardRef{tree(), file.shard}.
  uint32_t tree() const { return tree_; }
  // On-disk bytes of the view: its index and shards (not the manifest).
  uint64_t bytes_on_disk() const;

  // What the view serves for `entry`, a validated entry of the base dataset. Directories and
  // symlinks are always kOriginal. O(log records).
  Result<ViewFile> Lookup(const Entry& entry) const;
  // Record `i` of the index, validated (for verify and tools).
  Result<ViewRecord> GetRecord(uint64_t i) const;

  // Checks `bytes` against kView file `file`'s XXH3-64; the Corruption names shard, offset and
  // `path`.
  Status Check(const ViewFile& file, const std::string& path, std::string_view bytes) const;

 private:
  View() = default;
  Status OpenIndex(const Manifest& base);
  // The view's shards as an origin tree (the place, sizes and magic its manifest says).
  origin::TreeSpec ShardTree() const;
  Status CheckRecord(uint64_t i, const ViewRecord& r) const;

  std::string dir_;
  ViewManifest manifest_;
  const char* index_map_ = nullptr;  // owned mapping of view.mmfs
  size_t index_map_size_ = 0;
  const char* records_ = nullptr;    // points into index_map_
  uint64_t record_count_ = 0;
  uint32_t tree_ = 0;
};

class ViewSet {
 public:
  // Opens every published view of `base` (no views directory: an empty set), view k's shards
  // added to `origin` (the dataset's, rooted at base.dir() for local files) as tree k + 1.
  // REQUIRES: `origin` has no tree above kDatasetTree yet.
  static ViewSet Open(const Dataset& base, origin::Origin& origin);

  // Ascending by side.
  const std::vector<std::unique_ptr<View>>& views() const { return views_; }
  // The view of side `side`, or nullptr.
  const View* Find(uint32_t side) const;
  // Views that exist but did not open, each naming the view and why.
  const std::vector<Status>& problems() const { return problems_; }

 private:
  std::vector<std::unique_ptr<View>> views_;
  std::vector<Status> problems_;
};

}  // namespace mmfs::format
