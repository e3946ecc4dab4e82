#include "tools/mmfs/what_if_view.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <vector>

#include "base/file_util.h"
#include "base/units.h"
#include "tools/mmfs/commands.h"

extern char** environ;

namespace mmfs::cli {

namespace {

struct Curve {
  const char* tier;  // "ram", "ssd"
  const fs::WhatIfCurveStats* stats;
};

// The keyed tiers that have curves, RAM first.
std::vector<Curve> Curves(const fs::StatsSnapshot& s) {
  std::vector<Curve> out = {{"ram", &s.what_if.ram}};
  if (s.what_if.ssd.has_value()) out.push_back({"ssd", &*s.what_if.ssd});
  return out;
}

const cache::TierCounters* Measured(const fs::StatsSnapshot& s, const std::string& tier) {
  for (const fs::TierStats& t : s.tiers) {
    if (t.name == tier) return &t.counters;
  }
  return nullptr;
}

bool IsNow(double fraction) { return std::abs(fraction - 1.0) < 1e-9; }

// gnuplot run on `script` and waited for, with stdin from /dev/null, its complaints into
// `err_file` and, as every helper mmfs starts, no descriptor of mmfs's beyond the standard three;
// no shell in between. Its exit status; else, with `*why` set, -1.
int RunGnuplot(const std::string& script, const std::string& err_file, std::string* why) {
  std::string program = "gnuplot", argument = script;
  char* argv[] = {program.data(), argument.data(), nullptr};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_file.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1);
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, program.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    *why = std::strerror(rc);
    return -1;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      *why = std::strerror(errno);
      return -1;
    }
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  *why = "killed by signal " + std::to_string(WTERMSIG(status));
  return -1;
}

}  // namespace

void PrintWhatIf(const fs::StatsSnapshot& s) {
  for (const Curve& curve : Curves(s)) {
    const fs::WhatIfCurveStats& c = *curve.stats;
    const bool ram = curve.tier == std::string("ram");
    std::printf("what-if for the %s tier (budget %s; %.1f%% of files sampled, %s sampled reads)\n",
                ram ? "RAM" : "SSD", FormatBytes(c.budget).c_str(), 100 * c.sampling_rate,
                FormatCount(c.sampled_reads).c_str());
    std::printf("  %12s %10s %10s\n", "size", "of budget", "hit ratio");
    const cache::TierCounters* measured = Measured(s, curve.tier);
    for (const cache::WhatIf::Point& p : c.points) {
      std::string mark;
      if (IsNow(p.fraction)) {
        mark = "  <- now";
        if (measured != nullptr && measured->lookups > 0) {
          char buf[64];
          std::snprintf(buf, sizeof buf, " (measured %.1f%% per READ)",
                        100.0 * static_cast<double>(measured->hits) /
                            static_cast<double>(measured->lookups));
          mark += buf;
        }
      }
      std::printf("  %12s %9.0f%% %9.1f%%%s\n", FormatBytes(p.bytes).c_str(), 100 * p.fraction,
                  100 * p.hit_ratio, mark.c_str());
    }
    std::printf("  working set of the last epoch: %s\n\n", FormatBytes(c.working_set_bytes).c_str());
  }
  std::printf("Hit ratios are by file read, for reads that reach the daemon (the kernel's page "
              "cache is in front).\n");
}

