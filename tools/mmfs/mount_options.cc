#include "tools/mmfs/mount_options.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>

#include "base/units.h"
#include "cache/cluster_tier.h"

namespace mmfs::cli {

namespace {

// One option as the user gave it: `-o key=value` or `--long-name value`.
struct Item {
  std::string key;                   // as -o spells it: "threads", "ram_cache"
  std::optional<std::string> value;  // nullopt: a bare word (`-o nonempty`)
  std::string shown;                 // "-o threads=5x", "--threads 5x": errors start with it
  std::string raw;                   // the -o item itself, for words passed on to libfuse
};

Status Bad(const Item& item, const std::string& problem) {
  return Status::InvalidArgument(item.shown + ": " + problem);
}

// "64M", "1024T", "4096": sizes as the user types them, for ranges in messages.
std::string ShortSize(uint64_t bytes) {
  static const char kUnits[] = "KMGT";
  for (int i = 3; i >= 0; --i) {
    const uint64_t unit = 1ull << (10 * (i + 1));
    if (bytes != 0 && bytes % unit == 0) return std::to_string(bytes / unit) + kUnits[i];
  }
  return std::to_string(bytes);
}

Result<std::string> NonEmptyValue(const Item& item, const std::string& what) {
  if (!item.value || item.value->empty()) return Bad(item, "needs a value (" + what + ")");
  return *item.value;
}

// A whole decimal number from lo to hi: digits only (no sign, space or suffix).
Result<uint64_t> WholeNumber(const Item& item, uint64_t lo, uint64_t hi) {
  const std::string range = "between " + std::to_string(lo) + " and " + std::to_string(hi);
  MMFS_ASSIGN_OR_RETURN(std::string text, NonEmptyValue(item, "a whole number " + range));
  uint64_t n = 0;
  bool too_big = false;
  for (char c : text) {
    if (c < '0' || c > '9') return Bad(item, "not a whole number");
    if (n > hi) {
      too_big = true;  // keep reading: "99999999999999999999x" is still not a number
      continue;
    }
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  if (too_big || n < lo || n > hi) return Bad(item, "must be " + range);
  return n;
}

// A size as ParseSize reads it (digits, an optional fraction, an optional unit; nothing else),
// from lo to hi bytes.
Result<uint64_t> Size(const Item& item, uint64_t lo, uint64_t hi) {
  const std::string range = "between " + ShortSize(lo) + " and " + ShortSize(hi);
  MMFS_ASSIGN_OR_RETURN(std::string text, NonEmptyValue(item, "a size " + range));
  SizeProblem problem = SizeProblem::kNone;
  auto bytes = ParseSize(text, &problem);
  if (problem == SizeProblem::kNotASize) {
    return Bad(item, "not a size (expected e.g. 4096, 512M, 1.5G)");
  }
  if (problem == SizeProblem::kUnknownUnit) return Bad(item, "unknown unit (use K, M, G or T)");
  if (!bytes.ok() || *bytes < lo || *bytes > hi) return Bad(item, "must be " + range);
  return *bytes;
}

Result<bool> OnOff(const Item& item) {
  if (item.value == "on") return true;
  if (item.value == "off") return false;
  return Bad(item, "must be on or off");
}

Status NoValue(const Item& item) {
  if (item.value) return Bad(item, "takes no value");
  return Status::Ok();
}

bool IsFstabWord(const std::string& key) {
  return key == "ro" || key == "defaults" || key == "noauto" || key == "auto" || key == "_netdev" ||
         key == "nofail" || key == "user" || key == "users";
}

// Applies one option to `out`.
Status Apply(const Item& item, ParsedMountOptions* out) {
  const std::string& key = item.key;
  if (key == "memory") {
    MMFS_ASSIGN_OR_RETURN(out->memory, Size(item, kMinMemoryBytes, kMaxSizeBytes));
  } else if (key == "ram_cache") {
    MMFS_ASSIGN_OR_RETURN(out->ram_cache, Size(item, 0, kMaxSizeBytes));
  } else if (key == "ssd_cache") {
    MMFS_ASSIGN_OR_RETURN(out->ssd_cache_bytes, Size(item, kMinSsdCacheBytes, kMaxSizeBytes));
  } else if (key == "cache_dir") {
    MMFS_ASSIGN_OR_RETURN(out->cache_dir, NonEmptyValue(item, "a directory"));
  } else if (key == "threads") {
    MMFS_ASSIGN_OR_RETURN(uint64_t n, WholeNumber(item, kMinThreads, kMaxThreads));
    out->mount.max_threads = static_cast<unsigned>(n);
  } else if (key == "miss_threads") {
    MMFS_ASSIGN_OR_RETURN(uint64_t n, WholeNumber(item, 0, kMaxThreads));
    out->fs.miss_threads = static_cast<unsigned>(n);
  } else if (key == "read_ahead_kb") {
    MMFS_ASSIGN_OR_RETURN(uint64_t n, WholeNumber(item, 0, kMaxReadAheadKb));
    out->mount.read_ahead_kb = static_cast<unsigned>(n);
  } else if (key == "readdirplus") {
    if (item.value == "off") {
      out->readdirplus = fs::ReaddirPlus::kOff;
    } else if (item.value == "auto") {
      out->readdirplus = fs::ReaddirPlus::kAuto;
    } else if (item.value == "always") {
      out->readdirplus = fs::ReaddirPlus::kAlways;
    } else {
      return Bad(item, "must be off, auto or always");
    }
  } else if (key == "transport") {
    MMFS_ASSIGN_OR_RETURN(std::string value, NonEmptyValue(item, "auto, uring or classic"));
    auto transport = fs::ParseTransport(value);
    if (!transport.ok()) return Bad(item, "must be auto, uring or classic");
    out->mount.transport = *transport;
  } else if (key == "readahead") {
    MMFS_ASSIGN_OR_RETURN(out->fs.readahead, OnOff(item));
  } else if (key == "hint") {
    if (item.value == "owner") {
      out->hint = true;
      out->hint_owner_only = true;
    } else {
      MMFS_ASSIGN_OR_RETURN(out->hint, OnOff(item));
      out->hint_owner_only = false;
    }
  } else if (key == "direct") {
    MMFS_ASSIGN_OR_RETURN(out->fs.direct_reads, OnOff(item));
  } else if (key == "lock_index") {
    MMFS_ASSIGN_OR_RETURN(out->lock_index, OnOff(item));
  } else if (key == "hold_once") {
    MMFS_ASSIGN_OR_RETURN(out->hold_once, OnOff(item));
  } else if (key == "huge_pages") {
    MMFS_ASSIGN_OR_RETURN(out->huge_pages, OnOff(item));
  } else if (key == "push") {
    MMFS_ASSIGN_OR_RETURN(out->push, OnOff(item));
  } else if (key == "readers") {
    MMFS_ASSIGN_OR_RETURN(out->fs.reader_accounting, OnOff(item));
  } else if (key == "opendir") {
    MMFS_ASSIGN_OR_RETURN(bool send, OnOff(item));
    out->cache_listings = !send;
  } else if (key == "extents") {
    MMFS_ASSIGN_OR_RETURN(std::string value, NonEmptyValue(item, "auto, off or a size"));
    if (value != "auto" && value != "off") {
      MMFS_RETURN_IF_ERROR(Size(item, 0, kMaxSizeBytes).status());  // whole, before the range
    }
    auto extents = fs::ParseExtentOption(value);
    if (!extents.ok()) return Bad(item, extents.status().message());
    out->fs.extents = *extents;
    out->extents_given = true;
  } else if (key == "fill") {
    MMFS_ASSIGN_OR_RETURN(std::string value, NonEmptyValue(item, "auto, on or off"));
    auto mode = fs::ParseFillMode(value);
    if (!mode.ok()) return Bad(item, mode.status().message());
    out->fill = *mode;
  } else if (key == "fill_chunk") {
    // One request of the fill; the hosts of a job that share a fill must give the same.
    MMFS_ASSIGN_OR_RETURN(out->fs.fill.chunk_bytes, Size(item, 64ull << 10, 64ull << 20));
  } else if (key == "cluster_cache") {
    MMFS_ASSIGN_OR_RETURN(std::string value, NonEmptyValue(item, "HOST:PORT[,HOST:PORT...]"));
    auto servers = cache::ClusterTier::ParseServers(value);
    if (!servers.ok()) return Bad(item, servers.status().message());
    out->cluster_servers = std::move(servers).value();
  } else if (key == "cluster_self") {
    MMFS_ASSIGN_OR_RETURN(std::string value, NonEmptyValue(item, "HOST:PORT"));
    auto server = cache::ClusterTier::ParseServers(value);
    if (!server.ok() || server->size() != 1) {
      return Bad(item, "not one HOST:PORT (this host's memcached server, as --cluster-cache "
                       "names it)");
    }
    out->cluster_self = server->front();
  } else if (key == "nonempty") {
    MMFS_RETURN_IF_ERROR(NoValue(item));
    out->nonempty = true;
  } else if (key == "overlay") {
    MMFS_RETURN_IF_ERROR(NoValue(item));
    out->mount.overlay_front = true;
  } else if (key == "rw") {
    return Status::InvalidArgument("mmfs mounts are read-only; drop the 'rw' option");
  } else if (key == "suid" || key == "dev") {
    // A dataset is data: root's mount must not run a file as its owner, or open a device,
    // because an index says so (the index is as trusted as whoever wrote the dataset).
    return Status::InvalidArgument("mmfs mounts are always nosuid,nodev: " + item.shown +
                                   " would let " +
                                   (key == "suid" ? "a setuid file in the dataset run as its owner"
                                                  : "a device file in the dataset open a device") +
                                   "; drop it");
  } else if (key == "nosuid" || key == "nodev") {
    MMFS_RETURN_IF_ERROR(NoValue(item));  // always so (fuse_server.cc)
  } else if (key == "subtype" || key == "fsname") {
    // The server sets both: subtype=mmfs is how `mmfs umount` (and anyone reading the mount
    // table) tells an mmfs mount from another FUSE mount, and fsname names the dataset. Passed
    // on, either would override it, and `mmfs umount` would refuse the daemon's own mount.
    return Bad(item, std::string("not allowed; mmfs sets the ") +
                         (key == "subtype" ? "subtype (mmfs, so that 'mmfs umount' knows its "
                                             "mounts)"
                                           : "fsname (mmfs:DATASET)") +
                         " itself; drop it");
  } else if (key == "max_read") {
    // libfuse then wants INIT to agree on it, which the daemon does not do: the kernel
    // connects and the session ends at once. READ sizes follow read_ahead_kb instead.
    return Bad(item, "not supported; the size of READs follows -o read_ahead_kb (0 to " +
                         std::to_string(kMaxReadAheadKb) + ")");
  } else if (IsFstabWord(key) && !item.value) {
    // fstab words that mean nothing to the daemon.
  } else {
    out->mount.fuse_options.push_back(item.raw);  // allow_other, auto_unmount, ...
  }
  return Status::Ok();
}

// The items of the -o lists, in order.
std::vector<Item> SplitOptionLists(const std::vector<std::string>& lists) {
  std::vector<Item> items;
  for (const std::string& group : lists) {
    size_t start = 0;
    while (start <= group.size()) {
      size_t comma = group.find(',', start);
      if (comma == std::string::npos) comma = group.size();
      if (comma > start) {
        Item item;
        item.raw = group.substr(start, comma - start);
        size_t eq = item.raw.find('=');
        item.key = item.raw.substr(0, eq);
        if (eq != std::string::npos) item.value = item.raw.substr(eq + 1);
        item.shown = "-o " + item.raw;
        items.push_back(std::move(item));
      }
      start = comma + 1;
    }
  }
  return items;
}

// A long option given on the command line, as an item of its -o twin.
void AddLong(const char* flag, const char* key, const std::optional<std::string>& value,
             std::vector<Item>* items) {
  if (!value) return;
  Item item;
  item.key = key;
  item.value = value;
  item.shown = std::string(flag) + " " + (value->empty() ? "''" : *value);
  items->push_back(std::move(item));
}

}  // namespace

Result<ParsedMountOptions> ParseMountOptions(const MountArgs& args) {
  ParsedMountOptions parsed;
  std::vector<Item> items = SplitOptionLists(args.options);
  // The long options come after every -o item, so they override it.
  AddLong("--memory", "memory", args.memory, &items);
  AddLong("--ram-cache", "ram_cache", args.ram_cache, &items);
  AddLong("--cache-dir", "cache_dir", args.cache_dir, &items);
  AddLong("--ssd-cache", "ssd_cache", args.ssd_cache, &items);
  AddLong("--readahead", "readahead", args.readahead, &items);
  AddLong("--cluster-cache", "cluster_cache", args.cluster_cache, &items);
  AddLong("--cluster-self", "cluster_self", args.cluster_self, &items);
  AddLong("--threads", "threads", args.threads, &items);
  if (args.overlay) items.push_back(Item{"overlay", std::nullopt, "--overlay", ""});

  bool in_cluster_list = false;
  for (const Item& item : items) {
    // -o cluster_cache=a:11211,b:11211: the servers after the first arrive as bare items.
    if (in_cluster_list && !item.value && !item.raw.empty() &&
        cache::ClusterTier::ParseServers(item.raw).ok()) {
      parsed.cluster_servers.push_back(item.raw);
      continue;
    }
    MMFS_RETURN_IF_ERROR(Apply(item, &parsed));
    if (item.value) in_cluster_list = item.key == "cluster_cache" && !item.raw.empty();
  }
  if (!parsed.cluster_self.empty() &&
      std::find(parsed.cluster_servers.begin(), parsed.cluster_servers.end(),
                parsed.cluster_self) == parsed.cluster_servers.end()) {
    return Status::InvalidArgument(
        "--cluster-self " + parsed.cluster_self + " is not one of the --cluster-cache servers" +
        (parsed.cluster_servers.empty() ? " (none given)" : ""));
  }
  if (!parsed.cache_dir.empty()) {
    std::error_code ec;
    parsed.cache_dir = std::filesystem::absolute(parsed.cache_dir, ec).lexically_normal().string();
  }
  return parsed;
}

}  // namespace mmfs::cli
