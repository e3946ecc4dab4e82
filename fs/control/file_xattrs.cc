#include "fs/control/file_xattrs.h"

#include "base/file_util.h"

namespace mmfs::fs {

std::optional<std::string> FileXattr(const format::Dataset& dataset, const format::Entry& e,
                                     std::string_view name,
                                     const std::function<std::string()>& residency) {
  if (!e.is_regular()) return std::nullopt;
  const format::EntryRecord& r = e.record;
  if (name == "user.mmfs.xxh3") return HexU64(r.checksum);
  if (name == "user.mmfs.location") {
    return dataset.manifest().shards[r.shard].file + "@" + std::to_string(r.data_offset);
  }
  if (name == "user.mmfs.sample") return std::to_string(r.sample);
  if (name == "user.mmfs.resident") return residency();
  if (name == "user.mmfs.image_size" && r.width > 0) {
    return std::to_string(r.width) + "x" + std::to_string(r.height);
  }
  return std::nullopt;
}

std::vector<std::string> FileXattrNames(const format::Entry& e) {
  if (!e.is_regular()) return {};
  std::vector<std::string> names = {"user.mmfs.xxh3", "user.mmfs.location", "user.mmfs.sample",
                                    "user.mmfs.resident"};
  if (e.record.width > 0) names.push_back("user.mmfs.image_size");
  return names;
}

}  // namespace mmfs::fs
