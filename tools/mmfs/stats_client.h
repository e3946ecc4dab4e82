// The CLI's one way to read a mount's statistics: `mmfs stats` and `mmfs warmup` ask here.
//
// The daemon serves them as files of MNT/.mmfs (fs/control/control_dir.h): the JSON document
// `stats` (or `stats?window=S&top=N` for the readers over another window) and the Prometheus
// text `metrics`. ReadStatsText returns a file as served (what --json and --prometheus print);
// ReadStatsSnapshot parses the document into the typed snapshot (fs/stats/stats_parse.h), which is
// what every human view works on.
//
// Thread-safety: stateless functions.
#pragma once

#include <string>

#include "base/status.h"
#include "fs/stats/stats.h"

namespace mmfs::cli {

// MNT/.mmfs/`name` as served. NotFound, naming the mount, when it is not an mmfs mount or its
// daemon does not answer.
Result<std::string> ReadStatsText(const std::string& mnt, const std::string& name);

// The stats document `name` (default: plain `stats`) of `mnt`, typed. Corruption naming the
// file when it is not the document this mmfs knows.
Result<fs::StatsSnapshot> ReadStatsSnapshot(const std::string& mnt,
                                            const std::string& name = "stats");

}  // namespace mmfs::cli
