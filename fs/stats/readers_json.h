// The "readers" section of `.mmfs/stats` (ReadersStats, fs/readers/reader_stats.h), written and
// read back: the daemon renders it (stats_format.cc), `mmfs stats` parses it into the typed value
// again. Derived numbers (shares, the page-cache estimate) are written for scripts and ignored when
// read: they follow from the typed fields.
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "fs/stats/stats.h"

namespace mmfs::fs {

nlohmann::json ReadersToJson(const ReadersStats& r);
// `j` is the section; a daemon without one (null) reads as disabled.
Result<ReadersStats> ReadersFromJson(const nlohmann::json& j);
// "io-bound" ... back to the verdict; kNone for anything else.
ReaderVerdict ReaderVerdictFromName(std::string_view name);

}  // namespace mmfs::fs
