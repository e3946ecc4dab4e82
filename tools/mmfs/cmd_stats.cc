// mmfs stats: MNT/.mmfs/stats for people (the typed snapshot, tools/mmfs/stats_client.h), or as
// served (--json, --prometheus); --watch prints the deltas, --what-if and --plot the curves
// (what_if_view.h).

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
#include <string_view>
#include <vector>

#include "base/file_util.h"
#include "base/json_text.h"
#include "base/units.h"
#include "fs/names/fs_types.h"
#include "fs/stats/stats_format.h"
#include "tools/mmfs/commands.h"
#include "tools/mmfs/readers_view.h"
#include "tools/mmfs/stats_client.h"
#include "tools/mmfs/what_if_view.h"

namespace mmfs::cli {

namespace {

std::string Micros(uint64_t us) {
  return us == 0 ? "-" : FormatDuration(static_cast<double>(us) / 1e6);
}

// Tuning hints where the numbers say something.
void PrintHints(const fs::StatsSnapshot& s) {
  std::vector<std::string> hints;
  for (const fs::TierStats& tier : s.tiers) {
    const cache::TierCounters& c = tier.counters;
    bool full = c.bytes_budget > 0 && c.bytes_used * 10 >= c.bytes_budget * 9;
    if (full && c.lookups > 1000 && c.hits * 2 < c.lookups) {
      hints.push_back("the " + tier.name + " tier is full and misses more than it hits: the " +
                      "working set is larger than its budget (" + FormatBytes(c.bytes_budget) +
                      ")" +
                      (tier.name == "ram" ? "; raise --ram-cache or add --cache-dir on a local SSD"
                                          : "; raise --ssd-cache"));
    }
    if (c.admission_paused) {
      hints.push_back("the " + tier.name + " tier stopped admitting: " +
                      (c.problem.empty() ? "its disk is nearly full or failing (see the daemon log)"
                                         : c.problem));
    }
  }
  const uint64_t origin_reads = s.origin.demand_reads + s.origin.warmup_reads;
  if (s.tiers.size() == 1 && origin_reads > 0 &&
      s.dataset.bytes > s.tiers[0].counters.bytes_budget) {
    hints.push_back("the dataset is larger than the RAM tier and there is no SSD tier; "
                    "--cache-dir DIR keeps later epochs off the origin");
  }
  if (s.checksum_errors > 0) {
    hints.push_back("some files failed their checksum: the dataset is damaged; the daemon log "
                    "names the files");
  }
  if (hints.empty()) return;
  std::printf("\n  hints:\n");
  for (const std::string& h : hints) std::printf("  - %s\n", h.c_str());
}

// The fill: where it is, how fast the link goes, and the time left.
void PrintFill(const fs::FillStats& f) {
  if (f.mode == "off") return;
  if (f.state == "waiting") {
    std::printf("  fill      %s: waiting for a training job (a hint, or many files read)\n",
                f.mode.c_str());
    return;
  }
  const uint64_t covered = f.fetched_bytes + f.present_bytes;
  std::printf("  fill      %s, %s: %s of %s%s (%s fetched, %s held already), %s files failed, "
              "%s not stored\n",
              f.mode.c_str(), f.state.c_str(), FormatPercent(covered, f.target_bytes).c_str(),
              FormatBytes(f.target_bytes).c_str(),
              f.share ? " (a share: the dataset does not fit)" : "",
              FormatBytes(f.fetched_bytes).c_str(), FormatBytes(f.present_bytes).c_str(),
              FormatCount(f.failed_files).c_str(), FormatCount(f.not_stored_files).c_str());
  if (f.state == "filling") {
    std::printf("            %s/s, %s of %s requests in flight, %s left; started: %s\n",
                FormatBytes(static_cast<uint64_t>(f.bytes_per_second)).c_str(),
                FormatCount(f.in_flight).c_str(), FormatCount(f.in_flight_target).c_str(),
                f.seconds_left > 0 ? FormatDuration(f.seconds_left).c_str() : "unknown",
                f.trigger.c_str());
  } else {
    std::printf("            %s requests in %s; started: %s\n", FormatCount(f.requests).c_str(),
                FormatDuration(f.seconds).c_str(), f.trigger.c_str());
  }
  if (f.shared) {
    std::printf("            shared with the job's hosts: %s of %s chunks from the store by this "
                "host (%s its own), %s from the cluster (%s), %s after waiting for a host\n",
                FormatCount(f.hosts.claimed_chunks).c_str(), FormatCount(f.hosts.chunks).c_str(),
                FormatCount(f.hosts.own_chunks).c_str(), FormatCount(f.hosts.peer_chunks).c_str(),
                FormatBytes(f.hosts.peer_bytes).c_str(), FormatCount(f.hosts.waited_out_chunks).c_str());
    if (f.hosts.cluster_only_chunks > 0) {
      std::printf("            past this host's share, into the cluster alone: %s of %s chunks "
                  "(%s) by this host\n",
                  FormatCount(f.hosts.cluster_only_fetched_chunks).c_str(),
                  FormatCount(f.hosts.cluster_only_chunks).c_str(),
                  FormatBytes(f.hosts.cluster_only_fetched_bytes).c_str());
    }
    if (f.hosts.demand_waits > 0) {
      std::printf("            readers' misses another host was fetching: %s waited, %s found in "
                  "the cluster\n",
                  FormatCount(f.hosts.demand_waits).c_str(),
                  FormatCount(f.hosts.demand_waits_served).c_str());
    }
  }
}

const fs::RequestStats* FindRequest(const fs::StatsSnapshot& s, const std::string& op) {
  for (const fs::RequestStats& r : s.requests) {
    if (r.op == op) return &r;
  }
  return nullptr;
}

// The tier called `name` ("ram", "ssd"): a snapshot's tiers are named, and which of them a stack
// has (an SSD, a cluster) decides their places, so a column never reads one by its index.
const fs::TierStats* FindTier(const fs::StatsSnapshot& s, std::string_view name) {
  for (const fs::TierStats& t : s.tiers) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

void PrintTiers(const fs::StatsSnapshot& s) {
  for (const fs::TierStats& tier : s.tiers) {
    const cache::TierCounters& c = tier.counters;
    std::printf("  cache %-4s %s hit ratio (%s of %s lookups), %s of %s used, %s entries, "
                "%s evictions, %s kept out\n",
                tier.name.c_str(), FormatPercent(c.hits, c.lookups).c_str(), FormatCount(c.hits).c_str(),
                FormatCount(c.lookups).c_str(), FormatBytes(c.bytes_used).c_str(),
                FormatBytes(c.bytes_budget).c_str(), FormatCount(c.entries).c_str(),
                FormatCount(c.evictions).c_str(), FormatCount(c.rejected).c_str());
    if (c.corrupt + c.read_errors + c.write_errors > 0 || c.admission_paused) {
      std::printf("             %s damaged entries dropped, %s read errors, %s write errors%s\n",
                  FormatCount(c.corrupt).c_str(), FormatCount(c.read_errors).c_str(),
                  FormatCount(c.write_errors).c_str(),
                  c.admission_paused ? ", admission PAUSED" : "");
    }
  }
  const fs::OriginStats& o = s.origin;
  std::printf("  origin    %s reads, %s, %s errors, %s waits on a load in flight\n",
              FormatCount(o.demand_reads + o.warmup_reads).c_str(),
              FormatBytes(o.demand_bytes + o.warmup_bytes).c_str(), FormatCount(o.errors).c_str(),
              FormatCount(o.coalesced).c_str());
  std::printf("  origin by cause: asked %s, sample members %s, neighbours and padding %s, "
              "readahead %s, warm-up %s, fill %s\n",
              FormatBytes(o.asked_bytes()).c_str(), FormatBytes(o.member_bytes).c_str(),
              FormatBytes(o.neighbour_bytes).c_str(), FormatBytes(o.prefetch_bytes).c_str(),
              FormatBytes(o.warmup_bytes).c_str(), FormatBytes(o.fill_bytes).c_str());
  PrintFill(s.fill);
  if (o.queued.reads > 0) {
    std::printf("  origin waits on miss threads: %s READs (%s started late), %s waiting, %s "
                "running now\n",
                FormatCount(o.queued.reads).c_str(), FormatCount(o.queued.late).c_str(),
                FormatCount(o.queued.waiting).c_str(), FormatCount(o.queued.running).c_str());
  }
  std::printf("  origin re-reads %s files, %s (fetched again before the last fetch was used)\n",
              FormatCount(o.rereads.files).c_str(), FormatBytes(o.rereads.bytes).c_str());
  if (o.cost.known) {
    std::printf("  origin cost %s a request, %s/s; reads of %s would pay (from %s reads)\n",
                FormatDuration(o.cost.latency_seconds).c_str(),
                FormatBytes(static_cast<uint64_t>(o.cost.bandwidth_bytes_per_second)).c_str(),
                FormatBytes(o.cost.extent_bytes).c_str(), FormatCount(o.cost.reads).c_str());
  }
  if (o.remote.has_value()) {
    const origin::RemoteStatsSnapshot& r = *o.remote;
    const auto latency = [&](double p) {
      const uint64_t us = r.LatencyPercentileUs(p);
      if (us == UINT64_MAX) return std::string("> ") + FormatDuration(r.kBucketBoundsUs.back() / 1e6);
      return std::string("< ") + FormatDuration(static_cast<double>(us) / 1e6);
    };
    std::printf("  remote    %s\n", r.url.c_str());
    std::printf("            %s requests (%s retried, %s failed for good), %s received\n",
                FormatCount(r.requests).c_str(), FormatCount(r.retries).c_str(),
                FormatCount(r.errors).c_str(), FormatBytes(r.bytes).c_str());
    if (r.failed_fast > 0) {
      std::printf("            %s reads failed at once: their bytes had failed a moment ago\n",
                  FormatCount(r.failed_fast).c_str());
    }
    if (r.requests > 0) {
      std::printf("            latency p50 %s, p90 %s, p99 %s\n", latency(50).c_str(),
                  latency(90).c_str(), latency(99).c_str());
    }
  }
  // Extent reads from a slow origin: what the misses read and whether the neighbours paid.
  const fs::ExtentCounters& x = s.extents;
  if (x.mode.empty() || (x.mode == "off" && x.extents == 0)) return;
  std::printf("  extents   %s: %s extent reads, %s (last %s, %s probes)\n", x.mode.c_str(),
              FormatCount(x.extents).c_str(), FormatBytes(x.extent_bytes).c_str(),
              FormatBytes(x.last_extent_bytes).c_str(), FormatCount(x.probes).c_str());
  if (x.extents > 0) {
    std::printf("            neighbours kept %s in RAM (%s), %s on SSD (%s); used %s (%s), "
                "wasted %s (%s)\n",
                FormatCount(x.kept_files).c_str(), FormatBytes(x.kept_bytes).c_str(),
                FormatCount(x.kept_ssd_files).c_str(), FormatBytes(x.kept_ssd_bytes).c_str(),
                FormatCount(x.used_files).c_str(), FormatBytes(x.used_bytes).c_str(),
                FormatCount(x.wasted_files).c_str(), FormatBytes(x.wasted_bytes).c_str());
  }
  std::printf("            sample-sized misses: %s origin cost not known yet, %s extent no larger "
              "than a sample, %s no room, %s neighbours unused, %s two extents in flight\n",
              FormatCount(x.skipped_unknown).c_str(), FormatCount(x.skipped_small).c_str(),
              FormatCount(x.skipped_no_room).c_str(), FormatCount(x.skipped_unused).c_str(),
              FormatCount(x.skipped_busy).c_str());
}

void PrintReadahead(const fs::StatsSnapshot& s) {
  const fs::ReadaheadStats& ra = s.readahead;
  std::printf("  readahead %s, %s runs detected, buffer %s of %s\n", ra.enabled ? "on" : "off",
              FormatCount(ra.runs_detected).c_str(), FormatBytes(ra.buffer_bytes).c_str(),
              FormatBytes(ra.buffer_budget).c_str());
  for (const auto& [name, pm] : ra.patterns) {
    if (pm.issued == 0) continue;
    std::printf("    %-15s %s prefetched, %s used (%s), %s wasted, %s late\n", name.c_str(),
                FormatCount(pm.issued).c_str(), FormatCount(pm.used).c_str(),
                FormatPercent(pm.used, pm.issued).c_str(), FormatCount(pm.wasted).c_str(),
                FormatCount(pm.late).c_str());
  }
  if (ra.pushed.files > 0) {
    std::printf("    pushed         %s files (%s) into the page cache before their READ, %s "
                "refused\n",
                FormatCount(ra.pushed.files).c_str(), FormatBytes(ra.pushed.bytes).c_str(),
                FormatCount(ra.pushed.failed).c_str());
  }
  if (ra.pushed.wait_skipped > 0 || ra.pushed.wait_expired > 0) {
    std::printf("    push waits     %s opens waited for their push, %s did not (too few request "
                "threads: raise -o threads), %s gave up after 100 ms\n",
                FormatCount(ra.pushed.waited).c_str(), FormatCount(ra.pushed.wait_skipped).c_str(),
                FormatCount(ra.pushed.wait_expired).c_str());
  }
  if (ra.hint.orders > 0) {
    std::printf("    hint order     %s files, readers at %s, %s orders received, %s lines named "
                "no file\n",
                FormatCount(ra.hint.positions).c_str(), FormatCount(ra.hint.cursor).c_str(),
                FormatCount(ra.hint.orders).c_str(), FormatCount(ra.hint.unknown).c_str());
  }
  if (s.cluster.has_value()) {
    const cache::ClusterCounters& c = *s.cluster;
    std::string servers;
    for (const cache::ClusterServerHealth& srv : c.servers) {
      servers += (servers.empty() ? "" : ", ") + srv.server + (srv.up ? " up" : " DOWN");
    }
    std::printf("  cluster   %s in, %s out, %s errors, %s timeouts, %s damaged, %s dropped; %s\n",
                FormatBytes(c.bytes_in).c_str(), FormatBytes(c.bytes_out).c_str(),
                FormatCount(c.errors).c_str(), FormatCount(c.timeouts).c_str(),
                FormatCount(c.damaged).c_str(), FormatCount(c.dropped).c_str(), servers.c_str());
  }
  // One line per view served (MNT/@N): what its readers got and what came from its shards.
  for (const fs::ViewStats& v : s.views) {
    std::printf("  view @%-4s %s files, %s served; resized loads %s (%s), %s read ahead (%s)\n",
                std::to_string(v.side).c_str(), FormatCount(v.files_served).c_str(),
                FormatBytes(v.bytes_served).c_str(), FormatCount(v.resized_loads).c_str(),
                FormatBytes(v.resized_load_bytes).c_str(), FormatCount(v.readahead_loads).c_str(),
                FormatBytes(v.readahead_load_bytes).c_str());
  }
}

void PrintMemory(const fs::MemoryStats& m) {
  // An older daemon's stats have no index part.
  const std::string index =
      m.index_bytes == 0 ? ""
                         : ", index " + FormatBytes(m.index_bytes) +
                               (m.index_locked ? " locked in memory" : " not locked");
  // Mapped files' pages (the libraries' code, the index) are page cache the daemon maps, not
  // memory of its own.
  const std::string mapped =
      m.rss_file_bytes == 0
          ? ""
          : " (" + FormatBytes(m.rss_file_bytes) + " of it mapped files: code, the index)";
  const std::string heap =
      !m.heap_huge_pages ? ""
      : m.heap_prefaulting
          ? ", heap on huge pages (" + FormatBytes(m.heap_prefaulted_bytes) + " populated ahead)"
          : ", heap on huge pages (not populated ahead: the kernel lacks MADV_POPULATE_WRITE)";
  std::printf("  memory    daemon RSS %s%s, %s tier-held files dropped from the page cache (held "
              "once)%s%s\n",
              FormatBytes(m.rss_bytes).c_str(), mapped.c_str(),
              FormatCount(m.page_cache_drops).c_str(), index.c_str(), heap.c_str());
  if (!m.governed) return;
  // The budget the daemon settled on at mount, and why.
  const MemoryBudget& b = m.plan;
  std::string where = b.limit_source == LimitSource::kPhysical ? "" : " " + b.cgroup_dir;
  std::string clamped;
  if (b.clamped) {
    clamped = b.explicit_ram ? ", CLAMPED from --ram-cache " + FormatBytes(b.requested_ram_bytes)
                             : ", CLAMPED from --memory " + FormatBytes(b.requested_memory_bytes);
  }
  const std::string fill =
      b.fill_bytes > 0 ? ", fill in flight " + FormatBytes(b.fill_bytes) : std::string();
  std::printf("  budget    %s: RAM tier %s, prefetch %s, read buffer %s%s; limit %s (%s%s), %s "
              "reserved besides the RAM tier, %s used by others at mount%s\n",
              b.source(), FormatBytes(b.ram_cache_bytes).c_str(),
              FormatBytes(b.prefetch_bytes).c_str(), FormatBytes(b.read_buffer_bytes).c_str(),
              fill.c_str(),
              FormatBytes(b.limit_bytes).c_str(), LimitSourceName(b.limit_source), where.c_str(),
              FormatBytes(b.reserved_bytes).c_str(), FormatBytes(b.in_use_bytes).c_str(),
              clamped.c_str());
  if (b.shared_limit()) {
    // Shared-limit mode: how the memory given (or left by others at mount) is split.
    const uint64_t rest = b.ram_cache_bytes + b.page_cache_bytes;
    const uint64_t daemon = b.memory_bytes > rest ? b.memory_bytes - rest : 0;
    std::printf("  split     %s %s: RAM tier %s, daemon and buffers %s, page cache of the "
                "mount %s\n",
                b.memory_given ? "--memory" : "shared limit, left by others at mount",
                FormatBytes(b.memory_bytes).c_str(), FormatBytes(b.ram_cache_bytes).c_str(),
                FormatBytes(daemon).c_str(), FormatBytes(b.page_cache_bytes).c_str());
  }
  const fs::GovernorCounters& g = m.governor;
  // In shared-limit mode the governor judges what reclaim cannot take back; else the working set.
  std::string judged = "working set " + FormatBytes(g.last.working_bytes());
  if (b.shared_limit()) {
    judged = "unreclaimable " + FormatBytes(g.last.unreclaimable_bytes()) + " of " +
             FormatBytes(b.held_limit_bytes()) + ", kernel objects " +
             FormatBytes(g.last.kernel_reclaimable_bytes);
  }
  std::printf("  pressure  %s (%s), RAM tier now %s, prefetch %s, read buffer %s, "
              "%s shrinks, push %s\n",
              PressureName(g.level), judged.c_str(),
              FormatBytes(g.targets.ram_cache_bytes).c_str(),
              FormatBytes(g.targets.prefetch_bytes).c_str(),
              FormatBytes(g.targets.read_buffer_bytes).c_str(), FormatCount(g.shrinks).c_str(),
              g.targets.push ? "on" : "paused");
}

void PrintHuman(const std::string& mnt, const fs::StatsSnapshot& s) {
  std::printf("mmfs stats for %s (dataset %s, up %s)\n", mnt.c_str(), s.dataset.path.c_str(),
              FormatDuration(s.uptime_seconds).c_str());
  std::printf("  dataset   %s samples, %s files, %s in %s shard(s)\n",
              FormatCount(s.dataset.samples).c_str(), FormatCount(s.dataset.files).c_str(),
              FormatBytes(s.dataset.bytes).c_str(), FormatCount(s.dataset.shards).c_str());
  const fs::RequestStats* read = FindRequest(s, "read");
  std::printf("  served    %s in %s reads\n", FormatBytes(s.bytes_served).c_str(),
              FormatCount(read != nullptr ? read->count : 0).c_str());
  PrintTiers(s);
  PrintReadahead(s);
  std::printf("  errors    %s checksum mismatches, %s I/O errors\n",
              FormatCount(s.checksum_errors).c_str(), FormatCount(s.io_errors).c_str());
  PrintMemory(s.memory);
  std::printf("  cpu       %.2f s (%.2f user, %.2f system), %.1f ms per 1,000 requests\n",
              s.cpu.user_seconds + s.cpu.system_seconds, s.cpu.user_seconds,
              s.cpu.system_seconds, s.CpuMillisPerThousandRequests());
  if (s.transport.name == "io_uring") {
    std::printf("  transport io_uring: %s requests over the ring\n",
                FormatCount(s.transport.ring_requests).c_str());
  } else if (!s.transport.why.empty()) {
    std::printf("  transport %s\n", s.transport.why.c_str());
  }
  // Who reads the mount and whether loading is their bottleneck (a daemon without: nothing).
  if (s.readers.enabled) std::printf("\n%s", ReadersSection(s.readers).c_str());
  std::printf("\n  %-10s %12s %8s %10s %10s\n", "request", "count", "errors", "p50", "p99");
  std::vector<const fs::RequestStats*> requests;
  for (const fs::RequestStats& r : s.requests) requests.push_back(&r);
  std::sort(requests.begin(), requests.end(),
            [](const fs::RequestStats* a, const fs::RequestStats* b) { return a->op < b->op; });
  for (const fs::RequestStats* r : requests) {
    if (r->count == 0) continue;
    std::printf("  %-10s %12s %8s %10s %10s\n", r->op.c_str(), FormatCount(r->count).c_str(),
                FormatCount(r->errors).c_str(), Micros(r->p50_us).c_str(),
                Micros(r->p99_us).c_str());
  }
  std::printf("\n  (kernel-cached reads never reach mmfs and are not counted here)\n");
  PrintHints(s);
}

std::atomic<bool> g_stop{false};

// One line per interval with the deltas, in the style of `juicefs stats`.
int Watch(const StatsArgs& args) {
  signal(SIGINT, [](int) { g_stop = true; });
  // The readers' stall over each interval (at least the accounting's 1 s tick).
  const std::string name = StatsQueryName(std::max(1.0, args.watch), args.top);
  auto prev = ReadStatsSnapshot(args.mountpoint, name);
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
    auto cur = ReadStatsSnapshot(args.mountpoint, name);
    if (!cur.ok()) {
      PrintError(cur.status().message());
      return 1;
    }
    if (lines++ % 20 == 0) {
      std::printf("%8s %9s %10s %9s %8s %8s %10s %9s %9s %8s %7s\n", "time", "reads/s", "served/s",
                  "lookups/s", "ram hit", "ssd hit", "origin/s", "p99 read", "errors", "rss",
                  "stall");
    }
    const fs::StatsSnapshot& a = *prev;
    const fs::StatsSnapshot& b = *cur;
    auto rate = [&](uint64_t before, uint64_t now) {
      return static_cast<double>(now - before) / dt;
    };
    auto op_count = [](const fs::StatsSnapshot& s, const char* op) {
      const fs::RequestStats* r = FindRequest(s, op);
      return r != nullptr ? r->count : 0;
    };
    auto tier_ratio = [&](std::string_view name) -> std::string {
      const fs::TierStats* before = FindTier(a, name);
      const fs::TierStats* after = FindTier(b, name);
      if (before == nullptr || after == nullptr) return "-";
      return FormatPercent(after->counters.hits - before->counters.hits,
                           after->counters.lookups - before->counters.lookups);
    };
    auto origin_bytes = [](const fs::StatsSnapshot& s) {
      return s.origin.demand_bytes + s.origin.warmup_bytes;
    };
    std::time_t now = std::time(nullptr);
    char when[16];
    std::strftime(when, sizeof when, "%H:%M:%S", std::localtime(&now));
    const fs::RequestStats* read = FindRequest(b, "read");
    std::printf("%8s %9.0f %8s/s %9.0f %8s %8s %8s/s %9s %9s %8s %7s\n", when,
                rate(op_count(a, "read"), op_count(b, "read")),
                FormatBytes(static_cast<uint64_t>(rate(a.bytes_served, b.bytes_served))).c_str(),
                rate(op_count(a, "lookup"), op_count(b, "lookup")), tier_ratio("ram").c_str(),
                tier_ratio("ssd").c_str(),
                FormatBytes(static_cast<uint64_t>(rate(origin_bytes(a), origin_bytes(b)))).c_str(),
                Micros(read != nullptr ? read->p99_us : 0).c_str(),
                FormatCount(b.checksum_errors + b.io_errors).c_str(),
                FormatBytes(b.memory.rss_bytes).c_str(), StallColumn(b.readers).c_str());
    std::fflush(stdout);
    prev = std::move(cur);
  }
  return 0;
}

}  // namespace

int RunStats(const StatsArgs& args) {
  if (args.watch > 0) return Watch(args);
  if ((args.prometheus || args.json) && !args.what_if && args.plot.empty()) {
    // As served: the daemon renders both from its typed snapshot.
    {
      auto text = ReadStatsText(args.mountpoint, args.prometheus
                                                     ? std::string(fs::kMetricsFileName)
                                                     : StatsQueryName(args.window, args.top));
      if (!text.ok()) {
        PrintError(text.status().message());
        return 1;
      }
      std::fwrite(text->data(), 1, text->size(), stdout);
      return 0;
    }
  }
  auto s = ReadStatsSnapshot(args.mountpoint, args.what_if || !args.plot.empty()
                                                  ? std::string(fs::kStatsFileName)
                                                  : StatsQueryName(args.window, args.top));
  if (!s.ok()) {
    PrintError(s.status().message());
    return 1;
  }
  if (!args.plot.empty()) return PlotWhatIf(args.mountpoint, *s, args.plot);
  if (args.what_if) {
    if (args.json) {
      std::printf("%s\n", JsonText(fs::StatsToJson(*s).at("what_if"), 2).c_str());
      return 0;
    }
    PrintWhatIf(*s);
    return 0;
  }
  PrintHuman(args.mountpoint, *s);
  return 0;
}

}  // namespace mmfs::cli
