// The rules for opening a dataset's own files on a local filesystem: read-only, never through a
// symbolic link, regular files only. LocalFileOrigin opens every shard this way; the format
// reader (fs/format) opens manifests and indexes this way.
//
// Thread-safety: reentrant functions.
#pragma once

#include <cstdint>
#include <string>

#include "base/file_util.h"
#include "base/status.h"

namespace mmfs::origin {

// Opens a file of a dataset (or of one of its views) read-only, with `flags` added, never
// through a symbolic link: a dataset's files are its own, and a shard linked to another file
// would be read, and its size reported, as the shard. InvalidArgument naming `path` when it is a
// link or not a regular file.
Result<UniqueFd> OpenDatasetFile(const std::string& path, int flags = 0);

// The whole of a small file of a dataset (a manifest), opened as above; InvalidArgument when it
// is larger than `max_bytes`.
Result<std::string> ReadDatasetFile(const std::string& path, uint64_t max_bytes);

}  // namespace mmfs::origin
