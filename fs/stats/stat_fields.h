// The field tables of the stats snapshot (stats.h): for each group of plain values, its JSON
// keys (the `.mmfs/stats` document) and Prometheus metrics (`.mmfs/metrics`), each written once
// (field_table.h says how a table is read). The JSON writer, its parser and the Prometheus text
// all iterate these, so adding a counter to a group is one line here. The keys and metric names
// are a contract (`mmfs stats`, `mmfs warmup`, the tests, bench/*.py): never rename one.
//
// What is not here is written by hand in stats_format.cc, stats_parse.cc and
// stats_prometheus.cc: lists keyed by name (requests, patterns, views, tiers' names), the remote
// origin's histogram, the what-if curves' history, enum names (the pressure level, the limit's
// source), values a label carries (the transport, the memory limit), and the readers'
// section (readers_json.cc). The memory sections' tables are memory_fields.h.
//
// Thread-safety: constants.
#pragma once

#include "fs/stats/field_table.h"
#include "fs/stats/stats.h"

namespace mmfs::fs::stat_fields {

using field_table::Counter;
using field_table::Derived;
using field_table::F;
using field_table::Field;
using field_table::Gauge;

// The snapshot's own scalars, in the document's top level.
inline constexpr Field<StatsSnapshot> kSnapshotFields[] = {
    F("uptime_seconds", &StatsSnapshot::uptime_seconds,
      Gauge("mmfs_uptime_seconds", "Seconds since the daemon started serving.")),
    F("bytes_served", &StatsSnapshot::bytes_served,
      Counter("mmfs_served_bytes_total", "Bytes returned to READ requests.")),
    F("errors.checksum", &StatsSnapshot::checksum_errors,
      Counter("mmfs_checksum_failures_total", "Files whose bytes failed their checksum.")),
    F("errors.io", &StatsSnapshot::io_errors,
      Counter("mmfs_io_errors_total", "System call failures while reading shards.")),
    F("listing.entries", &StatsSnapshot::listed_entries,
      Counter("mmfs_listed_entries_total", "Directory entries in READDIR replies.")),
    F("listing.largest_request_bytes", &StatsSnapshot::largest_readdir_request),
};

inline constexpr Field<DatasetStats> kDatasetFields[] = {
    F("path", &DatasetStats::path),
    F("files", &DatasetStats::files),
    F("directories", &DatasetStats::directories),
    F("samples", &DatasetStats::samples),
    F("bytes", &DatasetStats::bytes),
    F("shards", &DatasetStats::shards),
};

inline constexpr const char* kCpuHelp =
    "CPU time of the daemon since it started, every thread, by mode.";
inline constexpr Field<CpuStats> kCpuFields[] = {
    F("user_seconds", &CpuStats::user_seconds,
      Counter("mmfs_cpu_seconds_total", kCpuHelp, "mode=\"user\"")),
    F("system_seconds", &CpuStats::system_seconds,
      Counter("mmfs_cpu_seconds_total", kCpuHelp, "mode=\"system\"")),
};

inline constexpr Field<TransportStats> kTransportFields[] = {
    F("name", &TransportStats::name),
    F("why", &TransportStats::why),
    F("ring_requests", &TransportStats::ring_requests,
      Counter("mmfs_ring_requests_total", "Requests that came over io_uring.")),
};

// One operation's; its Prometheus families (by op, latencies in seconds) are by hand.
inline constexpr Field<RequestStats> kRequestFields[] = {
    F("count", &RequestStats::count),
    F("errors", &RequestStats::errors),
    F("p50_us", &RequestStats::p50_us),
    F("p99_us", &RequestStats::p99_us),
};

// One tier's, a sample per tier (tier="ram").
using cache::TierCounters;
inline constexpr Field<TierCounters> kTierFields[] = {
    F("lookups", &TierCounters::lookups,
      Counter("mmfs_cache_lookups_total", "Cache tier lookups.")),
    F("hits", &TierCounters::hits, Counter("mmfs_cache_hits_total", "Cache tier hits.")),
    F("misses", &TierCounters::misses, Counter("mmfs_cache_misses_total", "Cache tier misses.")),
    F("inserts", &TierCounters::inserts,
      Counter("mmfs_cache_inserts_total", "Blobs admitted into the tier.")),
    F("rejected", &TierCounters::rejected,
      Counter("mmfs_cache_rejected_total", "Blobs the admission policy kept out.")),
    F("evictions", &TierCounters::evictions,
      Counter("mmfs_cache_evictions_total", "Blobs evicted from the tier.")),
    F("entries", &TierCounters::entries, Gauge("mmfs_cache_entries", "Blobs held by the tier.")),
    F("bytes_used", &TierCounters::bytes_used,
      Gauge("mmfs_cache_used_bytes", "Bytes held by the tier.")),
    F("bytes_budget", &TierCounters::bytes_budget,
      Gauge("mmfs_cache_budget_bytes", "Byte budget of the tier.")),
    F("corrupt", &TierCounters::corrupt,
      Counter("mmfs_cache_corrupt_total", "Damaged entries found (misses).")),
    F("read_errors", &TierCounters::read_errors,
      Counter("mmfs_cache_read_errors_total",
              "Entries the tier's disk failed to read (misses): a failing disk.")),
    F("write_errors", &TierCounters::write_errors,
      Counter("mmfs_cache_write_errors_total", "Failed cache writes.")),
    F("dropped", &TierCounters::dropped),
    F("admission_paused", &TierCounters::admission_paused),
    F("problem", &TierCounters::problem),
};

using cache::ReadBufferCounters;
inline constexpr Field<ReadBufferCounters> kReadBufferFields[] = {
    F("hits", &ReadBufferCounters::hits),
    F("inserts", &ReadBufferCounters::inserts),
    F("evictions", &ReadBufferCounters::evictions),
    F("bytes_held", &ReadBufferCounters::bytes_held),
    F("bytes_budget", &ReadBufferCounters::budget),
};

inline constexpr const char* kCauseHelp =
    "Bytes read from the shards by cause: the files asked for, their samples' other members, "
    "neighbours (an extent's other samples, and the padding between files), readahead, warm-up, "
    "the fill. Unlike mmfs_origin_bytes_total, readahead and the fill included.";
// The origin's own values; its parts (queued, rereads, cost_model, streamed, remote) follow.
// `reads` and `bytes` are demand + warm-up (all reads that are not readahead).
inline constexpr Field<OriginStats> kOriginFields[] = {
    Derived<OriginStats>(
        "reads", [](const OriginStats& o) { return o.demand_reads + o.warmup_reads; },
        Counter("mmfs_origin_reads_total", "Reads of the shards for cache misses.")),
    Derived<OriginStats>(
        "bytes", [](const OriginStats& o) { return o.demand_bytes + o.warmup_bytes; },
        Counter("mmfs_origin_bytes_total", "Bytes read from the shards for cache misses.")),
    Derived<OriginStats>(
        "by_cause.demand.asked_bytes", [](const OriginStats& o) { return o.asked_bytes(); },
        Counter("mmfs_origin_cause_bytes_total", kCauseHelp, "cause=\"asked\"")),
    F("by_cause.demand.member_bytes", &OriginStats::member_bytes,
      Counter("mmfs_origin_cause_bytes_total", kCauseHelp, "cause=\"members\"")),
    F("by_cause.demand.neighbour_bytes", &OriginStats::neighbour_bytes,
      Counter("mmfs_origin_cause_bytes_total", kCauseHelp, "cause=\"neighbours\"")),
    F("by_cause.prefetch.bytes", &OriginStats::prefetch_bytes,
      Counter("mmfs_origin_cause_bytes_total", kCauseHelp, "cause=\"readahead\"")),
    F("by_cause.warmup.bytes", &OriginStats::warmup_bytes,
      Counter("mmfs_origin_cause_bytes_total", kCauseHelp, "cause=\"warmup\"")),
    F("by_cause.fill.bytes", &OriginStats::fill_bytes,
      Counter("mmfs_origin_cause_bytes_total", kCauseHelp, "cause=\"fill\"")),
    F("errors", &OriginStats::errors,
      Counter("mmfs_origin_errors_total", "Shard reads that failed.")),
    F("coalesced", &OriginStats::coalesced),
    F("by_cause.demand.reads", &OriginStats::demand_reads),
    F("by_cause.demand.bytes", &OriginStats::demand_bytes),
    F("by_cause.prefetch.reads", &OriginStats::prefetch_reads),
    F("by_cause.warmup.reads", &OriginStats::warmup_reads),
    F("by_cause.fill.reads", &OriginStats::fill_reads),
};

// origin.queued
inline constexpr Field<MissQueueCounters> kMissQueueFields[] = {
    F("reads", &MissQueueCounters::reads,
      Counter("mmfs_origin_queued_reads_total",
              "READs that waited for the origin on a miss thread, not a request thread.")),
    F("late", &MissQueueCounters::late,
      Counter("mmfs_origin_queued_late_total",
              "Queued READs that started past their deadline (the queue was long).")),
    F("waiting", &MissQueueCounters::waiting,
      Gauge("mmfs_origin_queued_waiting", "Queued READs not started yet.")),
    F("running", &MissQueueCounters::running,
      Gauge("mmfs_origin_queued_running", "Queued READs being served.")),
    F("threads", &MissQueueCounters::threads,
      Gauge("mmfs_origin_miss_threads", "Miss threads running.")),
};

// origin.rereads
using cache::RefetchCounters;
inline constexpr Field<RefetchCounters> kRereadFields[] = {
    F("files", &RefetchCounters::files),
    F("bytes", &RefetchCounters::bytes,
      Counter("mmfs_origin_reread_bytes_total",
              "Bytes fetched from the shards again before their previous fetch reached a "
              "reader.")),
};

// origin.cost_model; exported only once known.
inline constexpr Field<OriginCostEstimate> kCostFields[] = {
    F("known", &OriginCostEstimate::known),
    F("latency_bound", &OriginCostEstimate::latency_bound),
    F("mean_seconds", &OriginCostEstimate::mean_seconds),
    F("latency_seconds", &OriginCostEstimate::latency_seconds,
      Gauge("mmfs_origin_latency_seconds", "Estimated time of one origin read request.")),
    F("bandwidth_bytes_per_second", &OriginCostEstimate::bandwidth_bytes_per_second,
      Gauge("mmfs_origin_bandwidth_bytes_per_second", "Estimated origin bandwidth of one read.")),
    F("extent_bytes", &OriginCostEstimate::extent_bytes,
      Gauge("mmfs_origin_extent_bytes",
            "The read size that pays on the origin: bandwidth x latency, clamped.")),
    F("reads", &OriginCostEstimate::reads),
};

// origin.streamed
inline constexpr Field<RangedCounters> kStreamedFields[] = {
    F("verified_files", &RangedCounters::verified_files),
    F("verify_bytes", &RangedCounters::verify_bytes),
    F("range_reads", &RangedCounters::range_reads),
    F("range_bytes", &RangedCounters::range_bytes),
};

// origin.remote, a remote origin's requests (url="..."); its latency histogram is by hand.
using origin::RemoteStatsSnapshot;
inline constexpr Field<RemoteStatsSnapshot> kRemoteFields[] = {
    F("url", &RemoteStatsSnapshot::url),
    F("requests", &RemoteStatsSnapshot::requests,
      Counter("mmfs_remote_requests_total",
              "Requests sent to the remote origin, retries included.")),
    F("retries", &RemoteStatsSnapshot::retries,
      Counter("mmfs_remote_retries_total", "Requests sent again after a timeout, a 5xx or a 429.")),
    F("bytes", &RemoteStatsSnapshot::bytes,
      Counter("mmfs_remote_bytes_total", "Body bytes received from the remote origin.")),
    F("errors", &RemoteStatsSnapshot::errors,
      Counter("mmfs_remote_errors_total",
              "Remote requests that failed for good (after their retries).")),
    F("failed_fast", &RemoteStatsSnapshot::failed_fast,
      Counter("mmfs_remote_failed_fast_total",
              "Reads failed at once, unsent: their bytes failed for good a moment ago.")),
};

// The readahead section's own values; its patterns, and the reads and bytes it shows again
// from the origin, are by hand.
inline constexpr Field<ReadaheadStats> kReadaheadFields[] = {
    F("enabled", &ReadaheadStats::enabled),
    F("runs_detected", &ReadaheadStats::runs_detected),
    F("jobs_dropped", &ReadaheadStats::jobs_dropped),
    F("hint.available", &ReadaheadStats::hint_available),
    F("buffer_bytes", &ReadaheadStats::buffer_bytes),
    F("buffer_budget", &ReadaheadStats::buffer_budget),
};

// One access pattern's (readahead.patterns.NAME), a sample per pattern (pattern="...").
inline constexpr const char* kPrefetchHelp = "Files prefetched, by pattern and outcome.";
using cache::PrefetchCounters;
inline constexpr Field<PrefetchCounters> kPatternFields[] = {
    F("issued", &PrefetchCounters::issued,
      Counter("mmfs_prefetch_total", kPrefetchHelp, "outcome=\"issued\"")),
    F("used", &PrefetchCounters::used,
      Counter("mmfs_prefetch_total", kPrefetchHelp, "outcome=\"used\"")),
    F("wasted", &PrefetchCounters::wasted,
      Counter("mmfs_prefetch_total", kPrefetchHelp, "outcome=\"wasted\"")),
    F("late", &PrefetchCounters::late,
      Counter("mmfs_prefetch_total", kPrefetchHelp, "outcome=\"late\"")),
    F("bytes_issued", &PrefetchCounters::bytes_issued),
};

// readahead.hint (with its `available`, above)
using cache::HintCounters;
inline constexpr Field<HintCounters> kHintFields[] = {
    F("orders", &HintCounters::orders),
    F("positions", &HintCounters::positions),
    F("cursor", &HintCounters::cursor),
    F("issued_to", &HintCounters::issued_to),
    F("unknown_lines", &HintCounters::unknown),
    F("off_order_reads", &HintCounters::off_order_reads),
};

// readahead.pushed
inline constexpr const char* kPushWaitHelp =
    "Requests that could wait for their push, by outcome (page_pusher.h).";
inline constexpr Field<PushStats> kPushFields[] = {
    F("files", &PushStats::files,
      Counter("mmfs_pushed_files_total",
              "Prefetched files stored in the kernel's page cache before their READ.")),
    F("bytes", &PushStats::bytes, Counter("mmfs_pushed_bytes_total", "Bytes of the pushed files.")),
    F("failed", &PushStats::failed),
    F("skipped", &PushStats::skipped),
    F("waited", &PushStats::waited,
      Counter("mmfs_push_waits_total", kPushWaitHelp, "outcome=\"waited\"")),
    F("wait_skipped", &PushStats::wait_skipped,
      Counter("mmfs_push_waits_total", kPushWaitHelp, "outcome=\"skipped\"")),
    F("wait_expired", &PushStats::wait_expired,
      Counter("mmfs_push_waits_total", kPushWaitHelp, "outcome=\"expired\"")),
    F("queue_full", &PushStats::queue_full,
      Counter("mmfs_push_queue_full_total", "Pushes not queued: the pushers' queue was full.")),
};

// The cluster section, with a cluster tier (its `enabled` is by hand).
using cache::ClusterCounters;
inline constexpr Field<ClusterCounters> kClusterFields[] = {
    F("hits", &ClusterCounters::hits),
    F("misses", &ClusterCounters::misses),
    F("bytes_in", &ClusterCounters::bytes_in,
      Counter("mmfs_cluster_bytes_in_total", "Bytes read from the cluster tier.")),
    F("bytes_out", &ClusterCounters::bytes_out,
      Counter("mmfs_cluster_bytes_out_total", "Bytes written to the cluster tier.")),
    F("errors", &ClusterCounters::errors,
      Counter("mmfs_cluster_errors_total",
              "Cluster tier requests that failed (served by the origin instead).")),
    F("timeouts", &ClusterCounters::timeouts,
      Counter("mmfs_cluster_timeouts_total", "Cluster tier requests that timed out.")),
    F("damaged", &ClusterCounters::damaged,
      Counter("mmfs_cluster_damaged_total", "Cluster values that failed their checksum.")),
    F("writes", &ClusterCounters::writes),
    F("dropped", &ClusterCounters::dropped,
      Counter("mmfs_cluster_dropped_total", "Cluster fills dropped (queue full).")),
    F("queued_bytes", &ClusterCounters::queued_bytes),
};

// One cluster server's (cluster.servers[]), a sample per server (server="host:port").
using cache::ClusterServerHealth;
inline constexpr Field<ClusterServerHealth> kClusterServerFields[] = {
    F("server", &ClusterServerHealth::server),
    F("up", &ClusterServerHealth::up,
      Gauge("mmfs_cluster_server_up", "1 if the server's last request succeeded.")),
    F("requests", &ClusterServerHealth::requests),
    F("errors", &ClusterServerHealth::errors,
      Counter("mmfs_cluster_server_errors_total", "Failed requests, by server.")),
    F("timeouts", &ClusterServerHealth::timeouts),
};

// what_if.ram and what_if.ssd, without their points (kWhatIfPointFields, one per point).
inline constexpr Field<WhatIfCurveStats> kWhatIfCurveFields[] = {
    F("budget", &WhatIfCurveStats::budget),
    F("sampling_rate", &WhatIfCurveStats::sampling_rate),
    F("sampled_reads", &WhatIfCurveStats::sampled_reads),
    F("working_set_bytes", &WhatIfCurveStats::working_set_bytes),
};
using WhatIfPoint = cache::WhatIf::Point;
inline constexpr Field<WhatIfPoint> kWhatIfPointFields[] = {
    F("fraction", &WhatIfPoint::fraction),
    F("bytes", &WhatIfPoint::bytes),
    F("hit_ratio", &WhatIfPoint::hit_ratio),
};

inline constexpr Field<WarmupStats> kWarmupFields[] = {
    F("requested", &WarmupStats::requested), F("done", &WarmupStats::done),
    F("bytes", &WarmupStats::bytes),         F("skipped", &WarmupStats::skipped),
    F("rejected", &WarmupStats::rejected),   F("not_stored", &WarmupStats::not_stored),
    F("problem", &WarmupStats::problem),     F("errors", &WarmupStats::errors),
    F("evicted", &WarmupStats::evicted),     F("last_sync", &WarmupStats::last_sync),
};

// One view's (views.SIDE), a sample per view (view="256").
inline constexpr Field<ViewStats> kViewFields[] = {
    F("files_served", &ViewStats::files_served,
      Counter("mmfs_view_files_served_total", "READs at offset 0 of files under @N, by view.")),
    F("bytes_served", &ViewStats::bytes_served,
      Counter("mmfs_view_served_bytes_total",
              "Bytes returned to READs of files under @N, by view.")),
    F("resized_loads", &ViewStats::resized_loads,
      Counter("mmfs_view_resized_loads_total",
              "Resized files a READ loaded from the view's shards, by view.")),
    F("resized_load_bytes", &ViewStats::resized_load_bytes,
      Counter("mmfs_view_resized_load_bytes_total",
              "Bytes of the resized files a READ loaded, by view.")),
    F("readahead_loads", &ViewStats::readahead_loads,
      Counter("mmfs_view_readahead_loads_total",
              "Resized files loaded ahead of their READ (readahead, hint), by view.")),
    F("readahead_load_bytes", &ViewStats::readahead_load_bytes,
      Counter("mmfs_view_readahead_load_bytes_total",
              "Bytes of the resized files loaded ahead, by view.")),
};

// The extents section (extent_types.h): extent reads on demand misses.
inline constexpr const char* kNeighbourHelp =
    "Neighbour bytes extent reads kept, by where and outcome.";
inline constexpr Field<ExtentCounters> kExtentFields[] = {
    F("mode", &ExtentCounters::mode),
    F("reads", &ExtentCounters::extents,
      Counter("mmfs_extent_reads_total",
              "Demand misses read as the shard extent around the sample.")),
    F("bytes", &ExtentCounters::extent_bytes,
      Counter("mmfs_extent_bytes_total", "Bytes of the extent reads.")),
    F("probes", &ExtentCounters::probes),
    F("last_extent_bytes", &ExtentCounters::last_extent_bytes),
    F("kept_ram.files", &ExtentCounters::kept_files),
    F("kept_ssd.files", &ExtentCounters::kept_ssd_files),
    F("used.files", &ExtentCounters::used_files),
    F("wasted.files", &ExtentCounters::wasted_files),
    F("kept_ram.bytes", &ExtentCounters::kept_bytes,
      Counter("mmfs_extent_neighbour_bytes_total", kNeighbourHelp, "outcome=\"kept_ram\"")),
    F("kept_ssd.bytes", &ExtentCounters::kept_ssd_bytes,
      Counter("mmfs_extent_neighbour_bytes_total", kNeighbourHelp, "outcome=\"kept_ssd\"")),
    F("used.bytes", &ExtentCounters::used_bytes,
      Counter("mmfs_extent_neighbour_bytes_total", kNeighbourHelp, "outcome=\"used\"")),
    F("wasted.bytes", &ExtentCounters::wasted_bytes,
      Counter("mmfs_extent_neighbour_bytes_total", kNeighbourHelp, "outcome=\"wasted\"")),
    F("used_share", &ExtentCounters::used_share),
    F("area_bytes", &ExtentCounters::area_bytes),
    F("area_budget", &ExtentCounters::area_budget),
    F("sample_reads.cost_unknown", &ExtentCounters::skipped_unknown),
    F("sample_reads.extent_too_small", &ExtentCounters::skipped_small),
    F("sample_reads.no_room", &ExtentCounters::skipped_no_room),
    F("sample_reads.neighbours_unused", &ExtentCounters::skipped_unused),
    F("sample_reads.busy", &ExtentCounters::skipped_busy),
};

// The fill section (fill_types.h); exported unless the fill is off.
inline constexpr Field<FillStats> kFillFields[] = {
    F("mode", &FillStats::mode),
    F("state", &FillStats::state),
    F("trigger", &FillStats::trigger),
    F("share", &FillStats::share),
    Derived<FillStats>(
        nullptr, [](const FillStats& f) -> uint64_t { return f.state == "filling"; },
        Gauge("mmfs_fill_filling", "1 while the fill fetches the dataset, else 0.")),
    F("target.files", &FillStats::target_files),
    F("target.bytes", &FillStats::target_bytes,
      Gauge("mmfs_fill_target_bytes",
            "Bytes the fill covers: the dataset, or the share kept when it does not fit.")),
    F("fetched.files", &FillStats::fetched_files),
    F("fetched.bytes", &FillStats::fetched_bytes,
      Counter("mmfs_fill_fetched_bytes_total", "Bytes the fill fetched and stored.")),
    F("present.files", &FillStats::present_files),
    F("present.bytes", &FillStats::present_bytes,
      Counter("mmfs_fill_present_bytes_total", "Bytes the fill found held already.")),
    F("failed_files", &FillStats::failed_files,
      Counter("mmfs_fill_failed_files_total",
              "Files the fill could not fetch (left to their readers).")),
    F("not_stored_files", &FillStats::not_stored_files),
    F("requests", &FillStats::requests),
    F("in_flight", &FillStats::in_flight,
      Gauge("mmfs_fill_in_flight", "The fill's requests in flight.")),
    F("in_flight_target", &FillStats::in_flight_target),
    F("bytes_per_second", &FillStats::bytes_per_second,
      Gauge("mmfs_fill_bytes_per_second", "The fill's throughput over its last window.")),
    F("seconds_left", &FillStats::seconds_left,
      Gauge("mmfs_fill_seconds_left", "The fill's time left at that rate.")),
    F("seconds", &FillStats::seconds),
    F("hosts.shared", &FillStats::shared),
};

// fill.hosts, a fill shared with the job's hosts; exported when shared. Its present_files and
// present_bytes are not in the document.
inline constexpr Field<FillHostsStats> kFillHostsFields[] = {
    F("chunks", &FillHostsStats::chunks),
    F("own_chunks", &FillHostsStats::own_chunks),
    F("claimed_chunks", &FillHostsStats::claimed_chunks,
      Counter("mmfs_fill_claimed_chunks_total",
              "Chunks of a fill shared with the job's hosts that this host read from the "
              "store.")),
    F("peer_chunks", &FillHostsStats::peer_chunks),
    F("cluster_only.chunks", &FillHostsStats::cluster_only_chunks),
    F("cluster_only.fetched_chunks", &FillHostsStats::cluster_only_fetched_chunks),
    F("cluster_only.fetched_bytes", &FillHostsStats::cluster_only_fetched_bytes,
      Counter("mmfs_fill_cluster_only_bytes_total",
              "Bytes past this host's share that it read from the store into the cluster "
              "alone, for the job's other hosts and its own readers.")),
    F("peer.files", &FillHostsStats::peer_files),
    F("peer.bytes", &FillHostsStats::peer_bytes,
      Counter("mmfs_fill_peer_bytes_total",
              "Bytes of a shared fill read from the cluster (another host fetched them).")),
    F("waited_out_chunks", &FillHostsStats::waited_out_chunks),
    F("demand_waits", &FillHostsStats::demand_waits,
      Counter("mmfs_fill_demand_waits_total",
              "Readers' misses of files another host was fetching, waited for in the cluster.")),
    F("demand_waits_served", &FillHostsStats::demand_waits_served,
      Counter("mmfs_fill_demand_waits_served_total",
              "Of those, misses found in the cluster after the wait (no store read).")),
};

}  // namespace mmfs::fs::stat_fields
