// Renders the stats document (Filesystem::StatsJson) in the Prometheus text exposition format,
// for `MNT/.mmfs/metrics` (node_exporter's textfile collector, or a scraper) and
// `mmfs stats --prometheus`.
//
// Thread-safety: pure function.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace mmfs::fs {

std::string PrometheusFromStats(const nlohmann::json& stats);

}  // namespace mmfs::fs
