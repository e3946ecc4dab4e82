// manifest.json of a view (DST/views/N/manifest.json): what the view holds, how it was made and
// which base index it belongs to.
//
// Written last by the view builder, inside the hidden build directory, so a published view always
// has one. Parsing checks the format name and version and every field the reader needs; a view
// of a newer version is refused by name, never misread.
//
// Thread-safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "fs/format/manifest.h"

namespace mmfs::format {

struct ViewManifest {
  uint32_t version = 0;
  uint32_t side = 0;             // N
  std::string created;           // UTC, ISO 8601
  std::string tool;              // "mmfs 0.1.0"
  uint64_t base_entries = 0;     // entries of the base index
  uint64_t base_index_checksum = 0;
  // Counts over the base's regular files.
  uint64_t resized = 0;          // images stored smaller in the view's shards
  uint64_t unchanged_images = 0; // JPEG/PNG/WebP not larger than N (or animated): the originals
  uint64_t bad_images = 0;       // sources that did not decode (kept as original or omitted)
  uint64_t omitted = 0;          // of those, left out of the view (--on-bad skip)
  uint64_t view_bytes = 0;       // bytes of the resized images
  uint64_t source_bytes = 0;     // bytes of the originals they stand for
  std::string index_file;        // "view.mmfs"
  uint64_t index_size = 0;
  uint64_t index_checksum = 0;
  std::vector<ShardInfo> shards;
  // How it was made (informational).
  uint32_t quality = 0;          // --view-quality (JPEG, lossy WebP)
  std::string on_bad;            // fail, skip or keep
  std::string resampler;         // "libvips 8.14.1 lanczos3"

  std::string ToJson() const;
  // `origin` names the file in error messages.
  static Result<ViewManifest> Parse(const std::string& text, const std::string& origin);
};

}  // namespace mmfs::format
