// mmfs stats: reads MNT/.mmfs/stats (JSON) and shows it for people, or passes it through (--json).

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "fs/base/file_util.h"
#include "fs/base/units.h"
#include "fs/core/filesystem.h"
#include "tools/mmfs/commands.h"

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
    std::printf("  cache %-4s %s hit ratio (%s of %s lookups), %s of %s used, %s entries, %s evictions\n",
                tier.at("name").get<std::string>().c_str(), Percent(hits, lookups).c_str(),
                FormatCount(hits).c_str(), FormatCount(lookups).c_str(),
                FormatBytes(tier.at("bytes_used").get<uint64_t>()).c_str(),
                FormatBytes(tier.at("bytes_budget").get<uint64_t>()).c_str(),
                FormatCount(tier.at("entries").get<uint64_t>()).c_str(),
                FormatCount(tier.at("evictions").get<uint64_t>()).c_str());
  }
  const auto& origin = j.at("origin");
  std::printf("  origin    %s reads, %s, %s errors, %s waits on a load in flight\n",
              FormatCount(origin.at("reads").get<uint64_t>()).c_str(),
              FormatBytes(origin.at("bytes").get<uint64_t>()).c_str(),
              FormatCount(origin.at("errors").get<uint64_t>()).c_str(),
              FormatCount(origin.at("coalesced").get<uint64_t>()).c_str());
  const auto& errors = j.at("errors");
  std::printf("  errors    %s checksum mismatches, %s I/O errors\n",
              FormatCount(errors.at("checksum").get<uint64_t>()).c_str(),
              FormatCount(errors.at("io").get<uint64_t>()).c_str());
  std::printf("  memory    daemon RSS %s\n",
              FormatBytes(j.at("memory").at("rss_bytes").get<uint64_t>()).c_str());
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
}

}  // namespace

int RunStats(const StatsArgs& args) {
  std::string path = args.mountpoint + "/" + fs::kControlDirName + "/" + fs::kStatsFileName;
  auto text = ReadWholeFile(path, 64ull << 20);
  if (!text.ok()) {
    PrintError(args.mountpoint + " is not an mmfs mount, or its daemon is not answering (" +
               text.status().message() + ")");
    return 1;
  }
  if (args.json) {
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
