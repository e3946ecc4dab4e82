// The request counters' part of a StatsSnapshot (stats.h): what Metrics (fs/metrics/metrics.h)
// counts, read into the snapshot. Here, not in fs/metrics, because the snapshot sits above the
// rooms whose stat types it gathers, and Metrics below them all.
//
// Thread-safety: reads the counters as Metrics allows from any thread.
#pragma once

#include "fs/metrics/metrics.h"
#include "fs/stats/stats.h"

namespace mmfs::fs {

// Uptime, CPU time, requests, bytes served, the transport, errors, listing, hold-once drops
// (out->memory's) and the pushers' queue (out->readahead.pushed's).
void ReportMetrics(const Metrics& metrics, StatsSnapshot* out);

}  // namespace mmfs::fs
