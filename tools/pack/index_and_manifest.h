// The last phase of `mmfs pack`: once every shard is finished, the index (entries numbered by
// format::IndexBuilder, the rule of format.h) and the manifest are written into the work
// directory and synced, and the summary gets the dataset's counts.
//
// Thread-safety: reentrant.
#pragma once

#include <set>
#include <string>

#include "base/status.h"
#include "tools/pack/packer.h"
#include "tools/pack/shard_sequence.h"
#include "tools/pack/source_tree.h"

namespace mmfs::pack {

// The entries of `root` that are not skipped go into the index, each regular file at the place
// `shards` gave its sample. `layouts` are the source layouts found ("folder", ...).
// REQUIRES: every shard of `shards` is finished.
Status WriteIndexAndManifest(const SourceNode& root, const ShardSequence& shards,
                             const PackOptions& options, const std::set<std::string>& layouts,
                             const std::string& work_dir, PackSummary* summary);

}  // namespace mmfs::pack
