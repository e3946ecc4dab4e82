// The first phase of `mmfs pack`: the sources given on the command line become one SourceNode
// tree, the tree of the mount. Folders are scanned (folder_source.h) and get their captions from
// metadata (captions.h); a tar becomes a folder named after it whose members are read later,
// while packing; several sources merge at the root, and a path two sources both provide is an
// error naming it. No file contents are read here.
//
// Thread-safety: reentrant.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "base/status.h"
#include "tools/pack/packer.h"
#include "tools/pack/reporter.h"
#include "tools/pack/source_access.h"
#include "tools/pack/source_tree.h"

namespace mmfs::pack {

struct ScannedSources {
  SourceNode root;  // sorted; its mtime is the latest of the sources'
  // Files found and their bytes, plus the size of each tar (its members are counted as they are
  // read): the totals of the progress.
  uint64_t files = 0;
  uint64_t bytes = 0;
  uint64_t tars = 0;
  std::set<std::string> layouts;  // "folder", "webdataset", "hf-imagefolder", "coco"
  // Owners and read bits of every file whose bytes go in (files, tars, annotation files).
  AccessTally access;
};

// Scans `options.sources`, reporting a phase per source and what it leaves out, and counts into
// `summary` what the scan decides (inputs skipped, captions added or without an image). Warns
// once when the sources mix owners or access levels (AccessTally::MixedWarning).
Result<ScannedSources> ScanSources(const PackOptions& options, PackReporter& reporter,
                                   PackSummary* summary);

}  // namespace mmfs::pack
