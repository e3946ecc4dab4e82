// Writing a view's index file (view.mmfs, fs/format/view_format.h). The view's shards are written
// with the base format's ShardWriter (fs/format/dataset_writer.h): they are the same kind of file.
//
// Thread-safety: a pure function (one writer per path).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "base/status.h"
#include "fs/format/dataset_writer.h"
#include "fs/format/view_format.h"

namespace mmfs::format {

struct ViewIndexIdentity {
  uint32_t side = 0;
  uint64_t base_entry_count = 0;
  uint64_t base_index_checksum = 0;
};

// Writes header + `records` to `path` (which must not exist) and fsyncs it.
// REQUIRES: records sorted by entry, strictly increasing.
Result<IndexFileInfo> WriteViewIndexFile(const std::string& path, const ViewIndexIdentity& id,
                                         std::span<const ViewRecord> records);

}  // namespace mmfs::format
