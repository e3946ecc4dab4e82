// Reads a folder tree (the ImageFolder and img2dataset "files" layouts, or any tree of files)
// into a SourceNode tree without reading file contents.
//
// Regular files and directories are kept; symbolic links are kept when they resolve inside the
// source (absolute targets are rewritten as relative ones so they resolve inside the mount) and
// skipped with a warning when they leave it or dangle; sockets, FIFOs and devices are skipped
// with a warning. Directory symlinks are kept as links, never followed, so no cycle is possible.
//
// Thread-safety: reentrant.
#pragma once

#include <string>

#include "base/status.h"
#include "tools/pack/reporter.h"
#include "tools/pack/source_access.h"
#include "tools/pack/source_tree.h"

namespace mmfs::pack {

struct ScanCounts {
  uint64_t files = 0;
  uint64_t bytes = 0;
  uint64_t skipped = 0;
  AccessTally* access = nullptr;  // when set, every regular file found is added to it; not owned
};

Result<SourceNode> ScanFolder(const std::string& root, PackReporter& reporter,
                              ScanCounts* counts);

}  // namespace mmfs::pack
