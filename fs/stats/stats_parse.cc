#include "fs/stats/stats_parse.h"

#include <algorithm>
#include <string>

#include "fs/stats/extents_json.h"
#include "fs/stats/field_json.h"
#include "fs/stats/fill_json.h"
#include "fs/stats/json_fields.h"
#include "fs/stats/memory_fields.h"
#include "fs/stats/readers_json.h"
#include "fs/stats/stat_fields.h"

namespace mmfs::fs {

namespace {

using nlohmann::json;

using field_table::ReadFields;
using json_fields::Part;
using json_fields::Read;

// j[key] when it is an array, else an empty one.
const json& ArrayPart(const json& j, const char* key) {
  static const json kNone = json::array();
  const json& part = Part(j, key);
  return part.is_array() ? part : kNone;
}

// Whether `key` holds a value (not absent, not null): a daemon older than a key writes none.
bool HasValue(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && !j.at(key).is_null();
}

WhatIfCurveStats CurveFromJson(const json& c) {
  WhatIfCurveStats w;
  ReadFields(c, stat_fields::kWhatIfCurveFields, &w);
  for (const json& p : ArrayPart(c, "points")) {
    cache::WhatIf::Point point;
    ReadFields(p, stat_fields::kWhatIfPointFields, &point);
    w.points.push_back(point);
  }
  return w;
}

std::optional<cache::ClusterCounters> ClusterFromJson(const json& j) {
  bool enabled = false;
  Read(j, "enabled", &enabled);
  if (!enabled) return std::nullopt;
  cache::ClusterCounters c;
  ReadFields(j, stat_fields::kClusterFields, &c);
  for (const json& s : ArrayPart(j, "servers")) {
    cache::ClusterServerHealth h;
    ReadFields(s, stat_fields::kClusterServerFields, &h);
    c.servers.push_back(std::move(h));
  }
  return c;
}

LimitSource LimitSourceFromName(const std::string& name) {
  for (LimitSource s : {LimitSource::kCgroupV1, LimitSource::kCgroupV2}) {
    if (name == LimitSourceName(s)) return s;
  }
  return LimitSource::kPhysical;
}

Pressure PressureFromName(const std::string& name) {
  for (Pressure p : {Pressure::kModerate, Pressure::kHigh, Pressure::kCritical}) {
    if (name == PressureName(p)) return p;
  }
  return Pressure::kLow;
}

MemoryStats MemoryFromJson(const json& j) {
  MemoryStats m;
  ReadFields(j, stat_fields::kMemoryFields, &m);
  if (!j.contains("budget")) return m;
  m.governed = true;
  const json& b = j.at("budget");
  MemoryBudget& plan = m.plan;
  ReadFields(b, stat_fields::kBudgetFields, &plan);
  std::string source, limit_source;
  Read(b, "source", &source);
  Read(b, "limit_source", &limit_source);
  plan.limit_source = LimitSourceFromName(limit_source);
  // Before shared-limit mode was the default under a cgroup, only --memory led to it.
  if (!HasValue(b, "memory_given")) plan.memory_given = source == "memory";
  // "explicit" is a --ram-cache without --memory; with --memory, a --ram-cache shows as the
  // size it asked for (set only when given).
  if (!HasValue(b, "explicit_ram")) {
    plan.explicit_ram = source == "explicit" || plan.requested_ram_bytes > 0;
  }
  const json& p = Part(j, "pressure");
  GovernorCounters& c = m.governor;
  std::string level;
  Read(p, "level", &level);
  c.level = PressureFromName(level);
  ReadFields(p, stat_fields::kGovernorFields, &c);
  ReadFields(p, stat_fields::kSampleFields, &c.last);
  ReadFields(p, stat_fields::kTargetFields, &c.targets);
  // The sample's parts, from the two differences the document gives.
  uint64_t working = 0, unreclaimable = 0;
  Read(p, "working_bytes", &working);
  Read(p, "unreclaimable_bytes", &unreclaimable);
  c.last.reclaimable_bytes = c.last.usage_bytes > working ? c.last.usage_bytes - working : 0;
  const uint64_t non_file = unreclaimable + c.last.kernel_reclaimable_bytes;
  const uint64_t file = c.last.usage_bytes > non_file ? c.last.usage_bytes - non_file : 0;
  c.last.active_file_bytes = file > c.last.reclaimable_bytes ? file - c.last.reclaimable_bytes : 0;
  if (p.contains("psi_some_avg10")) {
    c.last.has_psi = true;
    Read(p, "psi_some_avg10", &c.last.psi_some_avg10);
  }
  return m;
}

std::optional<origin::RemoteStatsSnapshot> RemoteFromJson(const json& r) {
  if (!r.is_object()) return std::nullopt;
  origin::RemoteStatsSnapshot s;
  ReadFields(r, stat_fields::kRemoteFields, &s);
  const json& latency = Part(r, "latency_us");
  Read(latency, "sum", &s.latency_sum_us);
  const json& buckets = Part(latency, "buckets");
  if (buckets.is_array()) {
    for (size_t i = 0; i < buckets.size() && i < s.latency.size(); ++i) {
      if (buckets[i].is_number_unsigned()) s.latency[i] = buckets[i].get<uint64_t>();
    }
  }
  return s;
}

void OriginFromJson(const json& o, OriginStats* out) {
  ReadFields(o, stat_fields::kOriginFields, out);
  if (!o.contains("by_cause")) {  // an older daemon: reads and bytes were the demand's
    Read(o, "reads", &out->demand_reads);
    Read(o, "bytes", &out->demand_bytes);
  }
  ReadFields(Part(o, "queued"), stat_fields::kMissQueueFields, &out->queued);
  ReadFields(Part(o, "rereads"), stat_fields::kRereadFields, &out->rereads);
  ReadFields(Part(o, "cost_model"), stat_fields::kCostFields, &out->cost);
  ReadFields(Part(o, "streamed"), stat_fields::kStreamedFields, &out->streamed);
  out->remote = RemoteFromJson(Part(o, "remote"));
}

void ReadaheadFromJson(const json& ra, ReadaheadStats* out) {
  ReadFields(ra, stat_fields::kReadaheadFields, out);
  for (const auto& [name, p] : Part(ra, "patterns").items()) {
    cache::PrefetchCounters c;
    ReadFields(p, stat_fields::kPatternFields, &c);
    out->patterns.emplace_back(name, c);
  }
  ReadFields(Part(ra, "hint"), stat_fields::kHintFields, &out->hint);
  ReadFields(Part(ra, "pushed"), stat_fields::kPushFields, &out->pushed);
}

}  // namespace

Result<StatsSnapshot> StatsFromJson(const json& j) {
  if (!j.is_object()) return Status::Corruption("stats: not a JSON object");
  StatsSnapshot s;
  try {
    using namespace stat_fields;
    ReadFields(j, kSnapshotFields, &s);
    ReadFields(Part(j, "dataset"), kDatasetFields, &s.dataset);
    ReadFields(Part(j, "cpu"), kCpuFields, &s.cpu);
    ReadFields(Part(j, "transport"), kTransportFields, &s.transport);
    for (const auto& [op, r] : Part(j, "requests").items()) {
      RequestStats rs;
      rs.op = op;
      ReadFields(r, kRequestFields, &rs);
      s.requests.push_back(std::move(rs));
    }
    const json& cache = Part(j, "cache");
    for (const json& t : ArrayPart(cache, "tiers")) {
      TierStats tier;
      Read(t, "name", &tier.name);
      ReadFields(t, kTierFields, &tier.counters);
      s.tiers.push_back(std::move(tier));
    }
    ReadFields(Part(cache, "read_buffer"), kReadBufferFields, &s.read_buffer);
    OriginFromJson(Part(j, "origin"), &s.origin);
    ReadaheadFromJson(Part(j, "readahead"), &s.readahead);
    s.cluster = ClusterFromJson(Part(j, "cluster"));
    const json& w = Part(j, "what_if");
    s.what_if.ram = CurveFromJson(Part(w, "ram"));
    if (w.contains("ssd")) s.what_if.ssd = CurveFromJson(w.at("ssd"));
    for (const json& p : ArrayPart(w, "history")) {
      HistoryPoint hp;
      Read(p, "uptime", &hp.uptime);
      for (const json& t : ArrayPart(p, "tiers")) {
        hp.tiers.emplace_back(t.at(0).get<uint64_t>(), t.at(1).get<uint64_t>());
      }
      s.what_if.history.push_back(std::move(hp));
    }
    ReadFields(Part(j, "warmup"), kWarmupFields, &s.warmup);
    s.memory = MemoryFromJson(Part(j, "memory"));
    for (const auto& [side, v] : Part(j, "views").items()) {
      ViewStats vs;
      vs.side = static_cast<uint32_t>(std::stoul(side));
      ReadFields(v, kViewFields, &vs);
      s.views.push_back(vs);
    }
    // The document keys them by side as text ("1024" sorts before "256"): ascending side again.
    std::sort(s.views.begin(), s.views.end(),
              [](const ViewStats& a, const ViewStats& b) { return a.side < b.side; });
  } catch (const json::exception& e) {
    return Status::Corruption(std::string("stats: unexpected content: ") + e.what());
  } catch (const std::exception& e) {  // std::stoul of a view's side
    return Status::Corruption(std::string("stats: unexpected content: ") + e.what());
  }
  // A readers section this mmfs cannot read (a daemon of another version) reads as none: the
  // rest of the document is still good.
  auto readers = ReadersFromJson(j.contains("readers") ? j.at("readers") : json());
  if (readers.ok()) s.readers = std::move(readers).value();
  try {
    s.extents = ExtentsFromJson(Part(j, "extents"));
  } catch (const json::exception&) {
    s.extents = ExtentCounters();  // another version's section: none, like the readers'
  }
  try {
    s.fill = FillFromJson(Part(j, "fill"));
  } catch (const json::exception&) {
    s.fill = FillStats();
  }
  return s;
}

}  // namespace mmfs::fs
