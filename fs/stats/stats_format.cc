#include "fs/stats/stats_format.h"

#include "base/json_text.h"
#include "fs/stats/extents_json.h"
#include "fs/stats/fill_json.h"
#include "fs/stats/readers_json.h"

namespace mmfs::fs {

namespace {

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

// A remote origin's requests; null for local files. The percentiles are the upper bounds of
// the histogram's buckets (null past the last bound).
nlohmann::json RemoteJson(const std::optional<origin::RemoteStatsSnapshot>& r) {
  if (!r.has_value()) return nullptr;
  const auto percentile = [&](double p) -> nlohmann::json {
    const uint64_t us = r->LatencyPercentileUs(p);
    if (us == UINT64_MAX) return nullptr;
    return us;
  };
  return {{"url", r->url},
          {"requests", r->requests},
          {"retries", r->retries},
          {"bytes", r->bytes},
          {"errors", r->errors},
          {"failed_fast", r->failed_fast},
          {"latency_us",
           {{"p50", percentile(50)},
            {"p90", percentile(90)},
            {"p99", percentile(99)},
            {"sum", r->latency_sum_us},
            {"bucket_bounds", r->kBucketBoundsUs},
            {"buckets", r->latency}}}};
}

nlohmann::json MemoryJson(const MemoryStats& m) {
  nlohmann::json j = {{"rss_bytes", m.rss_bytes},
                      {"rss_file_bytes", m.rss_file_bytes},
                      {"hold_once",
                       {{"dropped_files", m.page_cache_drops},
                        {"skipped", m.page_cache_drops_skipped}}},
                      {"index", {{"bytes", m.index_bytes}, {"locked", m.index_locked}}},
                      {"heap",
                       {{"huge_pages", m.heap_huge_pages},
                        {"prefaulting", m.heap_prefaulting},
                        {"prefaulted_bytes", m.heap_prefaulted_bytes}}}};
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
                 {"memory_given", b.memory_given},
                 {"index_counted_as_read", b.index_counted_as_read},
                 {"page_cache_bytes", b.page_cache_bytes},
                 {"explanation", b.Explain()}};
  const GovernorCounters& c = m.governor;
  nlohmann::json pressure = {{"level", PressureName(c.level)},
                             {"samples", c.samples},
                             {"shrinks", c.shrinks},
                             {"working_bytes", c.last.working_bytes()},
                             {"unreclaimable_bytes", c.last.unreclaimable_bytes()},
                             {"kernel_reclaimable_bytes", c.last.kernel_reclaimable_bytes},
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

nlohmann::json MemoryStatsJson(uint64_t rss_bytes, const MemoryGovernor* governor) {
  return MemoryJson(MemoryStatsOf(rss_bytes, governor));
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
                     {"admission_paused", c.admission_paused},
                     {"problem", c.problem}});
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
      {"cpu",
       {{"user_seconds", s.cpu.user_seconds},
        {"system_seconds", s.cpu.system_seconds},
        {"ms_per_1000_requests", s.CpuMillisPerThousandRequests()}}},
      {"transport",
       {{"name", s.transport.name},
        {"why", s.transport.why},
        {"ring_requests", s.transport.ring_requests}}},
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
        {"queued",
         {{"reads", o.queued.reads},
          {"late", o.queued.late},
          {"waiting", o.queued.waiting},
          {"running", o.queued.running},
          {"threads", o.queued.threads}}},
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
         {{"demand",
           {{"reads", o.demand_reads},
            {"bytes", o.demand_bytes},
            {"asked_bytes", o.asked_bytes()},
            {"member_bytes", o.member_bytes},
            {"neighbour_bytes", o.neighbour_bytes}}},
          {"prefetch", {{"reads", o.prefetch_reads}, {"bytes", o.prefetch_bytes}}},
          {"warmup", {{"reads", o.warmup_reads}, {"bytes", o.warmup_bytes}}},
          {"fill", {{"reads", o.fill_reads}, {"bytes", o.fill_bytes}}}}},
        {"remote", RemoteJson(o.remote)},
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
          {"skipped", ra.pushed.skipped},
          {"queue_full", ra.pushed.queue_full},
          {"waited", ra.pushed.waited},
          {"wait_skipped", ra.pushed.wait_skipped},
          {"wait_expired", ra.pushed.wait_expired}}},
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
        {"not_stored", w.not_stored},
        {"problem", w.problem},
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
  j["fill"] = FillToJson(s.fill);
  return j;
}

std::string StatsJsonText(const StatsSnapshot& s) { return JsonText(StatsToJson(s), 2) + "\n"; }

}  // namespace mmfs::fs
