// The JSON rendering of a StatsSnapshot (stats.h): the document served as `.mmfs/stats` (read
// by `mmfs stats`, `mmfs warmup`, tests, bench/*.py). The Prometheus rendering, served as
// `.mmfs/metrics`, is stats_prometheus.h.
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "fs/stats/stats.h"

namespace mmfs::fs {

nlohmann::json StatsToJson(const StatsSnapshot& s);
// StatsToJson, indented, with a final newline.
std::string StatsJsonText(const StatsSnapshot& s);
// The "memory" section alone.
nlohmann::json MemoryJson(const MemoryStats& m);
// What a governor (may be null) and the RSS report.
MemoryStats MemoryStatsOf(uint64_t rss_bytes, const MemoryGovernor* governor);
// The "memory" section of the stats document: the daemon's RSS and, with a governor, the budget
// it settled on and why, and the pressure and targets now (MemoryJson of MemoryStatsOf).
nlohmann::json MemoryStatsJson(uint64_t rss_bytes, const MemoryGovernor* governor);

}  // namespace mmfs::fs
