// The resume checkpoint's file, shared by the builds that stage (tools/stage/staging.h):
// checkpoint.jsonl in the staging directory, a header line, then one line per finished piece of
// work (a shard). Each writer owns the layout of its lines (tools/pack/checkpoint.h,
// tools/view/view_checkpoint.h); this module owns what makes the file safe to resume from:
//
// - A line is appended and fdatasync'ed before Append returns, and its owner appends it only
//   once what it describes is durable, so every whole line describes finished work. A line cut
//   by the interruption has no '\n' and is never handed to its owner.
// - Reading stops at the first line its owner cannot use (damaged, out of sequence, its shard
//   file not as recorded): the usable part is a prefix of the file, and the build continues
//   after it (CheckpointFile::Continue), dropping the rest. Damaged bytes cost work, never a
//   crash or a wrong result.
//
// Thread-safety: the functions are reentrant; a CheckpointFile is used by one thread at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "base/file_util.h"
#include "base/status.h"

namespace mmfs::stage {

inline constexpr char kCheckpointFileName[] = "checkpoint.jsonl";

// Reads the checkpoint at `path`. `header` is given the first line and returns Ok to go on,
// Corruption when the line is not a header at all (then, as for a file without one whole line,
// the result is InvalidArgument "PATH: empty checkpoint"), or any other error to refuse the file
// (returned as it is). `line` is given each following whole line in order while it returns true.
// The result is the size of the usable prefix: the header and the lines `line` took.
Result<uint64_t> ReadCheckpointFile(const std::string& path,
                                    const std::function<Status(std::string_view)>& header,
                                    const std::function<bool(std::string_view)>& line);

// Whole lines after the header, usable or not (what `mmfs view ls` reports as finished
// shards); 0 when the file cannot be read.
uint64_t CountCheckpointLines(const std::string& path);

// Appends lines to a checkpoint file, each one durable before Append returns.
class CheckpointFile {
 public:
  // A new file at `path` (replacing one there) holding `header`.
  static Result<CheckpointFile> Create(const std::string& path, std::string_view header);
  // Continues the file at `path` after its first `usable_bytes` (ReadCheckpointFile), dropping
  // what follows them.
  static Result<CheckpointFile> Continue(const std::string& path, uint64_t usable_bytes);

  // Appends `line` (without its '\n') and fdatasyncs the file.
  Status Append(std::string_view line);

  const std::string& path() const { return path_; }

 private:
  CheckpointFile(std::string path, UniqueFd fd) : path_(std::move(path)), fd_(std::move(fd)) {}

  std::string path_;
  UniqueFd fd_;
};

}  // namespace mmfs::stage
