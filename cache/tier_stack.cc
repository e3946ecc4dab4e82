#include "cache/tier_stack.h"

#include <algorithm>

#include "cache/ssd_tier.h"

namespace mmfs::cache {

namespace {
std::vector<CacheTier*> KeyedTiers(RamTier* ram, CacheTier* ssd) {
  std::vector<CacheTier*> tiers = {ram};
  if (ssd != nullptr) tiers.push_back(ssd);
  return tiers;
}

}  // namespace

TierStack::TierStack(uint64_t ram_bytes, uint64_t expected_keys, std::unique_ptr<CacheTier> ssd,
                     std::unique_ptr<ClusterTier> cluster, std::function<void()> ram_grew)
    : ram_(ram_bytes, expected_keys, std::move(ram_grew)),
      ssd_(std::move(ssd)),
      cluster_(std::move(cluster)),
      cache_(KeyedTiers(&ram_, ssd_.get())) {}

CacheTier* TierStack::Find(std::string_view name) const {
  for (const CacheTier* t : all()) {
    if (t->name() == name) return const_cast<CacheTier*>(t);
  }
  return nullptr;
}

std::vector<const CacheTier*> TierStack::all() const {
  std::vector<const CacheTier*> tiers = {&ram_};
  if (ssd_ != nullptr) tiers.push_back(ssd_.get());
  if (cluster_ != nullptr) tiers.push_back(cluster_.get());
  return tiers;
}

Result<std::unique_ptr<TierStack>> BuildTierStack(const TierStackOptions& options) {
  std::unique_ptr<CacheTier> ssd;
  if (!options.ssd_dir.empty()) {
    SsdTierOptions so;
    so.dir = options.ssd_dir;
    so.name_space = options.name_space;
    so.budget_bytes = options.ssd_bytes;  // 0: the tier's default, from its disk and its files
    so.expected_keys = options.expected_keys;
    auto tier = SsdTier::Open(so);
    if (!tier.ok()) return tier.status().WithContext("SSD cache");
    ssd = std::move(tier).value();
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
  return std::make_unique<TierStack>(options.ram_bytes, options.expected_keys, std::move(ssd),
                                     std::move(cluster), options.ram_grew);
}

}  // namespace mmfs::cache
