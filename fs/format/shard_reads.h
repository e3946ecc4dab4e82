// Whole files and whole shards read through an Origin, for the tools (mmfs verify, view build
// and verify), the fuzzers and tests: a file checked against its checksum in the index, a shard
// hashed. The daemon reads through OriginReader (fs/read/origin_reader.h) instead, which also
// counts each read by cause and times it.
//
// Ownership: the bytes returned are the caller's; the origin, dataset and view are borrowed for
// the call.
// Thread-safety: as the origin's ReadSpan (any number of threads).
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "fs/format/dataset.h"
#include "fs/format/view_set.h"
#include "fs/origin/origin.h"

namespace mmfs::format {

// Regular file `entry` of `dataset` read whole from `origin`'s kDatasetTree and checked against
// its XXH3-64 (Dataset::CheckSum: the Corruption names shard, offset and path).
// InvalidArgument for an entry that is not a regular file.
Result<origin::OriginBytes> ReadVerified(origin::Origin& origin, const Dataset& dataset,
                                         const Entry& entry);
// kView file `file` of `view` read whole from the view's tree and checked (View::Check; `path`
// names it in the error). InvalidArgument for a file that is not kView.
Result<origin::OriginBytes> ReadVerified(origin::Origin& origin, const View& view,
                                         const ViewFile& file, const std::string& path);
// XXH3-64 of the whole of shard `ref`, read in large pieces (mmfs verify's shard checksum).
Result<uint64_t> HashShard(origin::Origin& origin, origin::ShardRef ref);

}  // namespace mmfs::format
