#include "tools/mmfs/mount_options.h"

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

#include "cache/cluster_tier.h"
#include "fs/base/units.h"

namespace mmfs::cli {

Result<bool> ParseOnOff(std::string_view name, const std::string& value) {
  if (value == "on") return true;
  if (value == "off") return false;
  return Status::InvalidArgument(std::string(name) + " must be on or off, not '" + value + "'");
}

Result<ParsedMountOptions> ParseMountOptions(const MountArgs& args) {
  ParsedMountOptions parsed;
  ParsedMountOptions* out = &parsed;
  std::vector<std::string> items;
  for (const std::string& group : args.options) {
    size_t start = 0;
    while (start <= group.size()) {
      size_t comma = group.find(',', start);
      if (comma == std::string::npos) comma = group.size();
      if (comma > start) items.push_back(group.substr(start, comma - start));
      start = comma + 1;
    }
  }
  bool in_cluster_list = false;
  for (const std::string& item : items) {
    size_t eq = item.find('=');
    if (eq != std::string::npos) in_cluster_list = false;
    std::string key = item.substr(0, eq);
    std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
    if (key == "memory") {
      MMFS_ASSIGN_OR_RETURN(out->memory, ParseSize(value));
    } else if (key == "ram_cache") {
      MMFS_ASSIGN_OR_RETURN(out->ram_cache, ParseSize(value));
    } else if (key == "cache_dir") {
      out->cache_dir = value;
    } else if (key == "ssd_cache") {
      MMFS_ASSIGN_OR_RETURN(out->ssd_cache_bytes, ParseSize(value));
    } else if (key == "threads") {
      out->mount.max_threads = static_cast<unsigned>(std::strtoul(value.c_str(), nullptr, 10));
      if (out->mount.max_threads == 0) return Status::InvalidArgument("threads must be >= 1");
    } else if (key == "read_ahead_kb") {
      out->mount.read_ahead_kb = static_cast<unsigned>(std::strtoul(value.c_str(), nullptr, 10));
    } else if (key == "readdirplus") {
      if (value == "off") {
        out->readdirplus = fs::ReaddirPlus::kOff;
      } else if (value == "auto") {
        out->readdirplus = fs::ReaddirPlus::kAuto;
      } else if (value == "always") {
        out->readdirplus = fs::ReaddirPlus::kAlways;
      } else {
        return Status::InvalidArgument("readdirplus must be off, auto or always");
      }
    } else if (key == "readahead") {
      MMFS_ASSIGN_OR_RETURN(out->fs.readahead, ParseOnOff(key, value));
    } else if (key == "cluster_cache") {
      MMFS_ASSIGN_OR_RETURN(out->cluster_servers, cache::ClusterTier::ParseServers(value));
      in_cluster_list = true;
      continue;
    } else if (in_cluster_list && eq == std::string::npos &&
               cache::ClusterTier::ParseServers(item).ok()) {
      // -o cluster_cache=a:11211,b:11211: the servers after the first arrive as items.
      out->cluster_servers.push_back(item);
      continue;
    } else if (key == "hint") {
      MMFS_ASSIGN_OR_RETURN(out->hint, ParseOnOff(key, value));
    } else if (key == "direct") {
      MMFS_ASSIGN_OR_RETURN(out->fs.direct_reads, ParseOnOff(key, value));
    } else if (key == "lock_index") {
      MMFS_ASSIGN_OR_RETURN(out->lock_index, ParseOnOff(key, value));
    } else if (key == "hold_once") {
      MMFS_ASSIGN_OR_RETURN(out->hold_once, ParseOnOff(key, value));
    } else if (key == "push") {
      MMFS_ASSIGN_OR_RETURN(out->push, ParseOnOff(key, value));
    } else if (key == "extents") {
      MMFS_ASSIGN_OR_RETURN(out->fs.extents, fs::ParseExtentOption(value));
    } else if (key == "readers") {
      MMFS_ASSIGN_OR_RETURN(out->fs.reader_accounting, ParseOnOff(key, value));
    } else if (key == "opendir") {
      bool send = false;
      MMFS_ASSIGN_OR_RETURN(send, ParseOnOff(key, value));
      out->cache_listings = !send;
    } else if (key == "nonempty") {
      out->nonempty = true;
    } else if (key == "overlay") {
      out->mount.overlay_front = true;
    } else if (key == "rw") {
      return Status::InvalidArgument("mmfs mounts are read-only; drop the 'rw' option");
    } else if (key == "ro" || key == "defaults" || key == "noauto" || key == "auto" ||
               key == "_netdev" || key == "nofail" || key == "user" || key == "users") {
      // fstab words that mean nothing to the daemon.
    } else {
      out->mount.fuse_options.push_back(item);  // allow_other, auto_unmount, nodev, ...
    }
  }
  if (!args.memory.empty()) {
    MMFS_ASSIGN_OR_RETURN(out->memory, ParseSize(args.memory));
  }
  if (!args.ram_cache.empty()) {
    MMFS_ASSIGN_OR_RETURN(out->ram_cache, ParseSize(args.ram_cache));
  }
  if (!args.cache_dir.empty()) out->cache_dir = args.cache_dir;
  if (!args.ssd_cache.empty()) {
    MMFS_ASSIGN_OR_RETURN(out->ssd_cache_bytes, ParseSize(args.ssd_cache));
  }
  if (!out->cache_dir.empty()) {
    std::error_code ec;
    out->cache_dir = std::filesystem::absolute(out->cache_dir, ec).lexically_normal().string();
  }
  if (!args.cluster_cache.empty()) {
    MMFS_ASSIGN_OR_RETURN(out->cluster_servers, cache::ClusterTier::ParseServers(args.cluster_cache));
  }
  if (args.threads > 0) out->mount.max_threads = args.threads;
  if (args.overlay) out->mount.overlay_front = true;
  if (!args.readahead.empty()) {
    MMFS_ASSIGN_OR_RETURN(out->fs.readahead, ParseOnOff("--readahead", args.readahead));
  }
  return parsed;
}

}  // namespace mmfs::cli
