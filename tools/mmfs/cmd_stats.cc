// mmfs stats: reads MNT/.mmfs/stats (JSON) and shows it for people, or passes it through (--json).

#include <algorithm>
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fs/base/file_util.h"
#include "fs/base/json_text.h"
#include "fs/base/units.h"
#include "fs/core/filesystem.h"
#include "fs/core/readers_json.h"
#include "tools/mmfs/commands.h"
#include "tools/mmfs/readers_view.h"

namespace mmfs::cli {

namespace {

std::string Percent(uint64_t part, uint64_t whole) {
  if (whole == 0) return "-";
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
  return buf;
}

std::string Micros(uint64_t us) {
  return us == 0 ? "-" : FormatDuration(static_cast<double>(us) / 1e6);
}

// Tuning hints where the numbers say something.
void PrintHints(const nlohmann::json& j) {
  std::vector<std::string> hints;
  const auto& tiers = j.at("cache").at("tiers");
  for (const auto& tier : tiers) {
    std::string name = tier.at("name").get<std::string>();
    uint64_t lookups = tier.at("lookups").get<uint64_t>();
    uint64_t hits = tier.at("hits").get<uint64_t>();
    uint64_t used = tier.at("bytes_used").get<uint64_t>();
    uint64_t budget = tier.at("bytes_budget").get<uint64_t>();
    bool full = budget > 0 && used * 10 >= budget * 9;
    if (full && lookups > 1000 && hits * 2 < lookups) {
      hints.push_back("the " + name + " tier is full and misses more than it hits: the working "
                      "set is larger than its budget (" + FormatBytes(budget) + ")" +
                      (name == "ram" ? "; raise --ram-cache or add --cache-dir on a local SSD"
                                     : "; raise --ssd-cache"));
    }
    if (tier.value("admission_paused", false)) {
      hints.push_back("the " + name + " tier stopped admitting: its disk is nearly full or "
                      "failing (see the daemon log)");
    }
  }
  if (tiers.size() == 1 && j.at("origin").at("reads").get<uint64_t>() > 0 &&
      j.at("dataset").at("bytes").get<uint64_t>() > tiers[0].at("bytes_budget").get<uint64_t>()) {
    hints.push_back("the dataset is larger than the RAM tier and there is no SSD tier; "
                    "--cache-dir DIR keeps later epochs off the origin");
  }
  if (j.at("errors").at("checksum").get<uint64_t>() > 0) {
    hints.push_back("some files failed their checksum: the dataset is damaged; the daemon log "
                    "names the files");
  }
  if (hints.empty()) return;
  std::printf("\n  hints:\n");
  for (const std::string& h : hints) std::printf("  - %s\n", h.c_str());
}

void PrintHuman(const std::string& mnt, const nlohmann::json& j) {
  const auto& ds = j.at("dataset");
  std::printf("mmfs stats for %s (dataset %s, up %s)\n", mnt.c_str(),
              ds.at("path").get<std::string>().c_str(),
              FormatDuration(j.at("uptime_seconds").get<double>()).c_str());
  std::printf("  dataset   %s samples, %s files, %s in %s shard(s)\n",
              FormatCount(ds.at("samples").get<uint64_t>()).c_str(),
              FormatCount(ds.at("files").get<uint64_t>()).c_str(),
              FormatBytes(ds.at("bytes").get<uint64_t>()).c_str(),
              FormatCount(ds.at("shards").get<uint64_t>()).c_str());
  const auto& req = j.at("requests");
  std::printf("  served    %s in %s reads\n", FormatBytes(j.at("bytes_served").get<uint64_t>()).c_str(),
              FormatCount(req.at("read").at("count").get<uint64_t>()).c_str());
  for (const auto& tier : j.at("cache").at("tiers")) {
    uint64_t lookups = tier.at("lookups").get<uint64_t>();
    uint64_t hits = tier.at("hits").get<uint64_t>();
    std::printf("  cache %-4s %s hit ratio (%s of %s lookups), %s of %s used, %s entries, "
                "%s evictions, %s kept out\n",
                tier.at("name").get<std::string>().c_str(), Percent(hits, lookups).c_str(),
                FormatCount(hits).c_str(), FormatCount(lookups).c_str(),
                FormatBytes(tier.at("bytes_used").get<uint64_t>()).c_str(),
                FormatBytes(tier.at("bytes_budget").get<uint64_t>()).c_str(),
                FormatCount(tier.at("entries").get<uint64_t>()).c_str(),
                FormatCount(tier.at("evictions").get<uint64_t>()).c_str(),
                FormatCount(tier.value("rejected", uint64_t{0})).c_str());
    uint64_t corrupt = tier.value("corrupt", uint64_t{0});
    uint64_t write_errors = tier.value("write_errors", uint64_t{0});
    if (corrupt + write_errors > 0 || tier.value("admission_paused", false)) {
      std::printf("             %s damaged entries dropped, %s write errors%s\n",
                  FormatCount(corrupt).c_str(), FormatCount(write_errors).c_str(),
                  tier.value("admission_paused", false) ? ", admission PAUSED" : "");
    }
  }
  const auto& origin = j.at("origin");
  std::printf("  origin    %s reads, %s, %s errors, %s waits on a load in flight\n",
              FormatCount(origin.at("reads").get<uint64_t>()).c_str(),
              FormatBytes(origin.at("bytes").get<uint64_t>()).c_str(),
              FormatCount(origin.at("errors").get<uint64_t>()).c_str(),
              FormatCount(origin.at("coalesced").get<uint64_t>()).c_str());
  if (origin.contains("rereads")) {
    const auto& rr = origin.at("rereads");
    std::printf("  origin re-reads %s files, %s (fetched again before the last fetch was used)\n",
                FormatCount(rr.value("files", uint64_t{0})).c_str(),
                FormatBytes(rr.value("bytes", uint64_t{0})).c_str());
  }
  if (j.contains("readahead")) {
    const auto& ra = j.at("readahead");
    std::printf("  readahead %s, %s runs detected, buffer %s of %s\n",
                ra.at("enabled").get<bool>() ? "on" : "off",
                FormatCount(ra.value("runs_detected", uint64_t{0})).c_str(),
                FormatBytes(ra.at("buffer_bytes").get<uint64_t>()).c_str(),
                FormatBytes(ra.at("buffer_budget").get<uint64_t>()).c_str());
    for (const auto& [name, pm] : ra.at("patterns").items()) {
      uint64_t issued = pm.at("issued").get<uint64_t>();
      if (issued == 0) continue;
      uint64_t used = pm.at("used").get<uint64_t>();
      std::printf("    %-15s %s prefetched, %s used (%s), %s wasted, %s late\n", name.c_str(),
                  FormatCount(issued).c_str(), FormatCount(used).c_str(),
                  Percent(used, issued).c_str(), FormatCount(pm.at("wasted").get<uint64_t>()).c_str(),
                  FormatCount(pm.value("late", uint64_t{0})).c_str());
    }
    if (ra.contains("pushed") && ra.at("pushed").value("files", uint64_t{0}) > 0) {
      const auto& p = ra.at("pushed");
      std::printf("    pushed         %s files (%s) into the page cache before their READ, %s "
                  "refused\n",
                  FormatCount(p.at("files").get<uint64_t>()).c_str(),
                  FormatBytes(p.at("bytes").get<uint64_t>()).c_str(),
                  FormatCount(p.at("failed").get<uint64_t>()).c_str());
    }
    if (ra.contains("hint") && ra.at("hint").value("orders", uint64_t{0}) > 0) {
      const auto& h = ra.at("hint");
      std::printf("    hint order     %s files, readers at %s, %s orders received, %s lines named "
                  "no file\n",
                  FormatCount(h.at("positions").get<uint64_t>()).c_str(),
                  FormatCount(h.at("cursor").get<uint64_t>()).c_str(),
                  FormatCount(h.at("orders").get<uint64_t>()).c_str(),
                  FormatCount(h.at("unknown_lines").get<uint64_t>()).c_str());
    }
  }
  if (j.contains("cluster") && j.at("cluster").value("enabled", false)) {
    const auto& c = j.at("cluster");
    std::string servers;
    for (const auto& srv : c.at("servers")) {
      servers += (servers.empty() ? "" : ", ") + srv.at("server").get<std::string>() +
                 (srv.at("up").get<bool>() ? " up" : " DOWN");
    }
    std::printf("  cluster   %s in, %s out, %s errors, %s timeouts, %s damaged, %s dropped; %s\n",
                FormatBytes(c.at("bytes_in").get<uint64_t>()).c_str(),
                FormatBytes(c.at("bytes_out").get<uint64_t>()).c_str(),
                FormatCount(c.at("errors").get<uint64_t>()).c_str(),
                FormatCount(c.at("timeouts").get<uint64_t>()).c_str(),
                FormatCount(c.at("damaged").get<uint64_t>()).c_str(),
                FormatCount(c.at("dropped").get<uint64_t>()).c_str(), servers.c_str());
  }
  // One line per view served (MNT/@N): what its readers got and what came from its shards.
  const nlohmann::json views = j.value("views", nlohmann::json::object());
  for (const auto& [side, v] : views.items()) {
    std::printf("  view @%-4s %s files, %s served; resized loads %s (%s), %s read ahead (%s)\n",
                side.c_str(), FormatCount(v.value("files_served", uint64_t{0})).c_str(),
                FormatBytes(v.value("bytes_served", uint64_t{0})).c_str(),
                FormatCount(v.value("resized_loads", uint64_t{0})).c_str(),
                FormatBytes(v.value("resized_load_bytes", uint64_t{0})).c_str(),
                FormatCount(v.value("readahead_loads", uint64_t{0})).c_str(),
                FormatBytes(v.value("readahead_load_bytes", uint64_t{0})).c_str());
  }
  const auto& errors = j.at("errors");
  std::printf("  errors    %s checksum mismatches, %s I/O errors\n",
              FormatCount(errors.at("checksum").get<uint64_t>()).c_str(),
              FormatCount(errors.at("io").get<uint64_t>()).c_str());
  const auto& mem = j.at("memory");
  std::printf("  memory    daemon RSS %s", FormatBytes(mem.at("rss_bytes").get<uint64_t>()).c_str());
  if (mem.contains("hold_once")) {
    std::printf(", %s tier-held files dropped from the page cache (held once)",
                FormatCount(mem.at("hold_once").value("dropped_files", uint64_t{0})).c_str());
  }
  std::printf("\n");
  if (mem.contains("budget")) {
    // The budget the daemon settled on at mount, and why.
    const auto& b = mem.at("budget");
    std::string where = b.value("limit_source", "") == "physical" ? "" : " " + b.value("cgroup", "");
    std::printf("  budget    %s: RAM tier %s, prefetch %s, read buffer %s; limit %s (%s%s), %s "
                "reserved besides the RAM tier, %s used by others at mount%s\n",
                b.value("source", "").c_str(),
                FormatBytes(b.value("ram_cache_bytes", uint64_t{0})).c_str(),
                FormatBytes(b.value("prefetch_bytes", uint64_t{0})).c_str(),
                FormatBytes(b.value("read_buffer_bytes", uint64_t{0})).c_str(),
                FormatBytes(b.value("limit_bytes", uint64_t{0})).c_str(),
                b.value("limit_source", "").c_str(), where.c_str(),
                FormatBytes(b.value("reserved_bytes", uint64_t{0})).c_str(),
                FormatBytes(b.value("in_use_bytes", uint64_t{0})).c_str(),
                b.value("clamped", false)
                    ? (", CLAMPED from --ram-cache " +
                       FormatBytes(b.value("requested_ram_bytes", uint64_t{0})))
                          .c_str()
                    : "");
  }
  if (mem.contains("budget") && mem.at("budget").value("memory_bytes", uint64_t{0}) > 0) {
    // --memory: how the memory given is split (issue 19).
    const auto& b = mem.at("budget");
    const uint64_t given = b.value("memory_bytes", uint64_t{0});
    const uint64_t ram = b.value("ram_cache_bytes", uint64_t{0});
    const uint64_t page_cache = b.value("page_cache_bytes", uint64_t{0});
    const uint64_t daemon = given > ram + page_cache ? given - ram - page_cache : 0;
    std::printf("  split     --memory %s: RAM tier %s, daemon and buffers %s, page cache of the "
                "mount %s\n",
                FormatBytes(given).c_str(), FormatBytes(ram).c_str(), FormatBytes(daemon).c_str(),
                FormatBytes(page_cache).c_str());
  }
  if (mem.contains("pressure")) {
    const auto& p = mem.at("pressure");
    std::printf("  pressure  %s (working set %s), RAM tier now %s, prefetch %s, read buffer %s, "
                "%s shrinks, push %s\n",
                p.value("level", "").c_str(), FormatBytes(p.value("working_bytes", uint64_t{0})).c_str(),
                FormatBytes(p.value("ram_cache_bytes", uint64_t{0})).c_str(),
                FormatBytes(p.value("prefetch_bytes", uint64_t{0})).c_str(),
                FormatBytes(p.value("read_buffer_bytes", uint64_t{0})).c_str(),
                FormatCount(p.value("shrinks", uint64_t{0})).c_str(),
                p.value("push", true) ? "on" : "paused");
  }
  // Who reads the mount and whether loading is their bottleneck (a daemon without: nothing).
  auto readers = fs::ReadersFromJson(j.value("readers", nlohmann::json()));
  if (readers.ok() && readers->enabled) std::printf("\n%s", ReadersSection(*readers).c_str());
  std::printf("\n  %-10s %12s %8s %10s %10s\n", "request", "count", "errors", "p50", "p99");
  for (const auto& [name, op] : req.items()) {
    uint64_t count = op.at("count").get<uint64_t>();
    if (count == 0) continue;
    std::printf("  %-10s %12s %8s %10s %10s\n", name.c_str(), FormatCount(count).c_str(),
                FormatCount(op.at("errors").get<uint64_t>()).c_str(),
                Micros(op.at("p50_us").get<uint64_t>()).c_str(),
                Micros(op.at("p99_us").get<uint64_t>()).c_str());
  }
  std::printf("\n  (kernel-cached reads never reach mmfs and are not counted here)\n");
  PrintHints(j);
}

}  // namespace

// `name`: the stats file, or its query form with the readers' window (readers_view.h).
Result<nlohmann::json> ReadStats(const std::string& mnt,
                                 const std::string& name = fs::kStatsFileName) {
  std::string path = mnt + "/" + fs::kControlDirName + "/" + name;
  auto text = ReadWholeFile(path, 64ull << 20);
  if (!text.ok()) {
    return Status::NotFound(mnt + " is not an mmfs mount, or its daemon is not answering (" +
                            text.status().message() + ")");
  }
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded()) return Status::Corruption(path + ": not valid JSON");
  return j;
}

