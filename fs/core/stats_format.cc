#include "fs/core/stats_format.h"

#include <sstream>

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
  void Sample(const std::string& name, const std::string& labels, double value) {
    out_ << name;
    if (!labels.empty()) out_ << '{' << labels << '}';
    out_ << ' ' << value << '\n';
  }
  // A family with one sample.
  void Single(const std::string& name, const char* type, const char* help,
              const std::string& labels, double value) {
    Family(name, type, help);
    Sample(name, labels, value);
  }
  std::string str() const { return out_.str(); }

 private:
  std::ostringstream out_;
};

}  // namespace

std::string PrometheusFromStats(const nlohmann::json& j) {
  Writer w;
  const std::string ds = "dataset=\"" + Escape(j["dataset"]["path"].get<std::string>()) + "\"";
  auto with = [&](const std::string& extra) { return ds + "," + extra; };

  w.Single("mmfs_uptime_seconds", "gauge", "Seconds since the daemon started serving.", ds,
           j["uptime_seconds"].get<double>());
  w.Family("mmfs_requests_total", "counter", "FUSE requests that reached the daemon, by operation.");
  for (const auto& [op, v] : j["requests"].items()) {
    w.Sample("mmfs_requests_total", with("op=\"" + op + "\""), v["count"].get<double>());
  }
  w.Family("mmfs_request_errors_total", "counter", "FUSE requests answered with an error.");
  for (const auto& [op, v] : j["requests"].items()) {
    w.Sample("mmfs_request_errors_total", with("op=\"" + op + "\""), v["errors"].get<double>());
  }
  w.Family("mmfs_request_latency_seconds", "gauge",
           "Request latency quantiles (upper edge of a power-of-two bucket).");
  for (const auto& [op, v] : j["requests"].items()) {
    w.Sample("mmfs_request_latency_seconds", with("op=\"" + op + "\",quantile=\"0.5\""),
             v["p50_us"].get<double>() / 1e6);
    w.Sample("mmfs_request_latency_seconds", with("op=\"" + op + "\",quantile=\"0.99\""),
             v["p99_us"].get<double>() / 1e6);
  }
  w.Single("mmfs_served_bytes_total", "counter", "Bytes returned to READ requests.", ds,
           j["bytes_served"].get<double>());

  struct TierField {
    const char* key;
    const char* metric;
    const char* type;
    const char* help;
  };
  const TierField fields[] = {
      {"lookups", "mmfs_cache_lookups_total", "counter", "Cache tier lookups."},
      {"hits", "mmfs_cache_hits_total", "counter", "Cache tier hits."},
      {"misses", "mmfs_cache_misses_total", "counter", "Cache tier misses."},
      {"inserts", "mmfs_cache_inserts_total", "counter", "Blobs admitted into the tier."},
      {"rejected", "mmfs_cache_rejected_total", "counter", "Blobs the admission policy kept out."},
      {"evictions", "mmfs_cache_evictions_total", "counter", "Blobs evicted from the tier."},
      {"entries", "mmfs_cache_entries", "gauge", "Blobs held by the tier."},
      {"bytes_used", "mmfs_cache_used_bytes", "gauge", "Bytes held by the tier."},
      {"bytes_budget", "mmfs_cache_budget_bytes", "gauge", "Byte budget of the tier."},
      {"corrupt", "mmfs_cache_corrupt_total", "counter", "Damaged entries found (misses)."},
      {"write_errors", "mmfs_cache_write_errors_total", "counter", "Failed cache writes."},
  };
  for (const TierField& f : fields) {
    w.Family(f.metric, f.type, f.help);
    for (const auto& tier : j["cache"]["tiers"]) {
      w.Sample(f.metric, with("tier=\"" + tier["name"].get<std::string>() + "\""),
               tier.value(f.key, 0.0));
    }
  }
  w.Single("mmfs_origin_reads_total", "counter", "Reads of the shards for cache misses.", ds,
           j["origin"]["reads"].get<double>());
  w.Single("mmfs_origin_bytes_total", "counter", "Bytes read from the shards for cache misses.",
           ds, j["origin"]["bytes"].get<double>());
  w.Single("mmfs_origin_errors_total", "counter", "Shard reads that failed.", ds,
           j["origin"]["errors"].get<double>());
  w.Single("mmfs_checksum_failures_total", "counter", "Files whose bytes failed their checksum.",
           ds, j["errors"]["checksum"].get<double>());
  w.Single("mmfs_io_errors_total", "counter", "System call failures while reading shards.", ds,
           j["errors"]["io"].get<double>());
  w.Single("mmfs_resident_memory_bytes", "gauge", "Resident set size of the daemon.", ds,
           j["memory"]["rss_bytes"].get<double>());
  const auto& mem = j["memory"];
  if (mem.contains("budget")) {
    const auto& b = mem["budget"];
    w.Single("mmfs_memory_limit_bytes", "gauge",
             "The memory limit the daemon plans within (physical or its cgroup's).",
             with("source=\"" + b.value("limit_source", std::string()) + "\""),
             b.value("limit_bytes", 0.0));
    w.Single("mmfs_memory_budget_clamped", "gauge", "1 if --ram-cache did not fit and was lowered.",
             ds, b.value("clamped", false) ? 1 : 0);
    w.Family("mmfs_memory_budget_bytes", "gauge", "Budgets planned at mount, by part.");
    for (const char* part : {"ram_cache", "prefetch", "read_buffer", "reserved"}) {
      w.Sample("mmfs_memory_budget_bytes", with("part=\"" + std::string(part) + "\""),
               b.value(std::string(part) + "_bytes", 0.0));
    }
  }
  if (mem.contains("pressure")) {
    const auto& p = mem["pressure"];
    w.Single("mmfs_memory_working_bytes", "gauge",
             "Working set under the limit (usage less inactive file pages).", ds,
             p.value("working_bytes", 0.0));
    w.Single("mmfs_memory_shrinks_total", "counter",
             "Times memory pressure made the daemon release cache or buffer memory.", ds,
             p.value("shrinks", 0.0));
    w.Family("mmfs_memory_target_bytes", "gauge", "Budgets in force now, by part.");
    for (const char* part : {"ram_cache", "prefetch", "read_buffer"}) {
      w.Sample("mmfs_memory_target_bytes", with("part=\"" + std::string(part) + "\""),
               p.value(std::string(part) + "_bytes", 0.0));
    }
  }
  if (j.contains("readahead")) {
    w.Family("mmfs_prefetch_total", "counter", "Files prefetched, by pattern and outcome.");
    for (const auto& [pattern, p] : j["readahead"]["patterns"].items()) {
      for (const char* outcome : {"issued", "used", "wasted", "late"}) {
        w.Sample("mmfs_prefetch_total",
                 with("pattern=\"" + pattern + "\",outcome=\"" + outcome + "\""),
                 p.value(outcome, 0.0));
      }
    }
    const auto& pushed = j["readahead"].value("pushed", nlohmann::json::object());
    w.Single("mmfs_pushed_files_total", "counter",
             "Prefetched files stored in the kernel's page cache before their READ.", ds,
             pushed.value("files", 0.0));
    w.Single("mmfs_pushed_bytes_total", "counter", "Bytes of the pushed files.", ds,
             pushed.value("bytes", 0.0));
  }
  if (j.contains("cluster") && j["cluster"].value("enabled", false)) {
    const auto& c = j["cluster"];
    w.Single("mmfs_cluster_bytes_in_total", "counter", "Bytes read from the cluster tier.", ds,
             c["bytes_in"].get<double>());
    w.Single("mmfs_cluster_bytes_out_total", "counter", "Bytes written to the cluster tier.", ds,
             c["bytes_out"].get<double>());
    w.Single("mmfs_cluster_errors_total", "counter",
             "Cluster tier requests that failed (served by the origin instead).", ds,
             c["errors"].get<double>());
    w.Single("mmfs_cluster_timeouts_total", "counter", "Cluster tier requests that timed out.", ds,
             c["timeouts"].get<double>());
    w.Single("mmfs_cluster_damaged_total", "counter", "Cluster values that failed their checksum.",
             ds, c["damaged"].get<double>());
    w.Single("mmfs_cluster_dropped_total", "counter", "Cluster fills dropped (queue full).", ds,
             c["dropped"].get<double>());
    w.Family("mmfs_cluster_server_up", "gauge", "1 if the server's last request succeeded.");
    for (const auto& srv : c["servers"]) {
      w.Sample("mmfs_cluster_server_up",
               with("server=\"" + srv["server"].get<std::string>() + "\""),
               srv["up"].get<bool>() ? 1 : 0);
    }
    w.Family("mmfs_cluster_server_errors_total", "counter", "Failed requests, by server.");
    for (const auto& srv : c["servers"]) {
      w.Sample("mmfs_cluster_server_errors_total",
               with("server=\"" + srv["server"].get<std::string>() + "\""),
               srv["errors"].get<double>());
    }
  }
  return w.str();
}

}  // namespace mmfs::fs
