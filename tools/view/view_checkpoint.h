// The resume checkpoint of `mmfs view add` (checkpoint.jsonl in the view's staging directory):
// what lets an interrupted build continue from its last finished view shard (--resume) and end
// byte-identical to an uninterrupted build. This header is the only code that knows the layout
// of the file's lines; the builder sees typed records. The file itself (durable appends, reading
// up to the first unusable line, continuing there) is the shared tools/stage/checkpoint_file.h.
//
// A shard line is appended only after the view shard it describes is complete and synced.
//
//   header (line 1):  {"mmfs_view_checkpoint":1,"options":"<fingerprint>"}
//   shard  (2, 3...): {"counts":COUNTS,"next":u64,"records":[RECORD,...],
//                      "shard":{"data_bytes":u64,"file":"shard-NNNNN.mdb","first_sample":u64,
//                               "samples":u64,"size":u64,"xxh3":"<16 hex digits>"}}
//   RECORD:           [entry,data_offset,size,"<xxh3, 16 hex digits>",width,height,kind]
//   COUNTS:           {"bad":u64,"omitted":u64,"resized":u64,"source_bytes":u64,
//                      "unchanged":u64,"view_bytes":u64}
//
// A shard line lists the view records committed since the line before it (the shard's resized
// images in key order, and images left out by --on-bad skip), `next` the number of candidates
// committed (tools/view/view_candidates.h) and `counts` the build's counts so far.
//
// Compatibility: this is the layout mmfs has written since views exist, kept as it is so that a
// build interrupted before an upgrade still resumes after it. A line that does not parse, does
// not have this shape, does not follow the lines before it (the next shard file name, first
// sample, one resized record per sample) or whose shard file is not as recorded ends the usable
// part of the file: the build continues from the shard before it.
//
// Thread-safety: the functions are reentrant.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "fs/format/manifest.h"
#include "fs/format/view_format.h"
#include "tools/stage/checkpoint_file.h"

namespace mmfs::view {

// The build's cumulative counts, stored in every shard line.
struct ViewCounts {
  uint64_t unchanged = 0;  // images not larger than N (or animated): the original serves
  uint64_t bad = 0;        // images that did not decode
  uint64_t omitted = 0;    // of those, left out of the view (--on-bad skip)
  uint64_t source_bytes = 0;
  uint64_t view_bytes = 0;
  uint64_t resized = 0;
};

// One finished view shard and what was committed since the shard before it.
struct ViewCheckpointShard {
  format::ShardInfo info;
  // Resized and omitted records in commit order. data_offset is where a resized image landed in
  // the shard file; `shard` is not stored (a resized record belongs to this line's shard).
  std::vector<format::ViewRecord> records;
  uint64_t next = 0;  // candidates committed
  ViewCounts counts;
};

// One line each, without the '\n'.
std::string EncodeViewCheckpointHeader(std::string_view fingerprint);
std::string EncodeViewCheckpointShard(const ViewCheckpointShard& shard);
// Corruption when the line is not a shard line. Every record's `shard` is 0.
Result<ViewCheckpointShard> DecodeViewCheckpointShard(std::string_view line);

// What a view checkpoint says, up to its last usable line.
struct LoadedViewCheckpoint {
  std::vector<format::ShardInfo> shards;
  std::vector<uint64_t> record_offsets;      // of every resized image of `shards`, by key
  std::vector<format::ViewRecord> records;   // of `shards`, `shard` filled in
  uint64_t next = 0;                         // of the last usable line
  ViewCounts counts;                         // of the last usable line
  uint64_t usable_bytes = 0;                 // the file's prefix of usable lines
};

// Reads the checkpoint at `path`, made by a build of view `side` whose options gave
// `fingerprint` (else InvalidArgument). Shard lines are used in order while they are whole,
// follow the lines before them and `shard_is_whole` says their shard file is still as recorded.
Result<LoadedViewCheckpoint> ReadViewCheckpoint(
    const std::string& path, std::string_view fingerprint, uint32_t side,
    const std::function<bool(const format::ShardInfo&)>& shard_is_whole);

}  // namespace mmfs::view
