// Reading the published views of a dataset (fs/format/view_format.h): which views exist, and for
// any base entry, what its view serves: the resized image in a view shard, the original bytes,
// or nothing (a damaged source left out with --on-bad skip).
//
// This is the format-side API the mount uses to serve MNT/@N/ (docs/views.md). Opening a view
// costs time independent of the number of files (manifest, index header and size, each shard's
// size and LMDB magic); every record is bounds-checked when it is used, so a damaged view index
// yields a Corruption for the entries it touches, never a wild read. A view that does not open
// (damaged manifest, built for another base index, newer version) is left out of the ViewSet
// with its reason; the dataset and its other views keep serving.
//
// Ownership: a View owns its index mapping and shard descriptors; a ViewSet owns its Views.
// Thread-safety: after Open, every const method may be called from any number of threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fs/base/file_util.h"
#include "fs/base/status.h"
#include "fs/format/dataset.h"
#include "fs/format/view_format.h"
#include "fs/format/view_manifest.h"

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
  // Opens DST/views/<side>/ of the dataset whose manifest is `base`. Errors name the file and
  // the problem ("views/256/view.mmfs: size 10, the manifest says 4096", "views/256: built for
  // another index of this dataset (...); rebuild it").
  static Result<std::unique_ptr<View>> Open(const std::string& dataset_dir, uint32_t side,
                                            const Manifest& base);
  ~View();
  View(const View&) = delete;
  View& operator=(const View&) = delete;

  uint32_t side() const { return manifest_.side; }
  const ViewManifest& manifest() const { return manifest_; }
  const std::string& dir() const { return dir_; }
  uint64_t record_count() const { return record_count_; }
  // On-disk bytes of the view: its index and shards (not the manifest).
  uint64_t bytes_on_disk() const;

  // What the view serves for `entry`, a validated entry of the base dataset. Directories and
  // symlinks are always kOriginal. O(log records).
  Result<ViewFile> Lookup(const Entry& entry) const;
  // Record `i` of the index, validated (for verify and tools).
  Result<ViewRecord> GetRecord(uint64_t i) const;

  // Reads `len` bytes at `offset` of a kView file, unverified.
  // REQUIRES: file.source == kView, offset + len <= file.size.
  Status ReadRange(const ViewFile& file, uint64_t offset, size_t len, char* out) const;
  // Reads a whole kView file and checks its XXH3-64. `path` names it in the error.
  // REQUIRES: file.source == kView; `out` has room for file.size bytes.
  Status ReadVerified(const ViewFile& file, const std::string& path, char* out) const;
  // Reads `len` bytes at `offset` of view shard `shard` (several files in one read; the caller
  // checks each with Check). InvalidArgument outside the shard.
  Status ReadShardSpan(uint32_t shard, uint64_t offset, size_t len, char* out) const;
  // Checks `bytes` against kView file `file`'s XXH3-64; the Corruption names shard, offset and
  // `path`.
  Status Check(const ViewFile& file, const std::string& path, std::string_view bytes) const;

 private:
  View() = default;
  Status OpenIndex(const Manifest& base);
  Status OpenShards();
  Status CheckRecord(uint64_t i, const ViewRecord& r) const;

  std::string dir_;
  ViewManifest manifest_;
  const char* index_map_ = nullptr;  // owned mapping of view.mmfs
  size_t index_map_size_ = 0;
  const char* records_ = nullptr;    // points into index_map_
  uint64_t record_count_ = 0;
  std::vector<UniqueFd> shard_fds_;
};

class ViewSet {
 public:
  // Opens every published view of `base` (no views directory: an empty set).
  static ViewSet Open(const Dataset& base);

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
