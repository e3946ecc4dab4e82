#include "tools/view/view_index_and_manifest.h"

#include <algorithm>

#include "base/file_util.h"
#include "fs/format/format.h"
#include "fs/format/view_manifest.h"
#include "fs/format/view_writer.h"
#include "tools/stage/stamp.h"
#include "tools/view/image_resizer.h"

namespace mmfs::view {

Result<uint64_t> WriteViewIndexAndManifest(std::vector<format::ViewRecord>& records,
                                           const std::vector<format::ShardInfo>& shards,
                                           const ViewCounts& counts, const format::Manifest& base,
                                           const ViewMaking& making, const std::string& work_dir) {
  std::sort(records.begin(), records.end(),
            [](const format::ViewRecord& a, const format::ViewRecord& b) {
              return a.entry < b.entry;
            });
  format::ViewIndexIdentity id;
  id.side = making.side;
  id.base_entry_count = base.entries;
  id.base_index_checksum = base.index_checksum;
  MMFS_ASSIGN_OR_RETURN(
      format::IndexFileInfo index,
      format::WriteViewIndexFile(work_dir + "/" + format::kViewIndexFileName, id, records));
  format::ViewManifest m;
  m.version = format::kViewFormatVersion;
  m.side = making.side;
  m.created = stage::UtcNow();
  m.tool = stage::ToolName();
  m.base_entries = base.entries;
  m.base_index_checksum = base.index_checksum;
  m.resized = counts.resized;
  m.unchanged_images = counts.unchanged;
  m.bad_images = counts.bad;
  m.omitted = counts.omitted;
  m.view_bytes = counts.view_bytes;
  m.source_bytes = counts.source_bytes;
  m.index_file = format::kViewIndexFileName;
  m.index_size = index.size;
  m.index_checksum = index.checksum;
  m.shards = shards;
  m.quality = static_cast<uint32_t>(making.quality);
  m.on_bad = pack::OnBadName(making.on_bad);
  m.resampler = ResamplerName();
  // The manifest last: the folder is published only after this.
  MMFS_RETURN_IF_ERROR(WriteFileDurably(work_dir + "/" + format::kManifestFileName, m.ToJson()));
  return index.size;
}

}  // namespace mmfs::view