uint64_t U(const nlohmann::json& j, std::initializer_list<const char*> keys) {
  const nlohmann::json* p = &j;
  for (const char* k : keys) {
    if (!p->is_object() || !p->contains(k)) return 0;
    p = &(*p)[k];
  }
  return p->is_number() ? p->get<uint64_t>() : 0;
}

std::atomic<bool> g_stop{false};

// One line per interval with the deltas, in the style of `juicefs stats`.
int Watch(const StatsArgs& args) {
  signal(SIGINT, [](int) { g_stop = true; });
  // The readers' stall over each interval (at least the accounting's 1 s tick).
  const std::string name = StatsQueryName(std::max(1.0, args.watch), args.top);
  auto prev = ReadStats(args.mountpoint, name);
  if (!prev.ok()) {
    PrintError(prev.status().message());
    return 1;
  }
  const double dt = args.watch;
  int lines = 0;
  while (!g_stop) {
    for (int i = 0; i < static_cast<int>(dt * 10) && !g_stop; ++i) {
      struct timespec ts = {0, 100000000};
      nanosleep(&ts, nullptr);
    }
    if (g_stop) break;
    auto cur = ReadStats(args.mountpoint, name);
    if (!cur.ok()) {
      PrintError(cur.status().message());
      return 1;
    }
    if (lines++ % 20 == 0) {
      std::printf("%8s %9s %10s %9s %8s %8s %10s %9s %9s %8s %7s\n", "time", "reads/s", "served/s",
                  "lookups/s", "ram hit", "ssd hit", "origin/s", "p99 read", "errors", "rss",
                  "stall");
    }
    const auto& a = *prev;
    const auto& b = *cur;
    auto rate = [&](std::initializer_list<const char*> keys) {
      return static_cast<double>(U(b, keys) - U(a, keys)) / dt;
    };
    auto tier_ratio = [&](size_t i) -> std::string {
      const auto& ta = a["cache"]["tiers"];
      const auto& tb = b["cache"]["tiers"];
      if (i >= tb.size()) return "-";
      uint64_t l = tb[i]["lookups"].get<uint64_t>() - ta[i]["lookups"].get<uint64_t>();
      uint64_t h = tb[i]["hits"].get<uint64_t>() - ta[i]["hits"].get<uint64_t>();
      return Percent(h, l);
    };
    std::time_t now = std::time(nullptr);
    char when[16];
    std::strftime(when, sizeof when, "%H:%M:%S", std::localtime(&now));
    uint64_t errors = U(b, {"errors", "checksum"}) + U(b, {"errors", "io"});
    auto readers = fs::ReadersFromJson(b.value("readers", nlohmann::json()));
    std::printf("%8s %9.0f %8s/s %9.0f %8s %8s %8s/s %9s %9s %8s %7s\n", when,
                rate({"requests", "read", "count"}),
                FormatBytes(static_cast<uint64_t>(rate({"bytes_served"}))).c_str(),
                rate({"requests", "lookup", "count"}), tier_ratio(0).c_str(), tier_ratio(1).c_str(),
                FormatBytes(static_cast<uint64_t>(rate({"origin", "bytes"}))).c_str(),
                Micros(U(b, {"requests", "read", "p99_us"})).c_str(), FormatCount(errors).c_str(),
                FormatBytes(U(b, {"memory", "rss_bytes"})).c_str(),
                readers.ok() ? StallColumn(*readers).c_str() : "-");
    std::fflush(stdout);
    prev = std::move(cur);
  }
  return 0;
}

