// Who may read the sources, so that the packed dataset lets no more users read them.
//
// A dataset's shards hold every file's bytes, and whoever can read a shard reads them all with
// `strings`, whatever mode the index gives each file. So the packer notes, for every source file,
// which of "group" and "other" can reach it (its own read bits and the search bits of every
// folder above it, up to /) and its owner; the outputs then get only the read bits that every
// file grants (AccessTally::shared_reach), and a pack that mixes owners or access levels says so
// in one warning (MixedWarning), since the dataset can no longer keep them apart.
//
// Thread-safety: an AccessTally is used by one thread at a time.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "base/status.h"

namespace mmfs::pack {

// Group and other read bits (0044) that the folders of `real_path` (absolute, no symlinks) let
// through: a folder without a class's search bit (x) hides everything below it from that class.
// Includes `real_path` itself when it is a folder. 0044 when nothing can be stat'ed.
uint32_t FolderReach(const std::string& real_path);

class AccessTally {
 public:
  // A source whose bytes go into the dataset: `mode` its st_mode, `folder_reach` what the
  // folders above it let through (FolderReach).
  void AddFile(const std::string& path, uid_t uid, gid_t gid, uint32_t mode,
               uint32_t folder_reach);

  uint64_t files() const { return files_; }
  // The read bits (of 0044) every file added grants; 0044 when none was added. The group bit
  // counts only where every group-readable file belongs to `output_gid`, the group the outputs
  // are created with: another group's members must not gain access.
  uint32_t shared_reach(gid_t output_gid) const;
  // One line when files of several owners, or of several access levels, were added; "" else.
  std::string MixedWarning() const;

 private:
  struct Class {
    uint64_t files = 0;
    std::string example;
  };
  uint64_t files_ = 0;
  uint32_t reach_all_ = 0044;
  std::map<uid_t, Class> owners_;
  std::map<uint32_t, Class> reaches_;  // by the bits (of 0044) the file grants
  std::set<gid_t> group_readable_gids_;
};

struct OutputModes {
  uint32_t file_mode = 0;  // the mask the files got (their umask'd mode is kept within it)
  uint32_t dir_mode = 0;
};
// Gives the files of the finished dataset directory `dir` (made by this pack) no more read bits
// than `tally` allows, and `dir` the matching search bits: 0644/0755 when every source file is
// world-readable, 0600/0700 when one is not. Files are opened O_NOFOLLOW.
Result<OutputModes> RestrictOutputModes(const std::string& dir, const AccessTally& tally);

}  // namespace mmfs::pack
