// The "Readers" section of `mmfs stats` and the stall column of `mmfs stats --watch`, from the
// typed snapshot (fs/stats/stats.h; ReadersStats, fs/readers/reader_stats.h): who reads the mount,
// how much of their time they wait on mmfs and spend on a CPU, the verdict and its advice.
//
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "fs/stats/stats.h"

namespace mmfs::cli {

// The section, lines indented by two spaces, ending in a newline; empty when the daemon keeps
// no reader accounting.
std::string ReadersSection(const fs::ReadersStats& r);
// "61.3%" of the readers' time waiting on mmfs over the window; "-" with no active reader.
std::string StallColumn(const fs::ReadersStats& r);
// The name in MNT/.mmfs of the stats document with the readers over `window` seconds and `top`
// rows ("stats?window=10&top=8", fs/control/control_dir.h).
std::string StatsQueryName(double window_seconds, int top);

}  // namespace mmfs::cli
