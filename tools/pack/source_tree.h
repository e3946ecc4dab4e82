// The tree a packer input reader produces: directories, regular files and symbolic links with the
// names, modes and times they will have in the mount. Children are kept sorted by name bytewise,
// the order of the index and of the shards.
//
// Thread-safety: plain data.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mmfs::pack {

struct SourceNode {
  std::string name;
  uint32_t mode = 0;  // st_mode with type bits
  int64_t mtime_ns = 0;
  uint64_t size = 0;          // regular files; a tar's folder: the archive's size (progress)
  std::string source_path;    // regular files: where to read the bytes
  bool has_inline_data = false;  // regular files made while scanning (captions from metadata)
  std::string inline_data;
  std::string tar_path;       // directories: fill with the members of this tar while packing
  std::string link_target;    // symlinks
  std::vector<SourceNode> children;  // directories, sorted by name

  // Filled in while packing.
  bool skipped = false;
  uint32_t shard = 0;
  uint64_t sample = 0;
  uint64_t offset_in_record = 0;
  uint64_t checksum = 0;
  uint32_t width = 0;
  uint32_t height = 0;
};

// Sample key of a file name: the part before the first dot ("000123.jpg" -> "000123"), the
// WebDataset rule, or the whole name when it starts with a dot or has none.
std::string_view SampleKeyOf(std::string_view name);

// A file's modification time in nanoseconds, as the index keeps it.
inline int64_t MtimeNs(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

// The one grouping rule of mmfs pack: the files of a folder that share a sample key are one
// sample. In a sorted folder they are a run; this returns the end of the run that starts at
// `siblings[first]` (a regular file). Tar members follow the same rule through MemberKey
// (tar_grouping.h), which gathers them wherever they are in the archive.
size_t SampleRunEnd(const std::vector<SourceNode>& siblings, size_t first);

// The child of `dir` named `name`, or nullptr.
SourceNode* FindChild(SourceNode* dir, std::string_view name);
// Sorts every directory's children by name, bytewise (after children were added).
void SortTree(SourceNode* dir);

}  // namespace mmfs::pack
