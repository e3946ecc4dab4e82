// The resume checkpoint of `mmfs pack` (checkpoint.jsonl in the staging directory): what lets an
// interrupted pack continue from its last finished shard (--resume) and still end byte-identical
// to an uninterrupted pack. This header is the only code that knows the layout of the file's
// lines; the packer sees typed records. The file itself (durable appends, reading up to the first
// unusable line, continuing there) is the shared tools/stage/checkpoint_file.h.
//
// A line is appended only after the shard file it describes is complete, so every whole line
// describes a whole shard.
//
//   header (line 1):  {"mmfs_pack_checkpoint":1,"options":"<fingerprint>"}
//   shard  (2, 3...): {"groups":[GROUP,...],"offsets":[u64,...],
//                      "shard":{"checksum":u64,"data_bytes":u64,"file":"shard-NNNNN.mdb",
//                               "first_sample":u64,"samples":u64,"size":u64}}
//   GROUP:            {"m":[MEMBER,...],"n":u64,"s":i64,"sh":u32}
//   MEMBER:           [outcome,checksum,width,height,offset_in_record]
//
// A shard line lists the sample groups committed since the line before it (CheckpointGroup),
// and `offsets` the byte offset inside the shard file of each of its records, in sample order.
//
// Compatibility: these short positional keys are version 1, what mmfs has written since --resume
// exists. They are kept as they are, not renamed, so that a pack interrupted before an upgrade of
// mmfs still resumes after it (a pack of a large corpus is hours of work); the typed record below
// gives the code the readability the keys lack. A header with any other version is refused with
// a message that names both versions, never guessed at. A line that parses but does not have this
// shape ends the usable part of the file, like a cut line: the pack continues from the shard
// before it, so damaged bytes cost work, never a crash or a wrong dataset.
//
// Thread-safety: the functions are reentrant; a CheckpointWriter is used by one thread at a time.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "fs/format/manifest.h"
#include "tools/pack/source_tree.h"
#include "tools/stage/checkpoint_file.h"

namespace mmfs::pack {

using stage::kCheckpointFileName;
inline constexpr int kCheckpointVersion = 1;

// What packing did with one member of a sample group. The numbers are the file's.
enum class MemberOutcome : int {
  kPacked = 0,
  kBadImage = 1,           // a damaged image, left out (--on-bad skip)
  kLeftOutWithSample = 2,  // left out because another member of its sample was a bad image
};

struct CheckpointMember {
  MemberOutcome outcome = MemberOutcome::kPacked;
  // What the packer found, so a resumed pack need not read the member again. Written for every
  // member as the packer had it; meaningful for kPacked only.
  uint64_t checksum = 0;  // XXH3-64 of the contents
  uint32_t width = 0;     // image size, 0 when not an image
  uint32_t height = 0;
  uint64_t offset_in_record = 0;  // where the member starts inside its sample's record
};

// One sample group as the packer committed it.
struct CheckpointGroup {
  // Identifies the members by name (CheckpointNamesSum): names may be any bytes, JSON wants
  // UTF-8, so they are not stored as text.
  uint64_t names_sum = 0;
  std::vector<CheckpointMember> members;  // in the group's member order
  int64_t sample = -1;  // the sample number of its record; -1 when every member was left out
  uint32_t shard = 0;   // the shard holding that record; 0 when sample is -1
};

// One finished shard and the groups committed since the shard before it.
struct CheckpointShard {
  format::ShardInfo info;
  std::vector<uint64_t> record_offsets;  // info.samples of them
  std::vector<CheckpointGroup> groups;
};

// The XXH3-64 of the members' names, each with its terminating NUL.
uint64_t CheckpointNamesSum(std::span<SourceNode* const> members);

// One line each, without the '\n'.
std::string EncodeCheckpointHeader(std::string_view fingerprint);
std::string EncodeCheckpointShard(const CheckpointShard& shard);
// The fingerprint of a header line. InvalidArgument for another version; Corruption when the
// line is not a header.
Result<std::string> DecodeCheckpointHeader(std::string_view line);
// Corruption when the line is not a shard line of this version.
Result<CheckpointShard> DecodeCheckpointShard(std::string_view line);

// What a checkpoint file says, up to its last usable line.
struct LoadedCheckpoint {
  std::vector<format::ShardInfo> shards;
  std::vector<uint64_t> record_offsets;  // of every sample of `shards`, by sample number
  std::deque<CheckpointGroup> groups;     // in commit order
  uint64_t usable_bytes = 0;              // the file's prefix of usable lines
};

// Reads the checkpoint at `path`, made by a pack whose options gave `fingerprint` (else
// InvalidArgument). Shard lines are used in order while they are whole, consistent with the lines
// before them (the next shard file name, first sample and sample numbers) and `shard_is_whole`
// says their shard file is still as recorded; reading stops at the first that is not.
Result<LoadedCheckpoint> ReadCheckpoint(
    const std::string& path, std::string_view fingerprint,
    const std::function<bool(const format::ShardInfo&)>& shard_is_whole);

// Appends shard lines to a checkpoint file, each one durable before Append returns.
class CheckpointWriter {
 public:
  // A new file at `path` (replacing one there) holding the header.
  static Result<CheckpointWriter> Create(const std::string& path, std::string_view fingerprint);
  // Continues the file at `path` after its first `usable_bytes` (LoadedCheckpoint), dropping
  // what follows them.
  static Result<CheckpointWriter> Continue(const std::string& path, uint64_t usable_bytes);

  Status Append(const CheckpointShard& shard);

  // Shard lines appended by this writer (not those of an earlier run it continues).
  uint64_t appended() const { return appended_; }
  const std::string& path() const { return file_.path(); }

 private:
  explicit CheckpointWriter(stage::CheckpointFile file) : file_(std::move(file)) {}

  stage::CheckpointFile file_;
  uint64_t appended_ = 0;
};

}  // namespace mmfs::pack
