#include "fs/stats/stats_prometheus.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include "fs/readers/reader_verdict.h"

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
  Writer w;
  const std::string ds = "dataset=\"" + Escape(s.dataset.path) + "\"";
  auto with = [&](const std::string& extra) { return ds + "," + extra; };
  auto d = [](uint64_t v) { return static_cast<double>(v); };
  w.Single("mmfs_uptime_seconds", "gauge", "Seconds since the daemon started serving.", ds,
           s.uptime_seconds);
  w.Family("mmfs_cpu_seconds_total", "counter",
           "CPU time of the daemon since it started, every thread, by mode.");
  w.Sample("mmfs_cpu_seconds_total", with("mode=\"user\""), s.cpu.user_seconds);
  w.Sample("mmfs_cpu_seconds_total", with("mode=\"system\""), s.cpu.system_seconds);
  w.Single("mmfs_transport_info", "gauge",
           "How requests reach the daemon (transport: io_uring or classic); always 1.",
           with("transport=\"" + Escape(s.transport.name) + "\""), 1);
  w.Single("mmfs_ring_requests_total", "counter", "Requests that came over io_uring.", ds,
           d(s.transport.ring_requests));
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
  w.Family("mmfs_origin_cause_bytes_total", "counter",
           "Bytes read from the shards by cause: the files asked for, their samples' other "
           "members, neighbours (an extent's other samples, and the padding between files), "
           "readahead, warm-up, the fill. Unlike mmfs_origin_bytes_total, readahead and the fill "
           "included.");
  const std::pair<const char*, uint64_t> causes[] = {{"asked", o.asked_bytes()},
                                                     {"members", o.member_bytes},
                                                     {"neighbours", o.neighbour_bytes},
                                                     {"readahead", o.prefetch_bytes},
                                                     {"warmup", o.warmup_bytes},
                                                     {"fill", o.fill_bytes}};
  for (const auto& [cause, bytes] : causes) {
    w.Sample("mmfs_origin_cause_bytes_total", with(std::string("cause=\"") + cause + "\""),
             d(bytes));
  }
  w.Single("mmfs_origin_errors_total", "counter", "Shard reads that failed.", ds, d(o.errors));
  w.Single("mmfs_origin_queued_reads_total", "counter",
           "READs that waited for the origin on a miss thread, not a request thread.", ds,
           d(o.queued.reads));
  w.Single("mmfs_origin_queued_late_total", "counter",
           "Queued READs that started past their deadline (the queue was long).", ds,
           d(o.queued.late));
  w.Single("mmfs_origin_queued_waiting", "gauge", "Queued READs not started yet.", ds,
           d(o.queued.waiting));
  w.Single("mmfs_origin_queued_running", "gauge", "Queued READs being served.", ds,
           d(o.queued.running));
  w.Single("mmfs_origin_miss_threads", "gauge", "Miss threads running.", ds, d(o.queued.threads));
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
  if (o.remote.has_value()) {  // a remote origin's requests (remote_stats.h)
    const origin::RemoteStatsSnapshot& r = *o.remote;
    const std::string url = with("url=\"" + Escape(r.url) + "\"");
    w.Single("mmfs_remote_requests_total", "counter",
             "Requests sent to the remote origin, retries included.", url, d(r.requests));
    w.Single("mmfs_remote_retries_total", "counter",
             "Requests sent again after a timeout, a 5xx or a 429.", url, d(r.retries));
    w.Single("mmfs_remote_bytes_total", "counter", "Body bytes received from the remote origin.",
             url, d(r.bytes));
    w.Single("mmfs_remote_errors_total", "counter",
             "Remote requests that failed for good (after their retries).", url, d(r.errors));
    w.Single("mmfs_remote_failed_fast_total", "counter",
             "Reads failed at once, unsent: their bytes failed for good a moment ago.", url,
             d(r.failed_fast));
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
    w.Single("mmfs_fill_filling", "gauge", "1 while the fill fetches the dataset, else 0.", ds,
             d(f.state == "filling" ? 1 : 0));
    w.Single("mmfs_fill_target_bytes", "gauge",
             "Bytes the fill covers: the dataset, or the share kept when it does not fit.", ds,
             d(f.target_bytes));
    w.Single("mmfs_fill_fetched_bytes_total", "counter", "Bytes the fill fetched and stored.", ds,
             d(f.fetched_bytes));
    w.Single("mmfs_fill_present_bytes_total", "counter",
             "Bytes the fill found held already.", ds, d(f.present_bytes));
    w.Single("mmfs_fill_failed_files_total", "counter",
             "Files the fill could not fetch (left to their readers).", ds, d(f.failed_files));
    w.Single("mmfs_fill_in_flight", "gauge", "The fill's requests in flight.", ds,
             d(f.in_flight));
    w.Single("mmfs_fill_bytes_per_second", "gauge",
             "The fill's throughput over its last window.", ds, f.bytes_per_second);
    w.Single("mmfs_fill_seconds_left", "gauge", "The fill's time left at that rate.", ds,
             f.seconds_left);
    if (f.shared) {
      w.Single("mmfs_fill_claimed_chunks_total", "counter",
               "Chunks of a fill shared with the job's hosts that this host read from the store.",
               ds, d(f.hosts.claimed_chunks));
      w.Single("mmfs_fill_peer_bytes_total", "counter",
               "Bytes of a shared fill read from the cluster (another host fetched them).", ds,
               d(f.hosts.peer_bytes));
      w.Single("mmfs_fill_demand_waits_total", "counter",
               "Readers' misses of files another host was fetching, waited for in the cluster.",
               ds, d(f.hosts.demand_waits));
      w.Single("mmfs_fill_demand_waits_served_total", "counter",
               "Of those, misses found in the cluster after the wait (no store read).", ds,
               d(f.hosts.demand_waits_served));
    }
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
  w.Single("mmfs_resident_file_memory_bytes", "gauge",
           "Of the daemon's resident set, the pages of mapped files (its code, the index).", ds,
           d(s.memory.rss_file_bytes));
  w.Single("mmfs_index_locked", "gauge", "1 if the index's pages are locked in memory once read.",
           ds, s.memory.index_locked ? 1 : 0);
  w.Single("mmfs_heap_huge_pages", "gauge",
           "1 if the daemon's malloc heap is on transparent huge pages.", ds,
           s.memory.heap_huge_pages ? 1 : 0);
  w.Single("mmfs_heap_prefaulting", "gauge",
           "1 if a thread of the daemon populates its heap ahead of the allocator.", ds,
           s.memory.heap_prefaulting ? 1 : 0);
  w.Single("mmfs_heap_prefaulted_bytes_total", "counter",
           "Bytes of the daemon's heap populated ahead of the allocator.", ds,
           d(s.memory.heap_prefaulted_bytes));
  if (s.memory.governed) {
    const MemoryBudget& b = s.memory.plan;
    w.Single("mmfs_memory_limit_bytes", "gauge",
             "The memory limit the daemon plans within (physical or its cgroup's).",
             with("source=\"" + std::string(LimitSourceName(b.limit_source)) + "\""),
             d(b.limit_bytes));
    w.Single("mmfs_memory_budget_clamped", "gauge",
             "1 if --ram-cache or --memory did not fit and was lowered.", ds, b.clamped ? 1 : 0);
    w.Single("mmfs_memory_shared_limit", "gauge",
             "1 in shared-limit mode (--memory, or by default under a memory cgroup's limit).", ds,
             b.shared_limit() ? 1 : 0);
    w.Family("mmfs_memory_budget_bytes", "gauge", "Budgets planned at mount, by part.");
    const std::pair<const char*, uint64_t> planned[] = {{"ram_cache", b.ram_cache_bytes},
                                                        {"prefetch", b.prefetch_bytes},
                                                        {"read_buffer", b.read_buffer_bytes},
                                                        {"reserved", b.reserved_bytes},
                                                        {"memory", b.memory_bytes},
                                                        {"page_cache", b.page_cache_bytes}};
    for (const auto& [part, bytes] : planned) {
      w.Sample("mmfs_memory_budget_bytes", with("part=\"" + std::string(part) + "\""), d(bytes));
    }
    const GovernorCounters& g = s.memory.governor;
    w.Single("mmfs_memory_working_bytes", "gauge",
             "Working set under the limit (usage less inactive file pages).", ds,
             d(g.last.working_bytes()));
    w.Single("mmfs_memory_unreclaimable_bytes", "gauge",
             "Memory reclaim cannot take back (no page cache, no reclaimable kernel objects); "
             "what the governor judges in shared-limit mode.",
             ds, d(g.last.unreclaimable_bytes()));
    w.Single("mmfs_memory_kernel_reclaimable_bytes", "gauge",
             "Reclaimable kernel objects under the limit (dentries, inodes; on cgroup v1 all "
             "kernel memory).",
             ds, d(g.last.kernel_reclaimable_bytes));
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
  {
    const PushStats& p = s.readahead.pushed;
    const std::pair<const char*, uint64_t> waits[] = {
        {"waited", p.waited}, {"skipped", p.wait_skipped}, {"expired", p.wait_expired}};
    w.Family("mmfs_push_waits_total", "counter",
             "Requests that could wait for their push, by outcome (page_pusher.h).");
    for (const auto& [outcome, n] : waits) {
      w.Sample("mmfs_push_waits_total", with("outcome=\"" + std::string(outcome) + "\""), d(n));
    }
    w.Single("mmfs_push_queue_full_total", "counter",
             "Pushes not queued: the pushers' queue was full.", ds, d(p.queue_full));
  }
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
