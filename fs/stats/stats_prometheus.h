// The Prometheus rendering of a StatsSnapshot (stats.h): the text exposition format served as
// `.mmfs/metrics` (for node_exporter's textfile collector, or a scraper). The JSON rendering
// is stats_format.h; both read the same typed counters and the same field tables
// (stat_fields.h), so a metric and its JSON key are declared together.
//
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "fs/stats/stats.h"

namespace mmfs::fs {

std::string StatsPrometheus(const StatsSnapshot& s);

}  // namespace mmfs::fs
