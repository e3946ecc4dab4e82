#include "tools/pack/index_and_manifest.h"

#include <deque>
#include <filesystem>

#include "base/file_util.h"
#include "fs/format/dataset_writer.h"
#include "fs/format/format.h"
#include "fs/format/manifest.h"
#include "tools/pack/bucket_source.h"
#include "tools/stage/stamp.h"

namespace mmfs::pack {

namespace {

// Feeds the tree to the builder breadth-first, counting what goes in.
Status AddEntries(const SourceNode& root, const ShardSequence& shards,
                  format::IndexBuilder* index, PackSummary* summary) {
  std::deque<const SourceNode*> dirs = {&root};
  summary->directories = 1;
  while (index->NextDirectory()) {
    const SourceNode* dir = dirs.front();
    dirs.pop_front();
    for (const SourceNode& child : dir->children) {
      if (child.skipped) continue;
      uint32_t type = child.mode & format::kModeTypeMask;
      if (type == format::kModeRegular) {
        format::FileLocation file;
        file.shard = child.shard;
        file.sample = static_cast<uint32_t>(child.sample);
        file.data_offset = shards.RecordOffset(child.sample) + child.offset_in_record;
        file.size = child.size;
        file.checksum = child.checksum;
        file.width = static_cast<uint16_t>(child.width);
        file.height = static_cast<uint16_t>(child.height);
        MMFS_RETURN_IF_ERROR(index->AddFile(child.name, child.mode, child.mtime_ns, file));
        summary->files++;
        summary->bytes += child.size;
      } else if (type == format::kModeSymlink) {
        MMFS_RETURN_IF_ERROR(
            index->AddSymlink(child.name, child.mode, child.mtime_ns, child.link_target));
        summary->symlinks++;
      } else {
        MMFS_RETURN_IF_ERROR(index->AddDirectory(child.name, child.mode, child.mtime_ns));
        dirs.push_back(&child);
        summary->directories++;
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Status WriteIndexAndManifest(const SourceNode& root, const ShardSequence& shards,
                             const PackOptions& options, const std::set<std::string>& layouts,
                             const std::string& work_dir, PackSummary* summary) {
  format::IndexBuilder index(root.mode, root.mtime_ns);
  MMFS_RETURN_IF_ERROR(AddEntries(root, shards, &index, summary));
  MMFS_ASSIGN_OR_RETURN(format::IndexFileInfo index_info,
                        index.Write(work_dir + "/" + format::kIndexFileName));

  format::Manifest m;
  m.version = format::kFormatVersion;
  m.created = stage::UtcNow();
  m.tool = stage::ToolName();
  m.entries = index.entry_count();
  m.files = summary->files;
  m.directories = summary->directories;
  m.symlinks = summary->symlinks;
  m.samples = shards.samples();
  m.total_bytes = summary->bytes;
  m.skipped = summary->skipped;
  m.index_file = format::kIndexFileName;
  m.index_size = index_info.size;
  m.index_checksum = index_info.checksum;
  m.shards = shards.shards();
  m.source_layout.clear();
  for (const std::string& l : layouts) m.source_layout += (m.source_layout.empty() ? "" : "+") + l;
  for (const std::string& s : options.sources) {
    if (IsRemoteSource(s)) {  // a URL, as given
      m.source_paths.push_back(s);
      continue;
    }
    std::error_code ec;
    std::filesystem::path abs = std::filesystem::absolute(s, ec);
    m.source_paths.push_back(ec ? s : abs.lexically_normal().string());
  }
  m.shard_size = options.shard_size;
  m.on_bad = OnBadName(options.on_bad);
  MMFS_RETURN_IF_ERROR(WriteFileDurably(work_dir + "/" + format::kManifestFileName, m.ToJson()));
  MMFS_RETURN_IF_ERROR(FsyncPath(work_dir));

  summary->samples = m.samples;
  summary->shards = m.shards.size();
  summary->dataset_bytes = index_info.size;
  for (const auto& s : m.shards) summary->dataset_bytes += s.size;
  return Status::Ok();
}

}  // namespace mmfs::pack
