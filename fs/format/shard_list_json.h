// The "shards" array of a manifest, as both the dataset's and a view's manifest write it: one
// object per shard (file, size, xxh3, first_sample, samples, data_bytes). Reading it stays with
// each manifest's parser, whose error messages name their own file.
// Thread-safety: a pure function.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "base/file_util.h"  // HexU64
#include "fs/format/manifest.h"

namespace mmfs::format {

inline nlohmann::json ShardListJson(const std::vector<ShardInfo>& shards) {
  nlohmann::json list = nlohmann::json::array();
  for (const ShardInfo& s : shards) {
    list.push_back({{"file", s.file},
                    {"size", s.size},
                    {"xxh3", HexU64(s.checksum)},
                    {"first_sample", s.first_sample},
                    {"samples", s.samples},
                    {"data_bytes", s.data_bytes}});
  }
  return list;
}

}  // namespace mmfs::format
