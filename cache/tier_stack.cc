#include "cache/tier_stack.h"

#include <algorithm>

#include "cache/ssd_tier.h"

namespace mmfs::cache {

namespace {

std::vector<std::unique_ptr<CacheTier>> Keyed(std::unique_ptr<CacheTier> tier) {
  std::vector<std::unique_ptr<CacheTier>> keyed;
  keyed.push_back(std::move(tier));
  return keyed;
}

std::vector<std::unique_ptr<CacheTier>> WithoutNull(std::vector<std::unique_ptr<CacheTier>> tiers) {
  std::erase(tiers, nullptr);
  return tiers;
}

// Every tier, top to bottom: RAM, the keyed tiers, the cluster.
std::vector<CacheTier*> Ordered(RamTier* ram, const std::vector<std::unique_ptr<CacheTier>>& keyed,
                                ClusterTier* cluster) {
  std::vector<CacheTier*> tiers = {ram};
  for (const auto& t : keyed) tiers.push_back(t.get());
  if (cluster != nullptr) tiers.push_back(cluster);
  return tiers;
}

// The tiers TieredCache looks up key by key: all but the cluster, which is asked per sample.
std::vector<CacheTier*> KeyedTiers(RamTier* ram,
                                   const std::vector<std::unique_ptr<CacheTier>>& keyed) {
  return Ordered(ram, keyed, nullptr);
}

}  // namespace

TierStack::TierStack(uint64_t ram_bytes, uint64_t expected_keys,
                     std::vector<std::unique_ptr<CacheTier>> keyed,
                     std::unique_ptr<ClusterTier> cluster, std::function<void()> ram_grew)
    : ram_(ram_bytes, expected_keys, std::move(ram_grew)),
      keyed_(WithoutNull(std::move(keyed))),
      cluster_(std::move(cluster)),
      tiers_(Ordered(&ram_, keyed_, cluster_.get())),
      cache_(KeyedTiers(&ram_, keyed_)),
      local_disk_(First(TierRole::kLocalDisk)) {}

TierStack::TierStack(uint64_t ram_bytes, uint64_t expected_keys, std::unique_ptr<CacheTier> ssd,
                     std::unique_ptr<ClusterTier> cluster, std::function<void()> ram_grew)
    : TierStack(ram_bytes, expected_keys, Keyed(std::move(ssd)), std::move(cluster),
                std::move(ram_grew)) {}

CacheTier* TierStack::First(TierRole role) const {
  for (CacheTier* t : tiers_) {
    if (t->role() == role) return t;
  }
  return nullptr;
}

std::optional<TierRole> TierStack::RoleOf(size_t served_by) const {
  const std::vector<CacheTier*>& keyed = cache_.tiers();
  if (served_by >= keyed.size()) return std::nullopt;
  return keyed[served_by]->role();
}

CacheTier* TierStack::Find(std::string_view name) const {
  for (CacheTier* t : tiers_) {
    if (t->name() == name) return t;
  }
  return nullptr;
}

std::vector<const CacheTier*> TierStack::all() const {
  return std::vector<const CacheTier*>(tiers_.begin(), tiers_.end());
}

Result<std::unique_ptr<TierStack>> BuildTierStack(const TierStackOptions& options) {
  // The tiers below RAM looked up key by key, top to bottom: a new one is one push_back here.
  std::vector<std::unique_ptr<CacheTier>> keyed;
  if (!options.ssd_dir.empty()) {
    SsdTierOptions so;
    so.dir = options.ssd_dir;
    so.name_space = options.name_space;
    so.budget_bytes = options.ssd_bytes;  // 0: the tier's default, from its disk and its files
    so.expected_keys = options.expected_keys;
    auto tier = SsdTier::Open(so);
    if (!tier.ok()) return tier.status().WithContext("SSD cache");
    keyed.push_back(std::move(tier).value());
  }
  std::unique_ptr<ClusterTier> cluster;
  if (!options.cluster_servers.empty()) {
    ClusterTierOptions co;
    co.servers = options.cluster_servers;
    co.name_space = options.name_space;
    auto tier = ClusterTier::Open(co);
    if (!tier.ok()) return tier.status().WithContext("cluster cache");
    cluster = std::move(tier).value();
  }
  return std::make_unique<TierStack>(options.ram_bytes, options.expected_keys, std::move(keyed),
                                     std::move(cluster), options.ram_grew);
}

}  // namespace mmfs::cache
