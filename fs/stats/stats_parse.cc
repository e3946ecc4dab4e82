#include "fs/stats/stats_parse.h"

#include <algorithm>
#include <string>

#include "fs/stats/extents_json.h"
#include "fs/stats/fill_json.h"
#include "fs/stats/json_fields.h"
#include "fs/stats/readers_json.h"

namespace mmfs::fs {

namespace {

using nlohmann::json;

using json_fields::Part;
using json_fields::Read;

cache::TierCounters TierFromJson(const json& t) {
  cache::TierCounters c;
  Read(t, "lookups", &c.lookups);
  Read(t, "hits", &c.hits);
  Read(t, "misses", &c.misses);
  Read(t, "inserts", &c.inserts);
  Read(t, "rejected", &c.rejected);
  Read(t, "evictions", &c.evictions);
  Read(t, "entries", &c.entries);
  Read(t, "bytes_used", &c.bytes_used);
  Read(t, "bytes_budget", &c.bytes_budget);
  Read(t, "corrupt", &c.corrupt);
  Read(t, "write_errors", &c.write_errors);
  Read(t, "dropped", &c.dropped);
  Read(t, "admission_paused", &c.admission_paused);
  Read(t, "problem", &c.problem);
  return c;
}

WhatIfCurveStats CurveFromJson(const json& c) {
  WhatIfCurveStats w;
  Read(c, "budget", &w.budget);
  Read(c, "sampling_rate", &w.sampling_rate);
  Read(c, "sampled_reads", &w.sampled_reads);
  Read(c, "working_set_bytes", &w.working_set_bytes);
  for (const json& p : Part(c, "points").is_array() ? Part(c, "points") : json::array()) {
    cache::WhatIf::Point point;
    Read(p, "fraction", &point.fraction);
    Read(p, "bytes", &point.bytes);
    Read(p, "hit_ratio", &point.hit_ratio);
    w.points.push_back(point);
  }
  return w;
}

std::optional<cache::ClusterCounters> ClusterFromJson(const json& j) {
  bool enabled = false;
  Read(j, "enabled", &enabled);
  if (!enabled) return std::nullopt;
  cache::ClusterCounters c;
  Read(j, "hits", &c.hits);
  Read(j, "misses", &c.misses);
  Read(j, "errors", &c.errors);
  Read(j, "timeouts", &c.timeouts);
  Read(j, "damaged", &c.damaged);
  Read(j, "bytes_in", &c.bytes_in);
  Read(j, "bytes_out", &c.bytes_out);
  Read(j, "writes", &c.writes);
  Read(j, "dropped", &c.dropped);
  Read(j, "queued_bytes", &c.queued_bytes);
  for (const json& s : Part(j, "servers").is_array() ? Part(j, "servers") : json::array()) {
    cache::ClusterServerHealth h;
    Read(s, "server", &h.server);
    Read(s, "up", &h.up);
    Read(s, "requests", &h.requests);
    Read(s, "errors", &h.errors);
    Read(s, "timeouts", &h.timeouts);
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
  Read(j, "rss_bytes", &m.rss_bytes);
  Read(j, "rss_file_bytes", &m.rss_file_bytes);
  Read(Part(j, "hold_once"), "dropped_files", &m.page_cache_drops);
  Read(Part(j, "hold_once"), "skipped", &m.page_cache_drops_skipped);
  Read(Part(j, "index"), "bytes", &m.index_bytes);
  Read(Part(j, "index"), "locked", &m.index_locked);
  Read(Part(j, "heap"), "huge_pages", &m.heap_huge_pages);
  Read(Part(j, "heap"), "prefaulting", &m.heap_prefaulting);
  Read(Part(j, "heap"), "prefaulted_bytes", &m.heap_prefaulted_bytes);
  if (!j.contains("budget")) return m;
  m.governed = true;
  const json& b = j.at("budget");
  MemoryBudget& plan = m.plan;
  std::string source, limit_source;
  Read(b, "source", &source);
  Read(b, "limit_source", &limit_source);
  plan.limit_source = LimitSourceFromName(limit_source);
  Read(b, "limit_bytes", &plan.limit_bytes);
  Read(b, "cgroup", &plan.cgroup_dir);
  Read(b, "reserved_bytes", &plan.reserved_bytes);
  Read(b, "in_use_bytes", &plan.in_use_bytes);
  Read(b, "requested_ram_bytes", &plan.requested_ram_bytes);
  Read(b, "clamped", &plan.clamped);
  Read(b, "ram_cache_bytes", &plan.ram_cache_bytes);
  Read(b, "prefetch_bytes", &plan.prefetch_bytes);
  Read(b, "read_buffer_bytes", &plan.read_buffer_bytes);
  Read(b, "memory_bytes", &plan.memory_bytes);
  Read(b, "requested_memory_bytes", &plan.requested_memory_bytes);
  // Before shared-limit mode was the default under a cgroup, only --memory led to it.
  plan.memory_given = source == "memory";
  Read(b, "memory_given", &plan.memory_given);
  Read(b, "page_cache_bytes", &plan.page_cache_bytes);
  Read(b, "index_counted_as_read", &plan.index_counted_as_read);
  // "explicit" is a --ram-cache without --memory; with --memory, a --ram-cache shows as the
  // size it asked for (set only when given).
  plan.explicit_ram = source == "explicit" || plan.requested_ram_bytes > 0;
  Read(b, "explicit_ram", &plan.explicit_ram);
  const json& p = Part(j, "pressure");
  GovernorCounters& c = m.governor;
  std::string level;
  Read(p, "level", &level);
  c.level = PressureFromName(level);
  Read(p, "samples", &c.samples);
  Read(p, "shrinks", &c.shrinks);
  // The sample's parts, from the two differences the document gives.
  uint64_t working = 0, unreclaimable = 0;
  Read(p, "usage_bytes", &c.last.usage_bytes);
  Read(p, "working_bytes", &working);
  Read(p, "unreclaimable_bytes", &unreclaimable);
  Read(p, "kernel_reclaimable_bytes", &c.last.kernel_reclaimable_bytes);
  c.last.reclaimable_bytes = c.last.usage_bytes > working ? c.last.usage_bytes - working : 0;
  const uint64_t non_file = unreclaimable + c.last.kernel_reclaimable_bytes;
  const uint64_t file = c.last.usage_bytes > non_file ? c.last.usage_bytes - non_file : 0;
  c.last.active_file_bytes = file > c.last.reclaimable_bytes ? file - c.last.reclaimable_bytes : 0;
  Read(p, "limit_events", &c.last.limit_events);
  Read(p, "oom_kills", &c.last.oom_kills);
  if (p.contains("psi_some_avg10")) {
    c.last.has_psi = true;
    Read(p, "psi_some_avg10", &c.last.psi_some_avg10);
  }
  Read(p, "ram_cache_bytes", &c.targets.ram_cache_bytes);
  Read(p, "prefetch_bytes", &c.targets.prefetch_bytes);
  Read(p, "read_buffer_bytes", &c.targets.read_buffer_bytes);
  Read(p, "push", &c.targets.push);
  return m;
}

std::optional<origin::RemoteStatsSnapshot> RemoteFromJson(const json& r) {
  if (!r.is_object()) return std::nullopt;
  origin::RemoteStatsSnapshot s;
  Read(r, "url", &s.url);
  Read(r, "requests", &s.requests);
  Read(r, "retries", &s.retries);
  Read(r, "bytes", &s.bytes);
  Read(r, "errors", &s.errors);
  Read(r, "failed_fast", &s.failed_fast);
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
  out->remote = RemoteFromJson(Part(o, "remote"));
  Read(o, "errors", &out->errors);
  Read(o, "coalesced", &out->coalesced);
  const json& queued = Part(o, "queued");
  Read(queued, "reads", &out->queued.reads);
  Read(queued, "late", &out->queued.late);
  Read(queued, "waiting", &out->queued.waiting);
  Read(queued, "running", &out->queued.running);
  Read(queued, "threads", &out->queued.threads);
  Read(Part(o, "rereads"), "files", &out->rereads.files);
  Read(Part(o, "rereads"), "bytes", &out->rereads.bytes);
  const json& cost = Part(o, "cost_model");
  Read(cost, "known", &out->cost.known);
  Read(cost, "latency_bound", &out->cost.latency_bound);
  Read(cost, "mean_seconds", &out->cost.mean_seconds);
  Read(cost, "latency_seconds", &out->cost.latency_seconds);
  Read(cost, "bandwidth_bytes_per_second", &out->cost.bandwidth_bytes_per_second);
  Read(cost, "extent_bytes", &out->cost.extent_bytes);
  Read(cost, "reads", &out->cost.reads);
  const json& by = Part(o, "by_cause");
  Read(Part(by, "demand"), "reads", &out->demand_reads);
  Read(Part(by, "demand"), "bytes", &out->demand_bytes);
  Read(Part(by, "demand"), "member_bytes", &out->member_bytes);
  Read(Part(by, "demand"), "neighbour_bytes", &out->neighbour_bytes);
  Read(Part(by, "prefetch"), "reads", &out->prefetch_reads);
  Read(Part(by, "prefetch"), "bytes", &out->prefetch_bytes);
  Read(Part(by, "warmup"), "reads", &out->warmup_reads);
  Read(Part(by, "warmup"), "bytes", &out->warmup_bytes);
  Read(Part(by, "fill"), "reads", &out->fill_reads);
  Read(Part(by, "fill"), "bytes", &out->fill_bytes);
  if (!o.contains("by_cause")) {  // an older daemon: reads and bytes were the demand's
    Read(o, "reads", &out->demand_reads);
    Read(o, "bytes", &out->demand_bytes);
  }
  const json& st = Part(o, "streamed");
  Read(st, "verified_files", &out->streamed.verified_files);
  Read(st, "verify_bytes", &out->streamed.verify_bytes);
  Read(st, "range_reads", &out->streamed.range_reads);
  Read(st, "range_bytes", &out->streamed.range_bytes);
}

void ReadaheadFromJson(const json& ra, ReadaheadStats* out) {
  Read(ra, "enabled", &out->enabled);
  for (const auto& [name, p] : Part(ra, "patterns").items()) {
    cache::PrefetchCounters c;
    Read(p, "issued", &c.issued);
    Read(p, "used", &c.used);
    Read(p, "wasted", &c.wasted);
    Read(p, "late", &c.late);
    Read(p, "bytes_issued", &c.bytes_issued);
    out->patterns.emplace_back(name, c);
  }
  Read(ra, "runs_detected", &out->runs_detected);
  Read(ra, "jobs_dropped", &out->jobs_dropped);
  const json& h = Part(ra, "hint");
  Read(h, "available", &out->hint_available);
  Read(h, "orders", &out->hint.orders);
  Read(h, "positions", &out->hint.positions);
  Read(h, "cursor", &out->hint.cursor);
  Read(h, "issued_to", &out->hint.issued_to);
  Read(h, "unknown_lines", &out->hint.unknown);
  Read(h, "off_order_reads", &out->hint.off_order_reads);
  const json& p = Part(ra, "pushed");
  Read(p, "files", &out->pushed.files);
  Read(p, "bytes", &out->pushed.bytes);
  Read(p, "failed", &out->pushed.failed);
  Read(p, "skipped", &out->pushed.skipped);
  Read(p, "queue_full", &out->pushed.queue_full);
  Read(p, "waited", &out->pushed.waited);
  Read(p, "wait_skipped", &out->pushed.wait_skipped);
  Read(p, "wait_expired", &out->pushed.wait_expired);
  Read(ra, "buffer_bytes", &out->buffer_bytes);
  Read(ra, "buffer_budget", &out->buffer_budget);
}

}  // namespace

Result<StatsSnapshot> StatsFromJson(const json& j) {
  if (!j.is_object()) return Status::Corruption("stats: not a JSON object");
  StatsSnapshot s;
  try {
    const json& ds = Part(j, "dataset");
    Read(ds, "path", &s.dataset.path);
    Read(ds, "files", &s.dataset.files);
    Read(ds, "directories", &s.dataset.directories);
    Read(ds, "samples", &s.dataset.samples);
    Read(ds, "bytes", &s.dataset.bytes);
    Read(ds, "shards", &s.dataset.shards);
    Read(j, "uptime_seconds", &s.uptime_seconds);
    Read(Part(j, "cpu"), "user_seconds", &s.cpu.user_seconds);
    Read(Part(j, "cpu"), "system_seconds", &s.cpu.system_seconds);
    const json& transport = Part(j, "transport");
    Read(transport, "name", &s.transport.name);
    Read(transport, "why", &s.transport.why);
    Read(transport, "ring_requests", &s.transport.ring_requests);
    for (const auto& [op, r] : Part(j, "requests").items()) {
      RequestStats rs;
      rs.op = op;
      Read(r, "count", &rs.count);
      Read(r, "errors", &rs.errors);
      Read(r, "p50_us", &rs.p50_us);
      Read(r, "p99_us", &rs.p99_us);
      s.requests.push_back(std::move(rs));
    }
    Read(j, "bytes_served", &s.bytes_served);
    const json& cache = Part(j, "cache");
    for (const json& t : Part(cache, "tiers").is_array() ? Part(cache, "tiers") : json::array()) {
      std::string name;
      Read(t, "name", &name);
      s.tiers.push_back({std::move(name), TierFromJson(t)});
    }
    const json& rb = Part(cache, "read_buffer");
    Read(rb, "hits", &s.read_buffer.hits);
    Read(rb, "inserts", &s.read_buffer.inserts);
    Read(rb, "evictions", &s.read_buffer.evictions);
    Read(rb, "bytes_held", &s.read_buffer.bytes_held);
    Read(rb, "bytes_budget", &s.read_buffer.budget);
    OriginFromJson(Part(j, "origin"), &s.origin);
    ReadaheadFromJson(Part(j, "readahead"), &s.readahead);
    s.cluster = ClusterFromJson(Part(j, "cluster"));
    const json& w = Part(j, "what_if");
    s.what_if.ram = CurveFromJson(Part(w, "ram"));
    if (w.contains("ssd")) s.what_if.ssd = CurveFromJson(w.at("ssd"));
    for (const json& p : Part(w, "history").is_array() ? Part(w, "history") : json::array()) {
      HistoryPoint hp;
      Read(p, "uptime", &hp.uptime);
      for (const json& t : Part(p, "tiers").is_array() ? Part(p, "tiers") : json::array()) {
        hp.tiers.emplace_back(t.at(0).get<uint64_t>(), t.at(1).get<uint64_t>());
      }
      s.what_if.history.push_back(std::move(hp));
    }
    const json& wu = Part(j, "warmup");
    Read(wu, "requested", &s.warmup.requested);
    Read(wu, "done", &s.warmup.done);
    Read(wu, "bytes", &s.warmup.bytes);
    Read(wu, "skipped", &s.warmup.skipped);
    Read(wu, "rejected", &s.warmup.rejected);
    Read(wu, "not_stored", &s.warmup.not_stored);
    Read(wu, "problem", &s.warmup.problem);
    Read(wu, "errors", &s.warmup.errors);
    Read(wu, "evicted", &s.warmup.evicted);
    Read(wu, "last_sync", &s.warmup.last_sync);
    Read(Part(j, "errors"), "checksum", &s.checksum_errors);
    Read(Part(j, "errors"), "io", &s.io_errors);
    Read(Part(j, "listing"), "entries", &s.listed_entries);
    Read(Part(j, "listing"), "largest_request_bytes", &s.largest_readdir_request);
    s.memory = MemoryFromJson(Part(j, "memory"));
    for (const auto& [side, v] : Part(j, "views").items()) {
      ViewStats vs;
      vs.side = static_cast<uint32_t>(std::stoul(side));
      Read(v, "files_served", &vs.files_served);
      Read(v, "bytes_served", &vs.bytes_served);
      Read(v, "resized_loads", &vs.resized_loads);
      Read(v, "resized_load_bytes", &vs.resized_load_bytes);
      Read(v, "readahead_loads", &vs.readahead_loads);
      Read(v, "readahead_load_bytes", &vs.readahead_load_bytes);
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
