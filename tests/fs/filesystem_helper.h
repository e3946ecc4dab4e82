// Tests' way to make a Filesystem over a dataset with a RAM tier of options.ram_cache_bytes and
// an optional SSD tier, as cache::BuildTierStack would stack them, without options to parse.
#pragma once

#include <memory>
#include <utility>

#include "cache/tier_stack.h"
#include "fs/core/filesystem.h"

namespace mmfs::testing {

inline std::unique_ptr<fs::Filesystem> NewFilesystem(
    std::unique_ptr<format::Dataset> dataset, fs::FilesystemOptions options,
    std::unique_ptr<cache::CacheTier> ssd = nullptr) {
  auto tiers = std::make_unique<cache::TierStack>(
      options.ram_cache_bytes, dataset->manifest().files, std::move(ssd), nullptr);
  return std::make_unique<fs::Filesystem>(std::move(dataset), std::move(options),
                                          std::move(tiers));
}

}  // namespace mmfs::testing
