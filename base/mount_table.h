// The mount table (/proc/self/mountinfo), parsed: who is mounted where, with which filesystem.
//
// The kernel escapes space, tab, newline and backslash in paths and options as \ooo (octal);
// entries here hold them unescaped, so a mount point with a space in its name compares equal to
// the path the caller has.
//
// Thread-safety: free functions over a fresh read of the file; safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mmfs {

struct MountEntry {
  int64_t mount_id = -1;      // the table's first field; statx(STATX_MNT_ID) gives the same
  std::string device;         // "MAJ:MIN"
  std::string root;           // the part of the filesystem mounted there ("/" for all of it)
  std::string mount_point;
  std::string mount_options;  // the mount's own flags ("ro,nosuid,nodev,relatime")
  std::string fs_type;        // "fuse.mmfs", "overlay", ...
  std::string source;         // what mount(2) was given as the source ("mmfs:/data/x.mmfs")
  std::string super_options;  // the filesystem's own options ("ro,lowerdir=...")
};

// Every entry, in the table's order (mounts stacked on one point: the visible one last).
std::vector<MountEntry> ReadMountTable(const std::string& path = "/proc/self/mountinfo");

// The visible mount at `mount_point` (the last one stacked there), if any.
std::optional<MountEntry> FindMount(const std::string& mount_point,
                                    const std::string& table = "/proc/self/mountinfo");

// Whether the comma-separated `options` (mount_options or super_options) hold the word `word`
// itself or `word=...`: HasMountOption("rw,nosuid", "nosuid"), HasMountOption("user_id=0", "user_id").
bool HasMountOption(const std::string& options, const std::string& word);
// The value of `key=value` in `options`, if present.
std::optional<std::string> MountOptionValue(const std::string& options, const std::string& key);

// "\040" -> " " and the like; other text unchanged.
std::string UnescapeMountField(const std::string& field);

}  // namespace mmfs
