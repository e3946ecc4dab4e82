// Checking a dataset's views for `mmfs verify`: each view's index and shards against the xxh3 in
// its manifest, then every resized image against its own checksum (so the damaged paths can be
// named), and every view that does not open at all.
//
// Thread-safety: a pure function over const objects.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fs/format/dataset.h"
#include "fs/format/view_set.h"

namespace mmfs::view {

struct ViewVerifyResult {
  uint64_t files_checked = 0;   // resized images read and checksummed
  uint64_t bytes_checked = 0;
  uint64_t damaged_files = 0;
  std::vector<std::string> problems;  // "views/256/shard-00000.mdb: checksum does not match ..."
};

ViewVerifyResult VerifyViews(const format::Dataset& dataset, const format::ViewSet& views);

}  // namespace mmfs::view
