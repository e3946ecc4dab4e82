// StatsFromJson: the JSON document served as `.mmfs/stats` (stats_format.h) read back into the
// typed StatsSnapshot, so that the CLI (tools/mmfs/stats_client.h) works on typed fields, not on
// keys spelled again at every use.
//
// StatsToJson(StatsFromJson(StatsToJson(s))) == StatsToJson(s): every field the document carries
// comes back (tests/fs/stats/stats_parse_test.cc). Numbers the document derives (origin.reads, the
// budget's explanation, the readers' shares) are recomputed from the fields, not read. A key a
// daemon older than this mmfs does not write reads as its default; a key of the wrong kind is
// Corruption naming it.
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "fs/stats/stats.h"

namespace mmfs::fs {

Result<StatsSnapshot> StatsFromJson(const nlohmann::json& j);

}  // namespace mmfs::fs
