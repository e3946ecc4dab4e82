// The `user.mmfs.*` extended attributes of a packed file: where its bytes live and what mmfs
// knows of them (checksum, shard location, sample, residency in the tiers, image size).
//
// They describe the original bytes, so only regular files of the original tree have them.
// Thread-safety: stateless functions over a dataset that is read-only once open.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fs/format/dataset.h"

namespace mmfs::fs {

// The value of attribute `name` of entry `e`, or nullopt when `e` has no such attribute.
// `residency` answers user.mmfs.resident (asked only for that name).
std::optional<std::string> FileXattr(const format::Dataset& dataset, const format::Entry& e,
                                     std::string_view name,
                                     const std::function<std::string()>& residency);

// The names FileXattr answers for `e` (none for directories and symlinks).
std::vector<std::string> FileXattrNames(const format::Entry& e);

}  // namespace mmfs::fs
