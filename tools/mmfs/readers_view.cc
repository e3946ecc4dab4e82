#include "tools/mmfs/readers_view.h"

#include <cstdio>

#include "base/units.h"
#include "fs/names/fs_types.h"
#include "fs/readers/reader_verdict.h"

namespace mmfs::cli {

namespace {

std::string Pct(double share) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * share);
  return buf;
}

// One row; `label` names a sum ("others", "finished", "all").
std::string Line(const fs::ReaderRow& r, const char* label = nullptr) {
  std::string who;
  std::string pid = "-";
  std::string threads = "-";
  if (label != nullptr) {
    who = std::string(label) + " (" + std::to_string(r.processes) + ")";
  } else if (r.kind == fs::ReaderRow::Kind::kProcess) {
    who = r.comm;
    pid = std::to_string(r.pid);
    threads = std::to_string(r.threads);
  } else {
    who = r.kind == fs::ReaderRow::Kind::kOthers ? "others" : "finished";
    who += " (" + std::to_string(r.processes) + ")";
  }
  char buf[256];
  std::snprintf(buf, sizeof buf, "    %-8s %-16s %7s %8s %7s %7s %8s %10s %10s %9s  %s\n",
                pid.c_str(), who.c_str(), threads.c_str(), FormatDuration(r.wall_seconds).c_str(),
                Pct(r.stall_share()).c_str(), Pct(r.cpu_share()).c_str(),
                Pct(r.runq_share()).c_str(), FormatBytes(r.served_bytes).c_str(),
                r.has_rchar ? FormatBytes(r.rchar_bytes).c_str() : "?",
                r.has_rchar ? Pct(r.page_cache_share_estimate()).c_str() : "?",
                std::string(fs::ReaderVerdictName(r.verdict)).c_str());
  return buf;
}

}  // namespace

std::string ReadersSection(const fs::ReadersStats& r) {
  if (!r.enabled) return "";
  char head[512];
  std::snprintf(head, sizeof head,
                "  Readers over the last %s (stall: in mmfs requests; cpu: user + system; "
                "cpu wait: runnable, no free core; read: rchar, any file)\n"
                "    %-8s %-16s %7s %8s %7s %7s %8s %10s %10s %9s  %s\n",
                FormatDuration(r.window_seconds).c_str(), "pid", "command", "threads", "seen",
                "stall", "cpu", "cpu wait", "from mmfs", "read", "not mmfs", "verdict");
  std::string out = head;
  if (r.rows.empty()) {
    out += "    (no reader read through the mount in the window)\n";
  }
  for (const fs::ReaderRow& row : r.rows) out += Line(row);
  if (r.rows.size() > 1) out += Line(r.total, "all");
  char verdict[512];
  std::snprintf(verdict, sizeof verdict,
                "  verdict   %s: readers waited on mmfs %s, ran on a CPU %s and waited for one "
                "%s of their time (io-bound from %.0f%% waiting, compute-bound from %.0f%% CPU "
                "and CPU wait)\n",
                std::string(fs::ReaderVerdictName(r.verdict)).c_str(),
                Pct(r.total.stall_share()).c_str(), Pct(r.total.cpu_share()).c_str(),
                Pct(r.total.runq_share()).c_str(), 100 * fs::kIoBoundStallShare,
                100 * fs::kComputeBoundCpuShare);
  out += verdict;
  out += "  advice    " + r.advice + "\n";
  if (r.untracked_requests > 0) {
    out += "  (" + FormatCount(r.untracked_requests) +
           " requests of threads beyond the table's bound were not attributed)\n";
  }
  return out;
}

std::string StatsQueryName(double window_seconds, int top) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%s?window=%g&top=%d", fs::kStatsFileName, window_seconds, top);
  return buf;
}

std::string StallColumn(const fs::ReadersStats& r) {
  if (!r.enabled || r.rows.empty() || r.total.wall_seconds <= 0) return "-";
  return Pct(r.total.stall_share());
}

}  // namespace mmfs::cli
