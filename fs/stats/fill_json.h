// The "fill" section of `.mmfs/stats` (FillStats, fs/readahead/fill_types.h), written and read
// back: the daemon renders it (stats_format.cc), `mmfs stats` parses it into the typed value.
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include "fs/readahead/fill_types.h"

namespace mmfs::fs {

nlohmann::json FillToJson(const FillStats& f);
// `j` is the section; a daemon without one reads as a fill that is off.
FillStats FillFromJson(const nlohmann::json& j);

}  // namespace mmfs::fs
