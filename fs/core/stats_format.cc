#include "fs/core/stats_format.h"

#include <algorithm>
#include <sstream>

#include "fs/base/json_text.h"
#include "fs/core/extents_json.h"
#include "fs/core/reader_verdict.h"
#include "fs/core/readers_json.h"

namespace mmfs::fs {

namespace {

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

class Writer {
 public:
  void Family(const std::string& name, const char* type, const char* help) {
    out_ << "# HELP " << name << ' ' << help << '\n' << "# TYPE " << name << ' ' << type << '\n';
  }
  // Values print as doubles (6 significant digits), as they did when this text was rendered
  // from the parsed JSON document.
  void Sample(const std::string& name, const std::string& labels, double value) {
    out_ << name;
    if (!labels.empty()) out_ << '{' << labels << '}';
    out_ << ' ' << value << '\n';
  }
  void Single(const std::string& name, const char* type, const char* help,
              const std::string& labels, double value) {
    Family(name, type, help);
    Sample(name, labels, value);
  }
  std::string str() const { return out_.str(); }

 private:
  std::ostringstream out_;
};

nlohmann::json CurveJson(const WhatIfCurveStats& w) {
  nlohmann::json points = nlohmann::json::array();
  for (const auto& p : w.points) {
    points.push_back({{"fraction", p.fraction}, {"bytes", p.bytes}, {"hit_ratio", p.hit_ratio}});
  }
  return {{"budget", w.budget},
          {"sampling_rate", w.sampling_rate},
          {"sampled_reads", w.sampled_reads},
          {"working_set_bytes", w.working_set_bytes},
          {"points", points}};
}

// Requests in the order of their names: the order the JSON object (sorted keys) gave.
std::vector<const RequestStats*> ByName(const std::vector<RequestStats>& requests) {
  std::vector<const RequestStats*> out;
  for (const RequestStats& r : requests) out.push_back(&r);
  std::sort(out.begin(), out.end(),
            [](const RequestStats* a, const RequestStats* b) { return a->op < b->op; });
  return out;
}

}  // namespace

MemoryStats MemoryStatsOf(uint64_t rss_bytes, const MemoryGovernor* governor) {
  MemoryStats m;
  m.rss_bytes = rss_bytes;
  if (governor == nullptr) return m;
  m.governed = true;
  m.plan = governor->plan();
  m.governor = governor->Counters();
  return m;
}

nlohmann::json MemoryJson(const MemoryStats& m) {
  nlohmann::json j = {{"rss_bytes", m.rss_bytes},
                      {"hold_once",
                       {{"dropped_files", m.page_cache_drops},
                        {"skipped", m.page_cache_drops_skipped}}}};
  if (!m.governed) return j;
  const MemoryBudget& b = m.plan;
  j["budget"] = {{"source", b.source()},
                 {"limit_bytes", b.limit_bytes},
                 {"limit_source", LimitSourceName(b.limit_source)},
                 {"cgroup", b.cgroup_dir},
                 {"reserved_bytes", b.reserved_bytes},
                 {"in_use_bytes", b.in_use_bytes},
                 {"explicit_ram", b.explicit_ram},
                 {"requested_ram_bytes", b.requested_ram_bytes},
                 {"clamped", b.clamped},
                 {"ram_cache_bytes", b.ram_cache_bytes},
                 {"prefetch_bytes", b.prefetch_bytes},
                 {"read_buffer_bytes", b.read_buffer_bytes},
                 {"memory_bytes", b.memory_bytes},
                 {"requested_memory_bytes", b.requested_memory_bytes},
                 {"page_cache_bytes", b.page_cache_bytes},
                 {"explanation", b.Explain()}};
  const GovernorCounters& c = m.governor;
  nlohmann::json pressure = {{"level", PressureName(c.level)},
                             {"samples", c.samples},
                             {"shrinks", c.shrinks},
                             {"working_bytes", c.last.working_bytes()},
                             {"unreclaimable_bytes", c.last.unreclaimable_bytes()},
                             {"usage_bytes", c.last.usage_bytes},
                             {"limit_events", c.last.limit_events},
                             {"oom_kills", c.last.oom_kills},
                             {"ram_cache_bytes", c.targets.ram_cache_bytes},
                             {"prefetch_bytes", c.targets.prefetch_bytes},
                             {"read_buffer_bytes", c.targets.read_buffer_bytes},
                             {"push", c.targets.push}};
  if (c.last.has_psi) pressure["psi_some_avg10"] = c.last.psi_some_avg10;
  j["pressure"] = pressure;
  return j;
}

nlohmann::json StatsToJson(const StatsSnapshot& s) {
  using nlohmann::json;
  json requests = json::object();
  for (const RequestStats& r : s.requests) {
    requests[r.op] = {
        {"count", r.count}, {"errors", r.errors}, {"p50_us", r.p50_us}, {"p99_us", r.p99_us}};
  }
  json tiers = json::array();
  for (const TierStats& t : s.tiers) {
    const cache::TierCounters& c = t.counters;
    tiers.push_back({{"name", t.name},
                     {"lookups", c.lookups},
                     {"hits", c.hits},
                     {"misses", c.misses},
                     {"inserts", c.inserts},
                     {"rejected", c.rejected},
                     {"evictions", c.evictions},
                     {"entries", c.entries},
                     {"bytes_used", c.bytes_used},
                     {"bytes_budget", c.bytes_budget},
                     {"corrupt", c.corrupt},
                     {"write_errors", c.write_errors},
                     {"dropped", c.dropped},
                     {"admission_paused", c.admission_paused}});
  }
  json patterns = json::object();
  for (const auto& [name, p] : s.readahead.patterns) {
    patterns[name] = {{"issued", p.issued},
                      {"used", p.used},
                      {"wasted", p.wasted},
                      {"late", p.late},
                      {"bytes_issued", p.bytes_issued}};
  }
  json cluster = {{"enabled", false}};
  if (s.cluster.has_value()) {
    const cache::ClusterCounters& c = *s.cluster;
    json servers = json::array();
    for (const auto& h : c.servers) {
      servers.push_back({{"server", h.server},
                         {"up", h.up},
                         {"requests", h.requests},
                         {"errors", h.errors},
                         {"timeouts", h.timeouts}});
    }
    cluster = {{"enabled", true},          {"hits", c.hits},         {"misses", c.misses},
               {"errors", c.errors},       {"timeouts", c.timeouts}, {"damaged", c.damaged},
               {"bytes_in", c.bytes_in},   {"bytes_out", c.bytes_out}, {"writes", c.writes},
               {"dropped", c.dropped},     {"queued_bytes", c.queued_bytes},
               {"servers", servers}};
  }
  json what_if = {{"ram", CurveJson(s.what_if.ram)}};
  if (s.what_if.ssd.has_value()) what_if["ssd"] = CurveJson(*s.what_if.ssd);
  json history = json::array();
  for (const HistoryPoint& p : s.what_if.history) {
    json t = json::array();
    for (const auto& [hits, lookups] : p.tiers) t.push_back({hits, lookups});
    history.push_back({{"uptime", p.uptime}, {"tiers", t}});
  }
  what_if["history"] = history;
  const OriginStats& o = s.origin;
  const cache::ReadBufferCounters& rb = s.read_buffer;
  const ReadaheadStats& ra = s.readahead;
  const cache::HintCounters& hc = ra.hint;
  const WarmupStats& w = s.warmup;
  json j = {
      {"mmfs_stats_version", 1},
      {"dataset",
       {{"path", s.dataset.path},
        {"files", s.dataset.files},
        {"directories", s.dataset.directories},
        {"samples", s.dataset.samples},
        {"bytes", s.dataset.bytes},
        {"shards", s.dataset.shards}}},
      {"uptime_seconds", s.uptime_seconds},
      {"requests", requests},
      {"bytes_served", s.bytes_served},
      {"cache",
       {{"tiers", tiers},
        {"read_buffer",
         {{"hits", rb.hits},
          {"inserts", rb.inserts},
          {"evictions", rb.evictions},
          {"bytes_held", rb.bytes_held},
          {"bytes_budget", rb.budget}}}}},
      {"origin",
       {{"reads", o.demand_reads + o.warmup_reads},
        {"bytes", o.demand_bytes + o.warmup_bytes},
        {"errors", o.errors},
        {"coalesced", o.coalesced},
        {"rereads",
         {{"files", o.rereads.files}, {"bytes", o.rereads.bytes}}},
        {"cost_model",
         {{"known", o.cost.known},
          {"latency_bound", o.cost.latency_bound},
          {"mean_seconds", o.cost.mean_seconds},
          {"latency_seconds", o.cost.latency_seconds},
          {"bandwidth_bytes_per_second", o.cost.bandwidth_bytes_per_second},
          {"extent_bytes", o.cost.extent_bytes},
          {"reads", o.cost.reads}}},
        {"by_cause",
         {{"demand", {{"reads", o.demand_reads}, {"bytes", o.demand_bytes}}},
          {"prefetch", {{"reads", o.prefetch_reads}, {"bytes", o.prefetch_bytes}}},
          {"warmup", {{"reads", o.warmup_reads}, {"bytes", o.warmup_bytes}}}}},
        {"streamed",
         {{"verified_files", o.streamed.verified_files},
          {"verify_bytes", o.streamed.verify_bytes},
          {"range_reads", o.streamed.range_reads},
          {"range_bytes", o.streamed.range_bytes}}}}},
      {"readahead",
       {{"enabled", ra.enabled},
        {"patterns", patterns},
        {"runs_detected", ra.runs_detected},
        {"reads", o.prefetch_reads},
        {"bytes", o.prefetch_bytes},
        {"jobs_dropped", ra.jobs_dropped},
        {"hint",
         {{"available", ra.hint_available},
          {"orders", hc.orders},
          {"positions", hc.positions},
          {"cursor", hc.cursor},
          {"issued_to", hc.issued_to},
          {"unknown_lines", hc.unknown},
          {"off_order_reads", hc.off_order_reads}}},
        {"pushed",
         {{"files", ra.pushed.files},
          {"bytes", ra.pushed.bytes},
          {"failed", ra.pushed.failed},
          {"skipped", ra.pushed.skipped}}},
        {"buffer_bytes", ra.buffer_bytes},
        {"buffer_budget", ra.buffer_budget}}},
      {"cluster", cluster},
      {"what_if", what_if},
      {"warmup",
       {{"requested", w.requested},
        {"done", w.done},
        {"bytes", w.bytes},
        {"skipped", w.skipped},
        {"rejected", w.rejected},
        {"errors", w.errors},
        {"evicted", w.evicted},
        {"last_sync", w.last_sync}}},
      {"errors", {{"checksum", s.checksum_errors}, {"io", s.io_errors}}},
      {"listing",
       {{"entries", s.listed_entries}, {"largest_request_bytes", s.largest_readdir_request}}},
      {"memory", MemoryJson(s.memory)},
  };
  // Keyed by side, as a loader names them (@256): {"256": {...}}.
  json views = json::object();
  for (const ViewStats& v : s.views) {
    views[std::to_string(v.side)] = {{"files_served", v.files_served},
                                     {"bytes_served", v.bytes_served},
                                     {"resized_loads", v.resized_loads},
                                     {"resized_load_bytes", v.resized_load_bytes},
                                     {"readahead_loads", v.readahead_loads},
                                     {"readahead_load_bytes", v.readahead_load_bytes}};
  }
  j["views"] = views;
  j["readers"] = ReadersToJson(s.readers);
  j["extents"] = ExtentsToJson(s.extents);
  return j;
}

std::string StatsJsonText(const StatsSnapshot& s) { return JsonText(StatsToJson(s), 2) + "\n"; }

std::string StatsPrometheus(const StatsSnapshot& s) {
  Writer w;
  const std::string ds = "dataset=\"" + Escape(s.dataset.path) + "\"";
  auto with = [&](const std::string& extra) { return ds + "," + extra; };
  auto d = [](uint64_t v) { return static_cast<double>(v); };
  w.Single("mmfs_uptime_seconds", "gauge", "Seconds since the daemon started serving.", ds,
           s.uptime_seconds);
  const std::vector<const RequestStats*> requests = ByName(s.requests);
  w.Family("mmfs_requests_total", "counter", "FUSE requests that reached the daemon, by operation.");
  for (const RequestStats* r : requests) {
    w.Sample("mmfs_requests_total", with("op=\"" + r->op + "\""), d(r->count));
  }
  w.Family("mmfs_request_errors_total", "counter", "FUSE requests answered with an error.");
  for (const RequestStats* r : requests) {
    w.Sample("mmfs_request_errors_total", with("op=\"" + r->op + "\""), d(r->errors));
  }
  w.Family("mmfs_request_latency_seconds", "gauge",
           "Request latency quantiles (upper edge of a power-of-two bucket).");
  for (const RequestStats* r : requests) {
    w.Sample("mmfs_request_latency_seconds", with("op=\"" + r->op + "\",quantile=\"0.5\""),
             d(r->p50_us) / 1e6);
    w.Sample("mmfs_request_latency_seconds", with("op=\"" + r->op + "\",quantile=\"0.99\""),
             d(r->p99_us) / 1e6);
  }
  w.Single("mmfs_served_bytes_total", "counter", "Bytes returned to READ requests.", ds,
           d(s.bytes_served));
  struct TierField {
    uint64_t cache::TierCounters::*field;
    const char* metric;
    const char* type;
    const char* help;
  };
  using C = cache::TierCounters;
  const TierField fields[] = {
      {&C::lookups, "mmfs_cache_lookups_total", "counter", "Cache tier lookups."},
      {&C::hits, "mmfs_cache_hits_total", "counter", "Cache tier hits."},
      {&C::misses, "mmfs_cache_misses_total", "counter", "Cache tier misses."},
      {&C::inserts, "mmfs_cache_inserts_total", "counter", "Blobs admitted into the tier."},
      {&C::rejected, "mmfs_cache_rejected_total", "counter", "Blobs the admission policy kept out."},
      {&C::evictions, "mmfs_cache_evictions_total", "counter", "Blobs evicted from the tier."},
      {&C::entries, "mmfs_cache_entries", "gauge", "Blobs held by the tier."},
      {&C::bytes_used, "mmfs_cache_used_bytes", "gauge", "Bytes held by the tier."},
      {&C::bytes_budget, "mmfs_cache_budget_bytes", "gauge", "Byte budget of the tier."},
      {&C::corrupt, "mmfs_cache_corrupt_total", "counter", "Damaged entries found (misses)."},
      {&C::write_errors, "mmfs_cache_write_errors_total", "counter", "Failed cache writes."},
  };
  for (const TierField& f : fields) {
    w.Family(f.metric, f.type, f.help);
    for (const TierStats& t : s.tiers) {
      w.Sample(f.metric, with("tier=\"" + t.name + "\""), d(t.counters.*f.field));
    }
  }
  const OriginStats& o = s.origin;
  w.Single("mmfs_origin_reads_total", "counter", "Reads of the shards for cache misses.", ds,
           d(o.demand_reads + o.warmup_reads));
  w.Single("mmfs_origin_bytes_total", "counter", "Bytes read from the shards for cache misses.",
           ds, d(o.demand_bytes + o.warmup_bytes));
  w.Single("mmfs_origin_errors_total", "counter", "Shard reads that failed.", ds, d(o.errors));
  w.Single("mmfs_origin_reread_bytes_total", "counter",
           "Bytes fetched from the shards again before their previous fetch reached a reader.", ds,
           d(o.rereads.bytes));
  if (o.cost.known) {  // the origin's cost as learnt from its reads (origin_cost_model.h)
    w.Single("mmfs_origin_latency_seconds", "gauge", "Estimated time of one origin read request.",
             ds, o.cost.latency_seconds);
    w.Single("mmfs_origin_bandwidth_bytes_per_second", "gauge",
             "Estimated origin bandwidth of one read.", ds, o.cost.bandwidth_bytes_per_second);
    w.Single("mmfs_origin_extent_bytes", "gauge",
             "The read size that pays on the origin: bandwidth x latency, clamped.", ds,
             d(o.cost.extent_bytes));
  }
  const ExtentCounters& x = s.extents;  // extent reads on misses (extent_reader.h)
  w.Single("mmfs_extent_reads_total", "counter",
           "Demand misses read as the shard extent around the sample.", ds, d(x.extents));
  w.Single("mmfs_extent_bytes_total", "counter", "Bytes of the extent reads.", ds,
           d(x.extent_bytes));
  w.Family("mmfs_extent_neighbour_bytes_total", "counter",
           "Neighbour bytes extent reads kept, by where and outcome.");
  const std::pair<const char*, uint64_t> neighbours[] = {{"kept_ram", x.kept_bytes},
                                                         {"kept_ssd", x.kept_ssd_bytes},
                                                         {"used", x.used_bytes},
                                                         {"wasted", x.wasted_bytes}};
  for (const auto& [outcome, bytes] : neighbours) {
    w.Sample("mmfs_extent_neighbour_bytes_total",
             with("outcome=\"" + std::string(outcome) + "\""), d(bytes));
  }
  w.Single("mmfs_checksum_failures_total", "counter", "Files whose bytes failed their checksum.",
           ds, d(s.checksum_errors));
  w.Single("mmfs_io_errors_total", "counter", "System call failures while reading shards.", ds,
           d(s.io_errors));
  w.Single("mmfs_listed_entries_total", "counter", "Directory entries in READDIR replies.", ds,
           d(s.listed_entries));
  w.Single("mmfs_resident_memory_bytes", "gauge", "Resident set size of the daemon.", ds,
           d(s.memory.rss_bytes));
  if (s.memory.governed) {
    const MemoryBudget& b = s.memory.plan;
    w.Single("mmfs_memory_limit_bytes", "gauge",
             "The memory limit the daemon plans within (physical or its cgroup's).",
             with("source=\"" + std::string(LimitSourceName(b.limit_source)) + "\""),
             d(b.limit_bytes));
    w.Single("mmfs_memory_budget_clamped", "gauge", "1 if --ram-cache did not fit and was lowered.",
             ds, b.clamped ? 1 : 0);
    w.Family("mmfs_memory_budget_bytes", "gauge", "Budgets planned at mount, by part.");
    const std::pair<const char*, uint64_t> planned[] = {{"ram_cache", b.ram_cache_bytes},
                                                        {"prefetch", b.prefetch_bytes},
                                                        {"read_buffer", b.read_buffer_bytes},
                                                        {"reserved", b.reserved_bytes}};
    for (const auto& [part, bytes] : planned) {
      w.Sample("mmfs_memory_budget_bytes", with("part=\"" + std::string(part) + "\""), d(bytes));
    }
    const GovernorCounters& g = s.memory.governor;
    w.Single("mmfs_memory_working_bytes", "gauge",
             "Working set under the limit (usage less inactive file pages).", ds,
             d(g.last.working_bytes()));
    w.Single("mmfs_memory_shrinks_total", "counter",
             "Times memory pressure made the daemon release cache or buffer memory.", ds,
             d(g.shrinks));
    w.Family("mmfs_memory_target_bytes", "gauge", "Budgets in force now, by part.");
    const std::pair<const char*, uint64_t> targets[] = {
        {"ram_cache", g.targets.ram_cache_bytes},
        {"prefetch", g.targets.prefetch_bytes},
        {"read_buffer", g.targets.read_buffer_bytes}};
    for (const auto& [part, bytes] : targets) {
      w.Sample("mmfs_memory_target_bytes", with("part=\"" + std::string(part) + "\""), d(bytes));
    }
  }
  w.Family("mmfs_prefetch_total", "counter", "Files prefetched, by pattern and outcome.");
  std::vector<std::pair<std::string, cache::PrefetchCounters>> patterns = s.readahead.patterns;
  std::sort(patterns.begin(), patterns.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [pattern, p] : patterns) {
    const std::pair<const char*, uint64_t> outcomes[] = {
        {"issued", p.issued}, {"used", p.used}, {"wasted", p.wasted}, {"late", p.late}};
    for (const auto& [outcome, n] : outcomes) {
      w.Sample("mmfs_prefetch_total",
               with("pattern=\"" + pattern + "\",outcome=\"" + outcome + "\""), d(n));
    }
  }
  w.Single("mmfs_pushed_files_total", "counter",
           "Prefetched files stored in the kernel's page cache before their READ.", ds,
           d(s.readahead.pushed.files));
  w.Single("mmfs_pushed_bytes_total", "counter", "Bytes of the pushed files.", ds,
           d(s.readahead.pushed.bytes));
  if (!s.views.empty()) {
    struct ViewField {
      uint64_t ViewStats::*field;
      const char* metric;
      const char* help;
    };
    const ViewField view_fields[] = {
        {&ViewStats::files_served, "mmfs_view_files_served_total",
         "READs at offset 0 of files under @N, by view."},
        {&ViewStats::bytes_served, "mmfs_view_served_bytes_total",
         "Bytes returned to READs of files under @N, by view."},
        {&ViewStats::resized_loads, "mmfs_view_resized_loads_total",
         "Resized files a READ loaded from the view's shards, by view."},
        {&ViewStats::resized_load_bytes, "mmfs_view_resized_load_bytes_total",
         "Bytes of the resized files a READ loaded, by view."},
        {&ViewStats::readahead_loads, "mmfs_view_readahead_loads_total",
         "Resized files loaded ahead of their READ (readahead, hint), by view."},
        {&ViewStats::readahead_load_bytes, "mmfs_view_readahead_load_bytes_total",
         "Bytes of the resized files loaded ahead, by view."},
    };
    for (const ViewField& f : view_fields) {
      w.Family(f.metric, "counter", f.help);
      for (const ViewStats& v : s.views) {
        std::string label = "view=\"";
        label += std::to_string(v.side);
        label += '"';
        w.Sample(f.metric, with(label), d(v.*f.field));
      }
    }
  }
  if (s.readers.enabled) {
    const ReadersStats& r = s.readers;
    // Labelled by command name, not pid: a bounded set (ReaderAccountingOptions::max_commands).
    auto comm = [&](const ReaderCommandTotals& c) {
      std::string label = "comm=\"";
      label += Escape(c.comm);
      label += '"';
      return with(label);
    };
    w.Family("mmfs_reader_stall_seconds_total", "counter",
             "Time reader threads spent in mmfs requests (overlaps of a thread counted once).");
    for (const auto& c : r.by_command) {
      w.Sample("mmfs_reader_stall_seconds_total", comm(c), c.stall_seconds);
    }
    w.Family("mmfs_reader_cpu_seconds_total", "counter",
             "CPU time (user + system) of the processes that read the mount, since first seen.");
    for (const auto& c : r.by_command) {
      w.Sample("mmfs_reader_cpu_seconds_total", comm(c), c.cpu_seconds);
    }
    w.Family("mmfs_reader_served_bytes_total", "counter", "READ bytes served to each reader.");
    for (const auto& c : r.by_command) {
      w.Sample("mmfs_reader_served_bytes_total", comm(c), d(c.served_bytes));
    }
    w.Single("mmfs_readers_stall_share", "gauge",
             "Share of the readers' observed time spent waiting on mmfs, over the stats window.",
             ds, r.total.stall_share());
    w.Single("mmfs_readers_cpu_share", "gauge",
             "Share of the readers' observed time spent on a CPU, over the stats window.", ds,
             r.total.cpu_share());
    w.Family("mmfs_readers_verdict", "gauge", "1 for the readers' verdict over the window.");
    for (ReaderVerdict v : {ReaderVerdict::kIoBound, ReaderVerdict::kComputeBound,
                            ReaderVerdict::kIdle, ReaderVerdict::kNone}) {
      std::string label = "verdict=\"";
      label += ReaderVerdictName(v);
      label += '"';
      w.Sample("mmfs_readers_verdict", with(label), r.verdict == v ? 1 : 0);
    }
  }
  if (s.cluster.has_value()) {
    const cache::ClusterCounters& c = *s.cluster;
    w.Single("mmfs_cluster_bytes_in_total", "counter", "Bytes read from the cluster tier.", ds,
             d(c.bytes_in));
    w.Single("mmfs_cluster_bytes_out_total", "counter", "Bytes written to the cluster tier.", ds,
             d(c.bytes_out));
    w.Single("mmfs_cluster_errors_total", "counter",
             "Cluster tier requests that failed (served by the origin instead).", ds, d(c.errors));
    w.Single("mmfs_cluster_timeouts_total", "counter", "Cluster tier requests that timed out.", ds,
             d(c.timeouts));
    w.Single("mmfs_cluster_damaged_total", "counter", "Cluster values that failed their checksum.",
             ds, d(c.damaged));
    w.Single("mmfs_cluster_dropped_total", "counter", "Cluster fills dropped (queue full).", ds,
             d(c.dropped));
    std::vector<cache::ClusterServerHealth> servers = c.servers;
    w.Family("mmfs_cluster_server_up", "gauge", "1 if the server's last request succeeded.");
    for (const auto& srv : servers) {
      w.Sample("mmfs_cluster_server_up", with("server=\"" + srv.server + "\""), srv.up ? 1 : 0);
    }
    w.Family("mmfs_cluster_server_errors_total", "counter", "Failed requests, by server.");
    for (const auto& srv : servers) {
      w.Sample("mmfs_cluster_server_errors_total", with("server=\"" + srv.server + "\""),
               d(srv.errors));
    }
  }
  return w.str();
}

}  // namespace mmfs::fs
