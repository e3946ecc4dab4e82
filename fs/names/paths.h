// Paths given to the daemon by its control channels (mmfs warmup's lines, Warmup in
// fs/readahead/warmup.h) resolved to index entries of the original tree. (The hint's paths, which
// may name files of a view, go through ViewFiles::ResolvePath, fs/read/view_files.h.)
//
// In fs/names, below the rooms that take paths. Owns nothing: borrows the dataset per call.
// Thread-safety: pure functions over a dataset, which is read-only.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "fs/format/dataset.h"

namespace mmfs::fs {

// The entry at `path`, relative to the root or absolute under `mountpoint` (may be empty).
// NotFound for a missing name, NotADirectory when a step is not a directory.
Result<format::Entry> ResolvePath(const format::Dataset& dataset, const std::string& mountpoint,
                                  std::string_view path);
// Regular files at or below `path` (a file or a folder), in index order.
Result<std::vector<format::Entry>> FilesAt(const format::Dataset& dataset,
                                           const std::string& mountpoint, std::string_view path);

}  // namespace mmfs::fs