void PrintWhatIf(const nlohmann::json& j) {
  const auto& w = j.at("what_if");
  std::map<std::string, uint64_t> measured_hits, measured_lookups;
  for (const auto& t : j.at("cache").at("tiers")) {
    measured_hits[t.at("name").get<std::string>()] = t.at("hits").get<uint64_t>();
    measured_lookups[t.at("name").get<std::string>()] = t.at("lookups").get<uint64_t>();
  }
  for (const char* tier : {"ram", "ssd"}) {
    if (!w.contains(tier)) continue;
    const auto& c = w.at(tier);
    std::printf("what-if for the %s tier (budget %s; %.1f%% of files sampled, %s sampled reads)\n",
                tier == std::string("ram") ? "RAM" : "SSD",
                FormatBytes(c.at("budget").get<uint64_t>()).c_str(),
                100 * c.at("sampling_rate").get<double>(),
                FormatCount(c.at("sampled_reads").get<uint64_t>()).c_str());
    std::printf("  %12s %10s %10s\n", "size", "of budget", "hit ratio");
    for (const auto& p : c.at("points")) {
      double f = p.at("fraction").get<double>();
      std::string mark;
      if (std::abs(f - 1.0) < 1e-9) {
        uint64_t lookups = measured_lookups[tier];
        mark = "  <- now";
        if (lookups > 0) {
          char buf[64];
          std::snprintf(buf, sizeof buf, " (measured %.1f%% per READ)",
                        100.0 * static_cast<double>(measured_hits[tier]) / static_cast<double>(lookups));
          mark += buf;
        }
      }
      std::printf("  %12s %9.0f%% %9.1f%%%s\n", FormatBytes(p.at("bytes").get<uint64_t>()).c_str(),
                  100 * f, 100 * p.at("hit_ratio").get<double>(), mark.c_str());
    }
    std::printf("  working set of the last epoch: %s\n\n",
                FormatBytes(c.at("working_set_bytes").get<uint64_t>()).c_str());
  }
  std::printf("Hit ratios are by file read, for reads that reach the daemon (the kernel's page "
              "cache is in front).\n");
}

