#include "fs/stats/stats_prometheus.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include "fs/readers/reader_verdict.h"
#include "fs/stats/field_table.h"
#include "fs/stats/memory_fields.h"
#include "fs/stats/stat_fields.h"

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

// Requests in the order of their names: the order the JSON object (sorted keys) gave.
std::vector<const RequestStats*> ByName(const std::vector<RequestStats>& requests) {
  std::vector<const RequestStats*> out;
  for (const RequestStats& r : requests) out.push_back(&r);
  std::sort(out.begin(), out.end(),
            [](const RequestStats* a, const RequestStats* b) { return a->op < b->op; });
  return out;
}

}  // namespace

std::string StatsPrometheus(const StatsSnapshot& s) {
  using namespace stat_fields;
  field_table::PromText w;
  const std::string ds = "dataset=\"" + Escape(s.dataset.path) + "\"";
  auto with = [&](const std::string& extra) { return ds + "," + extra; };
  auto d = [](uint64_t v) { return static_cast<double>(v); };
  w.Fields(kSnapshotFields, ds, s);
  w.Fields(kCpuFields, ds, s.cpu);
  w.Single("mmfs_transport_info", "gauge",
           "How requests reach the daemon (transport: io_uring or classic); always 1.",
           with("transport=\"" + Escape(s.transport.name) + "\""), 1);
  w.Fields(kTransportFields, ds, s.transport);
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
  std::vector<std::pair<std::string, const cache::TierCounters*>> tiers;
  for (const TierStats& t : s.tiers) {
    tiers.emplace_back(with("tier=\"" + t.name + "\""), &t.counters);
  }
  w.Fields(kTierFields, tiers);
  const OriginStats& o = s.origin;
  w.Fields(kOriginFields, ds, o);
  w.Fields(kMissQueueFields, ds, o.queued);
  w.Fields(kRereadFields, ds, o.rereads);
  // The origin's cost as learnt from its reads (origin_cost_model.h), once there is one.
  if (o.cost.known) w.Fields(kCostFields, ds, o.cost);
  if (o.remote.has_value()) {  // a remote origin's requests (remote_stats.h)
    const origin::RemoteStatsSnapshot& r = *o.remote;
    const std::string url = with("url=\"" + Escape(r.url) + "\"");
    w.Fields(kRemoteFields, url, r);
    w.Family("mmfs_remote_request_seconds", "histogram", "Time of one remote request.");
    uint64_t below = 0;
    for (size_t i = 0; i < r.kBucketBoundsUs.size(); ++i) {
      below += r.latency[i];
      std::ostringstream le;
      le << static_cast<double>(r.kBucketBoundsUs[i]) / 1e6;
      w.Sample("mmfs_remote_request_seconds_bucket", with("url=\"" + Escape(r.url) + "\",le=\"" +
                                                          le.str() + "\""),
               d(below));
    }
    // +Inf and the count from the buckets themselves (not `requests`, read at another moment):
    // a histogram's buckets never exceed its count.
    below += r.latency.back();
    w.Sample("mmfs_remote_request_seconds_bucket",
             with("url=\"" + Escape(r.url) + "\",le=\"+Inf\""), d(below));
    w.Sample("mmfs_remote_request_seconds_sum", url, static_cast<double>(r.latency_sum_us) / 1e6);
    w.Sample("mmfs_remote_request_seconds_count", url, d(below));
  }
  const FillStats& f = s.fill;  // the dataset fetched ahead of its readers (filler.h)
  if (f.mode != "off") {
    w.Fields(kFillFields, ds, f);
    if (f.shared) w.Fields(kFillHostsFields, ds, f.hosts);
  }
  w.Fields(kExtentFields, ds, s.extents);  // extent reads on misses (extent_reader.h)
  w.Fields(kMemoryFields, ds, s.memory);
  if (s.memory.governed) {
    const MemoryBudget& b = s.memory.plan;
    w.Single("mmfs_memory_limit_bytes", "gauge",
             "The memory limit the daemon plans within (physical or its cgroup's).",
             with("source=\"" + std::string(LimitSourceName(b.limit_source)) + "\""),
             d(b.limit_bytes));
    w.Fields(kBudgetFields, ds, b);
    const GovernorCounters& g = s.memory.governor;
    w.Fields(kSampleFields, ds, g.last);
    w.Fields(kGovernorFields, ds, g);
    w.Fields(kTargetFields, ds, g.targets);
  }
  std::vector<std::pair<std::string, cache::PrefetchCounters>> patterns = s.readahead.patterns;
  std::sort(patterns.begin(), patterns.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::pair<std::string, const cache::PrefetchCounters*>> by_pattern;
  for (const auto& [pattern, p] : patterns) {
    by_pattern.emplace_back(with("pattern=\"" + pattern + "\""), &p);
  }
  w.Fields(kPatternFields, by_pattern);
  w.Fields(kPushFields, ds, s.readahead.pushed);
  if (!s.views.empty()) {
    std::vector<std::pair<std::string, const ViewStats*>> views;
    for (const ViewStats& v : s.views) {
      std::string label = "view=\"";
      label += std::to_string(v.side);
      label += '"';
      views.emplace_back(with(label), &v);
    }
    w.Fields(kViewFields, views);
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
    w.Fields(kClusterFields, ds, c);
    std::vector<std::pair<std::string, const cache::ClusterServerHealth*>> servers;
    for (const auto& srv : c.servers) {
      servers.emplace_back(with("server=\"" + srv.server + "\""), &srv);
    }
    w.Fields(kClusterServerFields, servers);
  }
  return w.str();
}

}  // namespace mmfs::fs
