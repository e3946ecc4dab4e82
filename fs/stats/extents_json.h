// The "extents" section of `.mmfs/stats` (ExtentCounters, extent_types.h), written and read
// back: the daemon renders it (stats_format.cc), `mmfs stats` parses it into the typed value.
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include "fs/read/extent_types.h"

namespace mmfs::fs {

nlohmann::json ExtentsToJson(const ExtentCounters& c);
// `j` is the section; a daemon without one (null or absent keys) reads as zeros.
ExtentCounters ExtentsFromJson(const nlohmann::json& j);

}  // namespace mmfs::fs