// Writes the what-if curves and the hit ratios over time to a PNG with gnuplot.
int Plot(const std::string& mnt, const nlohmann::json& j, const std::string& out) {
  char dir[] = "/tmp/mmfs-plot-XXXXXX";
  if (::mkdtemp(dir) == nullptr) {
    PrintError(std::string("mkdtemp: ") + std::strerror(errno));
    return 1;
  }
  std::string d = dir;
  const auto& w = j.at("what_if");
  std::string script = "set terminal png size 1200,480\nset output '" + out + "'\n"
                       "set multiplot layout 1,2 title 'mmfs cache: " + mnt + "'\n"
                       "set grid\nset yrange [0:1]\nset key bottom right\n"
                       "set title 'What if: predicted hit ratio by tier size'\n"
                       "set ylabel 'hit ratio (file reads)'\n";
  // GiB for large tiers, MiB for small ones.
  uint64_t largest = 0;
  for (const char* tier : {"ram", "ssd"}) {
    if (!w.contains(tier)) continue;
    for (const auto& p : w.at(tier).at("points")) largest = std::max(largest, p.at("bytes").get<uint64_t>());
  }
  const bool gib_units = largest >= (1ull << 30);
  const double unit = gib_units ? static_cast<double>(1ull << 30) : static_cast<double>(1 << 20);
  script += std::string("set xlabel 'tier size (") + (gib_units ? "GiB" : "MiB") + ")'\n";
  std::string plots;
  for (const char* tier : {"ram", "ssd"}) {
    if (!w.contains(tier)) continue;
    std::string data, now;
    for (const auto& p : w.at(tier).at("points")) {
      double gib = static_cast<double>(p.at("bytes").get<uint64_t>()) / unit;
      data += std::to_string(gib) + " " + std::to_string(p.at("hit_ratio").get<double>()) + "\n";
      if (std::abs(p.at("fraction").get<double>() - 1.0) < 1e-9) {
        now = std::to_string(gib) + " " + std::to_string(p.at("hit_ratio").get<double>()) + "\n";
      }
    }
    (void)WriteFileDurably(d + "/" + tier + ".dat", data);
    (void)WriteFileDurably(d + "/" + tier + "-now.dat", now);
    std::string name = tier == std::string("ram") ? "RAM tier" : "SSD tier";
    plots += std::string(plots.empty() ? "plot " : ", ") + "'" + d + "/" + tier +
             ".dat' using 1:2 with linespoints lw 2 title '" + name + "', '" + d + "/" + tier +
             "-now.dat' using 1:2 with points pt 7 ps 2 title '" + name + " today'";
  }
  script += plots + "\n";
  // Hit ratio per tier between consecutive samples of the daemon's history.
  std::vector<std::string> names;
  for (const auto& t : j.at("cache").at("tiers")) names.push_back(t.at("name").get<std::string>());
  std::string hist;
  // The daemon's samples, and now as the last point.
  nlohmann::json h = w.at("history");
  {
    nlohmann::json tiers = nlohmann::json::array();
    for (const auto& t : j.at("cache").at("tiers")) tiers.push_back({t.at("hits"), t.at("lookups")});
    h.push_back({{"uptime", j.at("uptime_seconds")}, {"tiers", tiers}});
  }
  for (size_t i = 1; i < h.size(); ++i) {
    hist += std::to_string(h[i].at("uptime").get<double>() / 60);
    for (size_t t = 0; t < names.size() && t < h[i].at("tiers").size(); ++t) {
      double dh = h[i]["tiers"][t][0].get<double>() - h[i - 1]["tiers"][t][0].get<double>();
      double dl = h[i]["tiers"][t][1].get<double>() - h[i - 1]["tiers"][t][1].get<double>();
      hist += dl > 0 ? " " + std::to_string(dh / dl) : " ?";
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
    for (size_t t = 0; t < names.size(); ++t) {
      p += std::string(p.empty() ? "plot " : ", ") + "'" + d + "/history.dat' using 1:" +
           std::to_string(t + 2) + " with linespoints lw 2 title '" + names[t] + "'";
    }
    script += p + "\n";
  }
  script += "unset multiplot\n";
  (void)WriteFileDurably(d + "/plot.gp", script);
  int rc = std::system(("gnuplot '" + d + "/plot.gp' 2>" + d + "/gnuplot.err").c_str());
  auto err_text = ReadWholeFile(d + "/gnuplot.err", 1 << 16);
  std::string err = err_text.ok() ? *err_text : "";
  std::filesystem::remove_all(d);
  if (rc != 0) {
    PrintError("gnuplot failed (apt-get install gnuplot-nox): " + err);
    return 1;
  }
  std::printf("wrote %s\n", out.c_str());
  return 0;
}

int RunStats(const StatsArgs& args) {
  if (args.watch > 0) return Watch(args);
  if (args.what_if || !args.plot.empty()) {
    std::string path = args.mountpoint + "/" + fs::kControlDirName + "/" + fs::kStatsFileName;
    auto text = ReadWholeFile(path, 64ull << 20);
    if (!text.ok()) {
      PrintError(args.mountpoint + " is not an mmfs mount, or its daemon is not answering (" +
                 text.status().message() + ")");
      return 1;
    }
    auto j = nlohmann::json::parse(*text, nullptr, false);
    if (j.is_discarded() || !j.contains("what_if")) {
      PrintError(path + ": no what-if data (is the daemon older than this mmfs?)");
      return 1;
    }
    if (!args.plot.empty()) return Plot(args.mountpoint, j, args.plot);
    if (args.json) {
      std::printf("%s\n", JsonText(j.at("what_if"), 2).c_str());
      return 0;
    }
    PrintWhatIf(j);
    return 0;
  }
  std::string path =
      args.mountpoint + "/" + fs::kControlDirName + "/" +
      (args.prometheus ? std::string(fs::kMetricsFileName) : StatsQueryName(args.window, args.top));
  auto text = ReadWholeFile(path, 64ull << 20);
  if (!text.ok()) {
    PrintError(args.mountpoint + " is not an mmfs mount, or its daemon is not answering (" +
               text.status().message() + ")");
    return 1;
  }
  if (args.json || args.prometheus) {
    std::fwrite(text->data(), 1, text->size(), stdout);
    return 0;
  }
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded()) {
    PrintError(path + ": not valid JSON");
    return 1;
  }
  try {
    PrintHuman(args.mountpoint, j);
  } catch (const nlohmann::json::exception& e) {
    PrintError(path + ": unexpected content (" + e.what() + "); is mmfs older than the daemon?");
    return 1;
  }
  return 0;
}

}  // namespace mmfs::cli
