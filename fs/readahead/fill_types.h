// The fill's options and counters (fs/readahead/filler.h): plain values, for the mount's
// options and the stats, without the filler's threads.
//
// Thread-safety: values.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace mmfs::fs {

enum class FillMode { kAuto, kOn, kOff };

// "auto", "on" or "off"; InvalidArgument naming the accepted words otherwise.
Result<FillMode> ParseFillMode(std::string_view word);
const char* FillModeName(FillMode mode);

struct FillOptions {
  FillMode mode = FillMode::kOff;
  uint64_t chunk_bytes = 8ull << 20;          // one request reads at most this
  unsigned first_in_flight = 4;  // the hill-climb reaches a fast link's dozen in ~3 windows
  unsigned max_in_flight = 16;
  uint64_t max_bytes_in_flight = 96ull << 20;
  uint64_t trigger_files = 64;                // auto: distinct files read before it starts
  double share_of_cache = 0.9;                // of the target tier's budget
  uint64_t max_file_bytes = 64ull << 20;      // larger files are left to their readers
  std::chrono::milliseconds window{500};      // throughput is measured over this
  // With a cluster tier the hosts share the fill (fs/readahead/fill_share.h): this host's
  // memcached server ("host:port", --cluster-self), whose chunks it fetches first; and how long
  // a chunk another host claimed is waited for before this host reads it from the store.
  std::string cluster_self;
  std::chrono::milliseconds peer_wait{20000};
};

// A fill shared with the job's other hosts (fill_share.h): its chunks and where they came from.
struct FillHostsStats {
  uint64_t chunks = 0, own_chunks = 0;  // the plan's chunks; those hashing to this host
  uint64_t claimed_chunks = 0;          // read from the store by this host
  // Past this host's share (its tier keeps only a share; the cluster holds the dataset): of the
  // plan, and those this host read from the store into the cluster, with their bytes.
  uint64_t cluster_only_chunks = 0, cluster_only_fetched_chunks = 0, cluster_only_fetched_bytes = 0;
  uint64_t peer_chunks = 0;             // read from the cluster, whole
  uint64_t peer_files = 0, peer_bytes = 0;  // read from the cluster
  uint64_t waited_out_chunks = 0;  // another host's, read from the store after a wait or its loss
  uint64_t present_files = 0, present_bytes = 0;  // held by the tier when first looked at
  // Readers' misses of files another host was fetching: waited for in the cluster, and of
  // those, found there (the rest read the store after the wait or the holder's end).
  uint64_t demand_waits = 0, demand_waits_served = 0;
};

struct FillStats {
  std::string mode = "off";  // FillModeName
  // "off", "waiting" (auto: no training job seen yet), "filling", "done", "stopped", "failed"
  // (the store failed every read for a while: its readers read it)
  std::string state = "off";
  std::string trigger;  // why it started ("64 files read", "a hint", "-o fill=on")
  bool share = false;   // the dataset does not fit the tier: a share is kept
  uint64_t target_files = 0, target_bytes = 0;    // what the fill covers (all, or the share)
  uint64_t fetched_files = 0, fetched_bytes = 0;  // fetched by the fill, checked and stored
  uint64_t present_files = 0, present_bytes = 0;  // already held when the fill came to them
  uint64_t failed_files = 0;                      // left to their readers (the read failed)
  uint64_t not_stored_files = 0;                  // fetched, but the tier did not keep them
  uint64_t requests = 0;  // reads of the origin that succeeded (a read may span many files)
  // Shared with the job's other hosts through the cluster tier (fill_share.h says how).
  bool shared = false;
  FillHostsStats hosts;
  uint64_t in_flight = 0, in_flight_target = 0;
  double bytes_per_second = 0;  // over the last window
  double seconds_left = 0;      // at that rate; 0 when unknown or done
  double seconds = 0;           // since it started
};

}  // namespace mmfs::fs
