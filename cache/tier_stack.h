// TierStack: the one stack of cache tiers of a mount, RAM -> SSD -> cluster -> (origin), built in
// one place (BuildTierStack) from the mount's options.
//
// RAM and the tiers below it on this host (the SSD) are looked up key by key through
// TieredCache (single flight, promotion). The cluster tier is the stack's last tier but is asked
// differently: by the miss loader and the prefetcher, a whole sample or batch per multi-get
// (ClusterTier::LookupMany), because a round trip per file would cost more than the origin read
// it saves; it is filled with what the origin returns.
//
// Tiers are found by role (TierRole: local_disk(), First), not by their place in the stack, and
// the stack keeps them in one ordered list that stats report (ram, ssd, cluster): a new tier is
// its class and one line in BuildTierStack, and no caller counts slots.
//
// Ownership: the stack owns its tiers and the TieredCache over them.
// Thread-safety: all methods are thread-safe (the tiers' own guarantees); the stack's shape is
// fixed at construction.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "cache/cluster_tier.h"
#include "cache/ram_tier.h"
#include "cache/tier.h"
#include "cache/tiered_cache.h"

namespace mmfs::cache {

struct TierStackOptions {
  uint64_t ram_bytes = 256ull << 20;
  uint64_t expected_keys = 0;  // files in the dataset (sizes the RAM tier's tables)
  std::string name_space;      // the dataset's identity: keys of two datasets never collide
  // SSD tier: none when `ssd_dir` is empty; a budget of 0 is the tier's default (half of the free
  // space of its filesystem plus what its own entries already hold, at most 1 TiB).
  std::string ssd_dir;
  uint64_t ssd_bytes = 0;
  // Cluster tier: none when empty ("host:port" each).
  std::vector<std::string> cluster_servers;
  // Called after each insert into the RAM tier (RamTier's `grew`): the daemon's heap prefaulter.
  std::function<void()> ram_grew;
};

class TierStack {
 public:
  // `keyed`: the tiers looked up key by key below RAM, top to bottom (null ones are skipped);
  // `cluster` may be null.
  TierStack(uint64_t ram_bytes, uint64_t expected_keys,
            std::vector<std::unique_ptr<CacheTier>> keyed, std::unique_ptr<ClusterTier> cluster,
            std::function<void()> ram_grew = {});
  // The same with at most one keyed tier below RAM (the SSD), as built (either may be null).
  TierStack(uint64_t ram_bytes, uint64_t expected_keys, std::unique_ptr<CacheTier> ssd,
            std::unique_ptr<ClusterTier> cluster, std::function<void()> ram_grew = {});
  TierStack(const TierStack&) = delete;
  TierStack& operator=(const TierStack&) = delete;

  RamTier& ram() { return ram_; }
  const RamTier& ram() const { return ram_; }
  // The first tier on this host's disk (the SSD), or null without one.
  CacheTier* local_disk() const { return local_disk_; }
  ClusterTier* cluster() const { return cluster_.get(); }  // null without one
  // RAM then the keyed tiers below it, key by key.
  TieredCache& cache() { return cache_; }
  // The first tier, top to bottom, of role `role`, or null.
  CacheTier* First(TierRole role) const;
  // The role of the tier a TieredCache lookup was served by (its `served_by`); nullopt when the
  // loader served it (served_by == cache().tiers().size()).
  std::optional<TierRole> RoleOf(size_t served_by) const;
  // The tier called `name`, or null.
  CacheTier* Find(std::string_view name) const;
  // Every tier, top to bottom (ram, ssd, cluster): what stats report. The keyed tiers
  // (cache().tiers()) come first and in the same order, so per-tier samples taken over them (the
  // hit-ratio history) line up with these by index.
  std::vector<const CacheTier*> all() const;

 private:
  RamTier ram_;
  std::vector<std::unique_ptr<CacheTier>> keyed_;  // below RAM, top to bottom, none null
  std::unique_ptr<ClusterTier> cluster_;
  std::vector<CacheTier*> tiers_;  // every tier, top to bottom: ram_, keyed_, cluster_
  TieredCache cache_;              // after the tiers it points to
  CacheTier* local_disk_;          // First(kLocalDisk), kept: the read path asks for it per key
};

// Opens the tiers `options` ask for. Errors name the tier ("SSD cache: ...", "cluster cache: ...").
Result<std::unique_ptr<TierStack>> BuildTierStack(const TierStackOptions& options);

}  // namespace mmfs::cache