int PlotWhatIf(const std::string& mnt, const fs::StatsSnapshot& s, const std::string& out) {
  char dir[] = "/tmp/mmfs-plot-XXXXXX";
  if (::mkdtemp(dir) == nullptr) {
    PrintError(std::string("mkdtemp: ") + std::strerror(errno));
    return 1;
  }
  std::string d = dir;
  std::string script = "set terminal png size 1200,480\nset output '" + out + "'\n"
                       "set multiplot layout 1,2 title 'mmfs cache: " + mnt + "'\n"
                       "set grid\nset yrange [0:1]\nset key bottom right\n"
                       "set title 'What if: predicted hit ratio by tier size'\n"
                       "set ylabel 'hit ratio (file reads)'\n";
  // GiB for large tiers, MiB for small ones.
  uint64_t largest = 0;
  for (const Curve& curve : Curves(s)) {
    for (const cache::WhatIf::Point& p : curve.stats->points) largest = std::max(largest, p.bytes);
  }
  const bool gib_units = largest >= (1ull << 30);
  const double unit = gib_units ? static_cast<double>(1ull << 30) : static_cast<double>(1 << 20);
  script += std::string("set xlabel 'tier size (") + (gib_units ? "GiB" : "MiB") + ")'\n";
  std::string plots;
  for (const Curve& curve : Curves(s)) {
    const std::string tier = curve.tier;
    std::string data, now;
    for (const cache::WhatIf::Point& p : curve.stats->points) {
      std::string line = std::to_string(static_cast<double>(p.bytes) / unit) + " " +
                         std::to_string(p.hit_ratio) + "\n";
      data += line;
      if (IsNow(p.fraction)) now = line;
    }
    (void)WriteFileDurably(d + "/" + tier + ".dat", data);
    (void)WriteFileDurably(d + "/" + tier + "-now.dat", now);
    std::string name = tier == "ram" ? "RAM tier" : "SSD tier";
    plots += std::string(plots.empty() ? "plot " : ", ") + "'" + d + "/" + tier +
             ".dat' using 1:2 with linespoints lw 2 title '" + name + "', '" + d + "/" + tier +
             "-now.dat' using 1:2 with points pt 7 ps 2 title '" + name + " today'";
  }
  script += plots + "\n";
  // Hit ratio per tier between consecutive samples of the daemon's history, and now as the
  // last point.
  std::vector<fs::HistoryPoint> history = s.what_if.history;
  fs::HistoryPoint current{s.uptime_seconds, {}};
  for (const fs::TierStats& t : s.tiers) {
    current.tiers.emplace_back(t.counters.hits, t.counters.lookups);
  }
  history.push_back(std::move(current));
  std::string hist;
  for (size_t i = 1; i < history.size(); ++i) {
    hist += std::to_string(history[i].uptime / 60);
    for (size_t t = 0; t < s.tiers.size() && t < history[i].tiers.size(); ++t) {
      if (t >= history[i - 1].tiers.size()) {
        hist += " ?";
        continue;
      }
      double dh = static_cast<double>(history[i].tiers[t].first) -
                  static_cast<double>(history[i - 1].tiers[t].first);
      double dl = static_cast<double>(history[i].tiers[t].second) -
                  static_cast<double>(history[i - 1].tiers[t].second);
      // Appended piece by piece: GCC 12 at -O3 warns falsely (-Wrestrict) on " " + string&&.
      if (dl > 0) {
        hist += ' ';
        hist += std::to_string(dh / dl);
      } else {
        hist += " ?";
      }
    }
    hist += "\n";
  }
  script += "set title 'Hit ratio over time (10 s samples)'\nset xlabel 'minutes since mount'\n"
            "set ylabel 'hit ratio (READs)'\nset key top right\nset datafile missing '?'\n";
  if (hist.empty()) {
    script += "set label 1 'no history yet: the daemon samples every 10 s' at graph 0.1,0.5\n"
              "plot [0:1] NaN notitle\n";
  } else {
    (void)WriteFileDurably(d + "/history.dat", hist);
    std::string p;
    for (size_t t = 0; t < s.tiers.size(); ++t) {
      p += std::string(p.empty() ? "plot " : ", ") + "'" + d + "/history.dat' using 1:" +
           std::to_string(t + 2) + " with linespoints lw 2 title '" + s.tiers[t].name + "'";
    }
    script += p + "\n";
  }
  script += "unset multiplot\n";
  (void)WriteFileDurably(d + "/plot.gp", script);
  std::string err;
  const int rc = RunGnuplot(d + "/plot.gp", d + "/gnuplot.err", &err);
  if (auto err_text = ReadWholeFile(d + "/gnuplot.err", 1 << 16); err_text.ok()) err += *err_text;
  std::filesystem::remove_all(d);
  if (rc != 0) {
    PrintError("gnuplot failed (apt-get install gnuplot-nox): " + err);
    return 1;
  }
  std::printf("wrote %s\n", out.c_str());
  return 0;
}

}  // namespace mmfs::cli
