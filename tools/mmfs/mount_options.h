// Mount options: what `mmfs mount -o ...` and its long options mean, as one typed struct.
//
// ParseMountOptions reads the -o lists (comma-separated, repeatable) and then the long options,
// which override them (--ram-cache over -o ram_cache=, ...). Words the daemon does not know are
// passed on to libfuse (allow_other, auto_unmount, ...): libfuse, not this parser, rejects what
// it does not take. Errors are InvalidArgument with the message `mmfs mount` prints after "-o: ".
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
#include <string_view>
#include <vector>

#include "fs/base/memory_budget.h"
#include "fs/base/status.h"
#include "fs/core/filesystem_options.h"
#include "fs/fuse/fuse_ops.h"
#include "fs/fuse/fuse_server.h"
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
  bool push = true;
  // -o hold_once: files the RAM tier holds leave the page cache; nullopt: on with --memory only
  // (with memory to spare the kernel's copy makes warm reads free).
  std::optional<bool> hold_once;
  // -o lock_index: the index's pages stay in memory once read; nullopt: on with --memory only
  // (the plan reserves the index then; without it, listings give index pages back instead).
  std::optional<bool> lock_index;
  // -o opendir=on: the kernel sends OPENDIR for every listing (off: answered ENOSYS once).
  bool cache_listings = true;
  std::vector<std::string> cluster_servers;  // empty: no cluster tier
  std::optional<uint64_t> memory;            // -o memory / --memory; nullopt: derived
  std::optional<uint64_t> ram_cache;         // -o ram_cache / --ram-cache; nullopt: default
  // The memory the daemon may use and how it is split (fs/base/memory_budget.h); no limit when
  // it could not be read (no governor then). Filled by the mount's memory planning, not here.
  std::optional<MemoryLimit> memory_limit;
  MemoryBudget memory_budget;
};

// An on|off option's value; `name` is how the user spelled the option, for the error.
Result<bool> ParseOnOff(std::string_view name, const std::string& value);

// The options of `args` (its -o lists, then the long options that override them).
Result<ParsedMountOptions> ParseMountOptions(const MountArgs& args);

}  // namespace mmfs::cli
