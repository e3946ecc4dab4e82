// Checking a dataset's views for `mmfs verify`: each view's index and shards against the xxh3 in
// its manifest, then every resized image against its own checksum (so the damaged paths can be
// named), and every view that does not open at all. The shards are read through the origin the
// views were opened on (ViewSet::Open), as the mount reads them.
//
// Thread-safety: reads `origin` (safe from any thread); the rest is const.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fs/format/dataset.h"
#include "fs/format/view_set.h"
#include "fs/origin/origin.h"

namespace mmfs::view {

struct ViewVerifyResult {
  uint64_t files_checked = 0;   // resized images read and checksummed
  uint64_t bytes_checked = 0;
  uint64_t damaged_files = 0;
  std::vector<std::string> problems;  // "views/256/shard-00000.mdb: checksum does not match ..."
};

ViewVerifyResult VerifyViews(const format::Dataset& dataset, const format::ViewSet& views,
                             origin::Origin& origin);

}  // namespace mmfs::view
