// Tests' way to make a Filesystem over a dataset with a RAM tier of options.ram_cache_bytes and
// an optional SSD tier, as cache::BuildTierStack would stack them, without options to parse; the
// shards in a LocalFileOrigin as the mount opens them, unless the test brings its own origin.
#pragma once

#include <memory>
#include <utility>

#include "cache/tier_stack.h"
#include "fs/core/filesystem.h"
#include "tests/origin_helper.h"

namespace mmfs::testing {

inline std::unique_ptr<fs::Filesystem> NewFilesystem(
    std::unique_ptr<format::Dataset> dataset, fs::FilesystemOptions options,
    std::unique_ptr<cache::CacheTier> ssd = nullptr,
    std::unique_ptr<origin::Origin> shards = nullptr) {
  if (shards == nullptr) shards = LocalOrigin(*dataset);
  auto tiers = std::make_unique<cache::TierStack>(
      options.ram_cache_bytes, dataset->manifest().files, std::move(ssd), nullptr);
  return std::make_unique<fs::Filesystem>(std::move(dataset), std::move(options),
                                          std::move(tiers), std::move(shards));
}

}  // namespace mmfs::testing
