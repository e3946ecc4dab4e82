// `mmfs stats --what-if` and `--plot`: the hit ratio each keyed tier (RAM, SSD) would have had
// at other sizes, and the tiers' hit ratios over time, from the typed snapshot (fs/stats/stats.h
// WhatIfStats and the tiers' counters).
//
// Thread-safety: functions of their arguments; Plot runs gnuplot in a temporary directory.
#pragma once

#include <string>

#include "fs/stats/stats.h"

namespace mmfs::cli {

// The curves as a table per tier, the current size marked with its measured hit ratio.
void PrintWhatIf(const fs::StatsSnapshot& s);
// Writes the curves and the hit ratios over time to `out` (PNG) with gnuplot; 0 on success.
int PlotWhatIf(const std::string& mnt, const fs::StatsSnapshot& s, const std::string& out);

}  // namespace mmfs::cli
