// TierStack: the one stack of cache tiers of a mount, RAM -> SSD -> cluster -> (origin), built in
// one place (BuildTierStack) from the mount's options.
//
// RAM and SSD are looked up key by key through TieredCache (single flight, promotion). The
// cluster tier is the stack's last tier but is asked differently: by the miss loader and the
// prefetcher, a whole sample or batch per multi-get (ClusterTier::LookupMany), because a round
// trip per file would cost more than the origin read it saves; it is filled with what the
// origin returns. Tiers are found by name ("ram", "ssd", "cluster") and reported in that order.
//
// Ownership: the stack owns its tiers and the TieredCache over them.
// Thread-safety: all methods are thread-safe (the tiers' own guarantees); the stack's shape is
// fixed at construction.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
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
  // Takes the lower tiers as built (either may be null).
  TierStack(uint64_t ram_bytes, uint64_t expected_keys, std::unique_ptr<CacheTier> ssd,
            std::unique_ptr<ClusterTier> cluster, std::function<void()> ram_grew = {});
  TierStack(const TierStack&) = delete;
  TierStack& operator=(const TierStack&) = delete;

  RamTier& ram() { return ram_; }
  const RamTier& ram() const { return ram_; }
  CacheTier* ssd() const { return ssd_.get(); }          // null without one
  ClusterTier* cluster() const { return cluster_.get(); }  // null without one
  // RAM then SSD, key by key.
  TieredCache& cache() { return cache_; }
  // The tier called `name`, or null.
  CacheTier* Find(std::string_view name) const;
  // Every tier, top to bottom (ram, ssd, cluster): what stats report.
  std::vector<const CacheTier*> all() const;

 private:
  RamTier ram_;
  std::unique_ptr<CacheTier> ssd_;
  std::unique_ptr<ClusterTier> cluster_;
  TieredCache cache_;  // after the tiers it points to
};

// Opens the tiers `options` ask for. Errors name the tier ("SSD cache: ...", "cluster cache: ...").
Result<std::unique_ptr<TierStack>> BuildTierStack(const TierStackOptions& options);

}  // namespace mmfs::cache
