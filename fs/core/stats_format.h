// The two renderings of a StatsSnapshot (stats.h): the JSON document served as `.mmfs/stats`
// (read by `mmfs stats`, `mmfs warmup`, tests, bench/*.py) and the Prometheus text exposition
// format served as `.mmfs/metrics` (node_exporter's textfile collector, or a scraper).
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "fs/core/stats.h"

namespace mmfs::fs {

nlohmann::json StatsToJson(const StatsSnapshot& s);
// StatsToJson, indented, with a final newline.
std::string StatsJsonText(const StatsSnapshot& s);
std::string StatsPrometheus(const StatsSnapshot& s);
// The "memory" section alone.
nlohmann::json MemoryJson(const MemoryStats& m);
// What a governor (may be null) and the RSS report.
MemoryStats MemoryStatsOf(uint64_t rss_bytes, const MemoryGovernor* governor);

}  // namespace mmfs::fs
