// The `mmfs` subcommands. Each takes its parsed options and returns the process exit code; all
// user-facing output (progress, summaries, errors) is produced here, not in the libraries.
//
// Thread-safety: called once from main().
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tools/mmfs/remote_dataset.h"

namespace mmfs::cli {

struct PackArgs {
  std::vector<std::string> paths;  // sources, then the destination
  std::string from = "auto";
  std::vector<std::string> caption_fields;
  std::string coco_annotations;
  int jobs = 0;  // 0: one per CPU
  bool resume = false;
  std::string shard_size = "1G";
  std::string on_bad = "fail";
  bool force = false;
  bool quiet = false;
  bool json = false;
  std::vector<uint32_t> views;  // --view N: views built once the pack is done
  int view_quality = 90;
  std::string endpoint;  // s3:// sources: --endpoint
  std::string ca_file;   // s3:// sources: --ca-file
  std::string staging_dir;  // an s3:// DST: --staging-dir
};
int RunPack(const PackArgs& args);

struct ViewArgs {
  std::string dataset;
  uint32_t side = 0;  // add, rm
  int jobs = 0;       // 0: one per CPU
  int quality = 90;
  std::string on_bad;  // fail, skip, keep; empty: what the dataset was packed with
  std::string shard_size = "256M";
  bool resume = false;
  bool quiet = false;
  bool json = false;
};
// Builds DST/views/N (tools/view/view_builder.h).
int RunViewAdd(const ViewArgs& args);
int RunViewRm(const ViewArgs& args);
// Lists the published views, unusable ones and unpublished (running or interrupted) builds.
int RunViewLs(const ViewArgs& args);

struct MountArgs {
  std::string dataset;  // a directory, or an http(s):// or s3:// URL (remote_dataset.h)
  RemoteFlags remote;   // --endpoint, --ca-file (the copy goes to the SSD tier's --cache-dir)
  std::string mountpoint;
  bool foreground = false;
  bool debug = false;
  std::vector<std::string> options;  // -o, comma lists allowed
  // The long options, as typed (nullopt: not given); each overrides its -o twin and is parsed
  // by the same code (mount_options.h), so `--threads 0` and `-o threads=0` get the same answer.
  std::optional<std::string> memory;         // -o memory=
  std::optional<std::string> ram_cache;      // -o ram_cache=
  std::optional<std::string> cache_dir;      // -o cache_dir=
  std::optional<std::string> ssd_cache;      // -o ssd_cache=
  std::optional<std::string> readahead;      // -o readahead=
  std::optional<std::string> cluster_cache;  // -o cluster_cache= ("host:port,host:port")
  std::optional<std::string> cluster_self;   // -o cluster_self= (this host's server in that list)
  std::optional<std::string> threads;        // -o threads=
  bool overlay = false;  // -o overlay: an overlayfs in front (fs/fuse/overlay_front.h)
  std::string log_file;
  uint32_t view = 0;  // --view N: serve view N's tree as the root (0: the original tree)
};
int RunMount(const MountArgs& args);

struct UmountArgs {
  std::string mountpoint;
  bool lazy = false;
};
int RunUmount(const UmountArgs& args);

struct StatsArgs {
  std::string mountpoint;
  bool json = false;
  bool prometheus = false;
  double watch = 0;  // seconds between lines; 0: print once
  bool what_if = false;  // predicted hit ratios at other tier sizes
  std::string plot;      // write a PNG of the what-if curves and hit ratios over time
  double window = 10;    // the readers' window, seconds
  int top = 8;           // reader rows shown before "others"
};
int RunStats(const StatsArgs& args);

struct WarmupArgs {
  std::string mountpoint;
  std::vector<std::string> paths;  // inside the mount; empty: all of it
  std::string tier = "ssd";        // ram or ssd
  bool check = false;              // only report residency
  bool evict = false;              // drop from the caches
  bool json = false;
  double timeout_seconds = 0;      // 0: wait as long as it takes
};
// Loads paths into a cache tier, reports residency (--check) or evicts them (--evict).
int RunWarmup(const WarmupArgs& args);

struct InspectArgs {
  std::string dataset;  // a directory, or an http(s):// or s3:// URL (remote_dataset.h)
  RemoteFlags remote;
  bool json = false;
  int jobs = 0;  // verify: 0 = one thread per CPU
};
// Checks every shard's and every file's checksum; exit 1 naming the damaged files.
int RunVerify(const InspectArgs& args);
// Describes a dataset from its manifest and index.
int RunInfo(const InspectArgs& args);

// "mmfs: error: <message>" on stderr.
void PrintError(const std::string& message);

}  // namespace mmfs::cli
