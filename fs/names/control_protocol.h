// The control protocol: lines written to MNT/.mmfs/control (a symlink to the daemon's control
// FIFO) by `mmfs warmup`, read by the daemon's warm-up (warmup.h). One header for the writer
// and the reader, so the two cannot drift apart.
//
//   warm TIER PATH   load PATH (a file or a folder, recursively, relative to the mount root or
//                    absolute under it) into TIER (ram, or ssd with --cache-dir)
//   evict PATH       drop PATH's files from the RAM and SSD tiers
//   sync TOKEN       shown as warmup.last_sync in stats once every earlier line is handled
//
// Lines end with '\n' ('\r\n' is accepted). Progress comes back only through the warmup section
// of .mmfs/stats (requested, done, skipped, rejected, errors, bytes, evicted, last_sync).
//
// In fs/names, with the control files' names (fs_types.h), below fs/readahead, whose Warmup parses
// the lines; fs/control only carries them (line_pipe.h). Owns nothing.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace mmfs::fs {

struct ControlCommand {
  enum class Kind { kWarm, kEvict, kSync };
  Kind kind = Kind::kSync;
  std::string tier;  // kWarm: "ram" or "ssd"
  std::string arg;   // kWarm, kEvict: the path; kSync: the token
  bool operator==(const ControlCommand&) const = default;
};

// InvalidArgument for an unknown command or a warm line without a tier.
Result<ControlCommand> ParseControlLine(std::string_view line);
// The line for `c`, with its '\n'.
std::string FormatControlLine(const ControlCommand& c);

}  // namespace mmfs::fs
