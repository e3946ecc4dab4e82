// Mount options: what `mmfs mount -o ...` and its long options mean, as one typed struct.
//
// ParseMountOptions reads the -o lists (comma-separated, repeatable) and then the long options,
// which override them (--ram-cache over -o ram_cache=, ...). Both spellings go through one
// parser: every number and size is read whole (no sign, no trailing text, no empty value) and
// checked against its range, and an error starts with the option as the user typed it
// ("-o threads=5x: not a whole number", "--threads 0: must be between 1 and 256").
// Words the daemon does not know are passed on to libfuse (allow_other, auto_unmount, ...):
// libfuse, not this parser, rejects what it does not take. `suid` and `dev` are refused: every
// mount is nosuid,nodev (fuse_server.cc enforces it again).
//
// Split out of cmd_mount.cc so the parser can be tested without a mount and cmd_mount.cc keeps
// only the run sequence (check, fork, serve).
//
// Ownership: plain values. Thread-safety: a pure function of its arguments (it reads the working
// directory to make cache_dir absolute).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "fs/core/filesystem_options.h"
#include "fs/fuse/fuse_ops.h"
#include "fs/fuse/fuse_server.h"
#include "fs/memory/memory_budget.h"
#include "tools/mmfs/commands.h"

namespace mmfs::cli {

struct ParsedMountOptions {
  fs::FilesystemOptions fs;
  std::string cache_dir;         // absolute once parsed; empty: no SSD tier
  uint64_t ssd_cache_bytes = 0;  // 0: automatic
  fs::MountOptions mount;
  fs::ReaddirPlus readdirplus = fs::ReaddirPlus::kOff;
  bool nonempty = false;
  bool hint = true;
  // -o hint=owner: the hint file is the mounting user's alone (0600) even with allow_other, and
  // every line counts; by default a shared mount's hint file takes lines from anyone but counts
  // only files every user may read (FilesystemOptions::hint_open_to_all_only).
  bool hint_owner_only = false;
  bool push = true;
  // -o hold_once: files the RAM tier holds leave the page cache; nullopt: on in shared-limit mode
  // only (memory_budget.h; with memory to spare the kernel's copy makes warm reads free).
  std::optional<bool> hold_once;
  // -o lock_index: the index's pages stay in memory once read; nullopt: on in shared-limit mode
  // only (the plan reserves the index then; without it, listings give index pages back instead).
  std::optional<bool> lock_index;
  // -o huge_pages=off: the daemon's heap stays on small pages (tools/mmfs/huge_page_heap.h); on,
  // the default, uses them where the kernel's THP setting is madvise, outside shared-limit mode.
  bool huge_pages = true;
  // -o opendir=on: the kernel sends OPENDIR for every listing (off: answered ENOSYS once).
  bool cache_listings = true;
  std::vector<std::string> cluster_servers;  // empty: no cluster tier
  std::string cluster_self;  // this host's server, one of cluster_servers; empty: none
  // -o fill: fetch the dataset ahead of its readers (fs/readahead/filler.h); nullopt: auto for a
  // dataset from a URL, off for a local one.
  std::optional<fs::FillMode> fill;
  bool extents_given = false;  // -o extents was given: the fill does not turn extents off
  std::optional<uint64_t> memory;            // -o memory / --memory; nullopt: derived
  std::optional<uint64_t> ram_cache;         // -o ram_cache / --ram-cache; nullopt: default
  // The memory the daemon may use and how it is split (fs/memory/memory_budget.h); no limit when
  // it could not be read (no governor then). Filled by the mount's memory planning, not here.
  std::optional<MemoryLimit> memory_limit;
  MemoryBudget memory_budget;
};

// The ranges the parser enforces (also what `mmfs mount --help` states).
inline constexpr unsigned kMinThreads = 1;
// A FUSE thread beyond the number of concurrent readers only waits; each one is reserved
// kPerThreadBytes of the memory budget (fs/memory/memory_budget.h), so 256 reserve 128 MiB.
inline constexpr unsigned kMaxThreads = 256;
// read_ahead_kb: 0 keeps the kernel's default; the push and st_blksize scale with it.
inline constexpr unsigned kMaxReadAheadKb = 64 * 1024;
// Less than this cannot hold the daemon's own needs (fs/memory/memory_budget.h: about 48 MiB
// before any RAM tier).
inline constexpr uint64_t kMinMemoryBytes = 64ull << 20;
inline constexpr uint64_t kMinSsdCacheBytes = 1ull << 20;
// No size option means more than this (1024T); far above any host, far below an overflow.
inline constexpr uint64_t kMaxSizeBytes = 1ull << 50;

// The options of `args` (its -o lists, then the long options that override them).
Result<ParsedMountOptions> ParseMountOptions(const MountArgs& args);

}  // namespace mmfs::cli
