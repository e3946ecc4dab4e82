// The last phase of a view build: once every view shard is finished, the view's index
// (view.mmfs, fs/format/view_writer.h) and its manifest are written into the staging directory,
// the manifest last (fs/format/view_manifest.h): a view directory without one is never a view.
//
// Thread-safety: reentrant.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "fs/format/manifest.h"
#include "fs/format/view_format.h"
#include "tools/pack/packer.h"
#include "tools/view/view_checkpoint.h"

namespace mmfs::view {

// What the view's manifest records besides its index, shards and counts.
struct ViewMaking {
  uint32_t side = 0;
  int quality = 0;
  pack::OnBadImage on_bad = pack::OnBadImage::kFail;
};

// Writes the index of `records` (sorted here by entry) and then the manifest into `work_dir`,
// both durably (the folder itself is synced by the caller). Returns the index's size in bytes.
// REQUIRES: every shard of `shards` is finished.
Result<uint64_t> WriteViewIndexAndManifest(std::vector<format::ViewRecord>& records,
                                           const std::vector<format::ShardInfo>& shards,
                                           const ViewCounts& counts, const format::Manifest& base,
                                           const ViewMaking& making, const std::string& work_dir);

}  // namespace mmfs::view
