#include "fs/stats/stats_format.h"

#include "base/json_text.h"
#include "fs/stats/extents_json.h"
#include "fs/stats/field_json.h"
#include "fs/stats/fill_json.h"
#include "fs/stats/memory_fields.h"
#include "fs/stats/readers_json.h"
#include "fs/stats/stat_fields.h"

namespace mmfs::fs {

namespace {

using field_table::FieldsJson;
using field_table::WriteFields;

nlohmann::json CurveJson(const WhatIfCurveStats& w) {
  nlohmann::json points = nlohmann::json::array();
  for (const auto& p : w.points) points.push_back(FieldsJson(p, stat_fields::kWhatIfPointFields));
  nlohmann::json j = FieldsJson(w, stat_fields::kWhatIfCurveFields);
  j["points"] = points;
  return j;
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
  nlohmann::json j = FieldsJson(*r, stat_fields::kRemoteFields);
  j["latency_us"] = {{"p50", percentile(50)},
                     {"p90", percentile(90)},
                     {"p99", percentile(99)},
                     {"sum", r->latency_sum_us},
                     {"bucket_bounds", r->kBucketBoundsUs},
                     {"buckets", r->latency}};
  return j;
}

nlohmann::json MemoryJson(const MemoryStats& m) {
  nlohmann::json j = FieldsJson(m, stat_fields::kMemoryFields);
  if (!m.governed) return j;
  const MemoryBudget& b = m.plan;
  nlohmann::json budget = FieldsJson(b, stat_fields::kBudgetFields);
  budget["source"] = b.source();
  budget["limit_source"] = LimitSourceName(b.limit_source);
  budget["explanation"] = b.Explain();
  j["budget"] = budget;
  const GovernorCounters& c = m.governor;
  nlohmann::json pressure = FieldsJson(c, stat_fields::kGovernorFields);
  pressure["level"] = PressureName(c.level);
  WriteFields(c.last, stat_fields::kSampleFields, pressure);
  WriteFields(c.targets, stat_fields::kTargetFields, pressure);
  if (c.last.has_psi) pressure["psi_some_avg10"] = c.last.psi_some_avg10;
  j["pressure"] = pressure;
  return j;
}

nlohmann::json MemoryStatsJson(uint64_t rss_bytes, const MemoryGovernor* governor) {
  return MemoryJson(MemoryStatsOf(rss_bytes, governor));
}

nlohmann::json StatsToJson(const StatsSnapshot& s) {
  using nlohmann::json;
  using namespace stat_fields;
  json requests = json::object();
  for (const RequestStats& r : s.requests) requests[r.op] = FieldsJson(r, kRequestFields);
  json tiers = json::array();
  for (const TierStats& t : s.tiers) {
    json tier = FieldsJson(t.counters, kTierFields);
    tier["name"] = t.name;
    tiers.push_back(std::move(tier));
  }
  json patterns = json::object();
  for (const auto& [name, p] : s.readahead.patterns) patterns[name] = FieldsJson(p, kPatternFields);
  json cluster = {{"enabled", false}};
  if (s.cluster.has_value()) {
    const cache::ClusterCounters& c = *s.cluster;
    json servers = json::array();
    for (const auto& h : c.servers) servers.push_back(FieldsJson(h, kClusterServerFields));
    cluster = FieldsJson(c, kClusterFields);
    cluster["enabled"] = true;
    cluster["servers"] = servers;
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
  json origin = FieldsJson(o, kOriginFields);
  origin["queued"] = FieldsJson(o.queued, kMissQueueFields);
  origin["rereads"] = FieldsJson(o.rereads, kRereadFields);
  origin["cost_model"] = FieldsJson(o.cost, kCostFields);
  origin["streamed"] = FieldsJson(o.streamed, kStreamedFields);
  origin["remote"] = RemoteJson(o.remote);
  const ReadaheadStats& ra = s.readahead;
  json readahead = FieldsJson(ra, kReadaheadFields);
  readahead["patterns"] = patterns;
  // The prefetch reads again, where a reader of the readahead section looks for them.
  readahead["reads"] = o.prefetch_reads;
  readahead["bytes"] = o.prefetch_bytes;
  WriteFields(ra.hint, kHintFields, readahead["hint"]);
  readahead["pushed"] = FieldsJson(ra.pushed, kPushFields);
  json cpu = FieldsJson(s.cpu, kCpuFields);
  cpu["ms_per_1000_requests"] = s.CpuMillisPerThousandRequests();
  json j = FieldsJson(s, kSnapshotFields);
  j["mmfs_stats_version"] = 1;
  j["dataset"] = FieldsJson(s.dataset, kDatasetFields);
  j["cpu"] = cpu;
  j["transport"] = FieldsJson(s.transport, kTransportFields);
  j["requests"] = requests;
  j["cache"] = {{"tiers", tiers}, {"read_buffer", FieldsJson(s.read_buffer, kReadBufferFields)}};
  j["origin"] = origin;
  j["readahead"] = readahead;
  j["cluster"] = cluster;
  j["what_if"] = what_if;
  j["warmup"] = FieldsJson(s.warmup, kWarmupFields);
  j["memory"] = MemoryJson(s.memory);
  // Keyed by side, as a loader names them (@256): {"256": {...}}.
  json views = json::object();
  for (const ViewStats& v : s.views) views[std::to_string(v.side)] = FieldsJson(v, kViewFields);
  j["views"] = views;
  j["readers"] = ReadersToJson(s.readers);
  j["extents"] = ExtentsToJson(s.extents);
  j["fill"] = FillToJson(s.fill);
  return j;
}

std::string StatsJsonText(const StatsSnapshot& s) { return JsonText(StatsToJson(s), 2) + "\n"; }

}  // namespace mmfs::fs
