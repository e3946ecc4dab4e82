#include "fs/stats/stats_parse.h"

#include <gtest/gtest.h>

#include "fs/stats/stats_format.h"
#include "fs/stats/stats_prometheus.h"

namespace mmfs::fs {
namespace {

// A snapshot with every field set, each to a value of its own: a field the parser forgot, or
// read into the wrong place, changes the rendered document.
StatsSnapshot Filled() {
  uint64_t n = 1;
  auto next = [&] { return n++ * 7; };
  StatsSnapshot s;
  s.dataset = {"/data/ds.mmfs", next(), next(), next(), next(), next()};
  s.uptime_seconds = 12.5;
  s.cpu = {1.25, 0.5};
  s.transport = {"io_uring", "io_uring: the kernel and libfuse offer it", next()};
  s.requests = {{"lookup", next(), next(), next(), next()}, {"read", next(), next(), next(), next()}};
  s.bytes_served = next();
  for (const char* name : {"ram", "ssd", "cluster"}) {
    cache::TierCounters c{next(), next(), next(), next(), next(), next(), next(),
                          next(), next(), next(), next(), next(), next(), name[0] == 's',
                          name[0] == 's' ? "the cache disk is at its free-space guard" : ""};
    s.tiers.push_back({name, c});
  }
  s.read_buffer = {next(), next(), next(), next(), next()};
  s.origin.demand_reads = next();
  s.origin.demand_bytes = next();
  s.origin.member_bytes = s.origin.demand_bytes / 4;
  s.origin.neighbour_bytes = s.origin.demand_bytes / 8;
  s.origin.prefetch_reads = next();
  s.origin.prefetch_bytes = next();
  s.origin.warmup_reads = next();
  s.origin.warmup_bytes = next();
  s.origin.errors = next();
  s.origin.coalesced = next();
  s.origin.queued = {.reads = next(), .late = next(), .waiting = next(), .running = next(),
                     .threads = next()};
  s.origin.streamed = {next(), next(), next(), next()};
  s.origin.rereads = {next(), next()};
  s.origin.cost = {true, true, 0.005, 2e8, next(), next()};
  origin::RemoteStatsSnapshot remote;
  remote.url = "https://store.example/ds.mmfs";
  remote.requests = next();
  remote.retries = next();
  remote.bytes = next();
  remote.errors = next();
  remote.failed_fast = next();
  for (uint64_t& bucket : remote.latency) bucket = next();
  remote.latency_sum_us = next();
  s.origin.remote = remote;
  s.extents = {.extents = next(), .extent_bytes = next(), .probes = next(),
               .kept_files = next(), .kept_bytes = next(), .kept_ssd_files = next(),
               .kept_ssd_bytes = next(), .used_files = next(), .used_bytes = next(),
               .wasted_files = next(), .wasted_bytes = next(), .skipped_unknown = next(),
               .skipped_small = next(), .skipped_no_room = next(), .skipped_unused = next(),
               .skipped_busy = next(), .area_bytes = next(), .area_budget = next(),
               .used_share = 0.375, .last_extent_bytes = next(), .mode = "1 MiB"};
  s.readahead.enabled = true;
  s.readahead.patterns = {{"hint", {next(), next(), next(), next(), next()}},
                          {"sequential", {next(), next(), next(), next(), next()}}};
  s.readahead.runs_detected = next();
  s.readahead.jobs_dropped = next();
  s.readahead.hint_available = true;
  s.readahead.hint = {next(), next(), next(), next(), next(), next()};
  s.readahead.pushed = {next(), next(), next(), next()};
  s.readahead.buffer_bytes = next();
  s.readahead.buffer_budget = next();
  cache::ClusterCounters cl{next(), next(), next(), next(), next(),
                            next(), next(), next(), next(), next(), {}};
  cl.servers.push_back({"10.0.0.1:11211", true, next(), next(), next(), {}});
  cl.servers.push_back({"10.0.0.2:11211", false, next(), next(), next(), {}});
  s.cluster = cl;
  s.what_if.ram = {next(), 0.25, next(), next(), {{0.5, next(), 0.125}, {1.0, next(), 0.5}}};
  s.what_if.ssd = WhatIfCurveStats{next(), 1.0, next(), next(), {{2.0, next(), 0.75}}};
  s.what_if.history = {{10.0, {{next(), next()}, {next(), next()}}}, {20.0, {{next(), next()}}}};
  s.warmup = {next(), next(), next(), next(), next(), next(), next(), next(), "token-3",
              "the cache directory /c was removed"};
  s.checksum_errors = next();
  s.io_errors = next();
  s.listed_entries = next();
  s.largest_readdir_request = next();
  s.memory.rss_bytes = next();
  s.memory.rss_file_bytes = next();
  s.memory.page_cache_drops = next();
  s.memory.page_cache_drops_skipped = next();
  s.memory.index_bytes = next();
  s.memory.index_locked = true;
  s.memory.heap_huge_pages = true;
  s.memory.heap_prefaulting = true;
  s.memory.heap_prefaulted_bytes = 96ull << 20;
  s.memory.governed = true;
  MemoryBudget& b = s.memory.plan;
  b.limit_bytes = next();
  b.limit_source = LimitSource::kCgroupV1;
  b.cgroup_dir = "/sys/fs/cgroup/memory/job";
  b.reserved_bytes = next();
  b.in_use_bytes = next();
  b.ram_cache_bytes = next();
  b.prefetch_bytes = next();
  b.read_buffer_bytes = next();
  b.fill_bytes = next();
  b.memory_bytes = next();
  b.requested_memory_bytes = next();
  b.page_cache_bytes = next();
  b.memory_given = true;
  b.index_counted_as_read = true;
  b.explicit_ram = true;
  b.requested_ram_bytes = next();
  b.clamped = true;
  GovernorCounters& g = s.memory.governor;
  g.level = Pressure::kHigh;
  g.samples = next();
  g.shrinks = next();
  g.last.usage_bytes = 1000000;
  g.last.reclaimable_bytes = 300000;
  g.last.active_file_bytes = 200000;
  g.last.kernel_reclaimable_bytes = 50000;
  g.last.limit_events = next();
  g.last.oom_kills = next();
  g.last.has_psi = true;
  g.last.psi_some_avg10 = 1.5;
  g.targets = {next(), next(), next(), false};
  s.views = {{128, next(), next(), next(), next(), next(), next()},
             {256, next(), next(), next(), next(), next(), next()}};
  s.readers.enabled = true;
  s.readers.window_seconds = 10;
  s.readers.verdict = ReaderVerdict::kIoBound;
  s.readers.advice = "warm it up";
  ReaderRow row;
  row.pid = 42;
  row.comm = "pt_data_worker";
  row.threads = 2;
  row.processes = 1;
  row.wall_seconds = 10;
  row.stall_seconds = 4;
  row.cpu_seconds = 3;
  row.requests = next();
  row.served_bytes = next();
  row.verdict = ReaderVerdict::kIoBound;
  s.readers.rows = {row};
  s.readers.total = row;
  s.readers.by_command = {{"pt_data_worker", 4, 3, next(), next()}};
  return s;
}

TEST(StatsParseTest, EveryFieldOfTheDocumentComesBack) {
  const nlohmann::json j = StatsToJson(Filled());
  auto back = StatsFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(StatsToJson(*back).dump(2), j.dump(2));
  // And the typed fields the CLI uses are where they belong.
  EXPECT_EQ(back->tiers.size(), 3u);
  EXPECT_EQ(back->tiers[1].name, "ssd");
  EXPECT_TRUE(back->tiers[1].counters.admission_paused);
  EXPECT_EQ(back->tiers[1].counters.problem, "the cache disk is at its free-space guard");
  EXPECT_EQ(back->memory.plan.limit_source, LimitSource::kCgroupV1);
  EXPECT_EQ(back->memory.governor.level, Pressure::kHigh);
  EXPECT_FALSE(back->memory.governor.targets.push);
  EXPECT_TRUE(back->memory.heap_huge_pages);
  EXPECT_TRUE(back->memory.heap_prefaulting);
  EXPECT_EQ(back->memory.heap_prefaulted_bytes, 96ull << 20);
  ASSERT_TRUE(back->cluster.has_value());
  EXPECT_FALSE(back->cluster->servers[1].up);
  EXPECT_EQ(back->warmup.last_sync, "token-3");
  EXPECT_EQ(back->warmup.not_stored, Filled().warmup.not_stored);
  EXPECT_EQ(back->warmup.problem, "the cache directory /c was removed");
  EXPECT_EQ(back->extents.mode, "1 MiB");
  EXPECT_EQ(back->extents.skipped_unused, Filled().extents.skipped_unused);
  EXPECT_TRUE(back->origin.cost.latency_bound);
  ASSERT_TRUE(back->origin.remote.has_value());
  EXPECT_EQ(back->origin.remote->url, "https://store.example/ds.mmfs");
  EXPECT_EQ(back->origin.remote->latency, Filled().origin.remote->latency);
  EXPECT_EQ(back->origin.remote->failed_fast, Filled().origin.remote->failed_fast);
  EXPECT_EQ(back->origin.queued.late, Filled().origin.queued.late);
  EXPECT_EQ(back->origin.queued.threads, Filled().origin.queued.threads);
}

TEST(StatsParseTest, ARemoteOriginIsRenderedAsAHistogram) {
  StatsSnapshot s;
  origin::RemoteStatsSnapshot r;
  r.url = "http://127.0.0.1:9/b/ds";
  r.requests = 10;
  r.retries = 2;
  r.latency[3] = 6;   // <= 2 ms
  r.latency[6] = 4;   // <= 16 ms
  r.latency_sum_us = 50000;
  s.origin.remote = r;
  const nlohmann::json j = StatsToJson(s);
  EXPECT_EQ(j["origin"]["remote"]["latency_us"]["p50"], 2000u);
  EXPECT_EQ(j["origin"]["remote"]["latency_us"]["p99"], 16000u);
  const std::string prom = StatsPrometheus(s);
  EXPECT_NE(prom.find("mmfs_remote_retries_total{dataset=\"\",url=\"http://127.0.0.1:9/b/ds\"} 2"),
            std::string::npos)
      << prom;
  // Cumulative buckets: 6 at 2 ms, all 10 from 16 ms on, and the count.
  EXPECT_NE(prom.find("le=\"0.002\"} 6"), std::string::npos) << prom;
  EXPECT_NE(prom.find("le=\"0.016\"} 10"), std::string::npos) << prom;
  EXPECT_NE(prom.find("le=\"+Inf\"} 10"), std::string::npos) << prom;
  EXPECT_NE(prom.find("mmfs_remote_request_seconds_sum{dataset=\"\",url=\"http://127.0.0.1:9/b/ds\"} 0.05"),
            std::string::npos);
  // A local origin has none of it.
  EXPECT_TRUE(StatsToJson(StatsSnapshot{})["origin"]["remote"].is_null());
  EXPECT_EQ(StatsPrometheus(StatsSnapshot{}).find("mmfs_remote"), std::string::npos);
}

TEST(StatsParseTest, ASnapshotWithNothingOptionalComesBackWithout) {
  StatsSnapshot s;
  s.tiers.push_back({"ram", {}});
  const nlohmann::json j = StatsToJson(s);
  auto back = StatsFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_FALSE(back->cluster.has_value());
  EXPECT_FALSE(back->what_if.ssd.has_value());
  EXPECT_FALSE(back->memory.governed);
  EXPECT_FALSE(back->readers.enabled);
  EXPECT_EQ(StatsToJson(*back).dump(), j.dump());
}

TEST(StatsParseTest, MissingPartsReadAsDefaultsAndWrongKindsAreNamed) {
  // A daemon older than this mmfs: no readers, views, memory or listing sections.
  auto old = StatsFromJson(nlohmann::json::parse(
      R"({"dataset": {"files": 3}, "cache": {"tiers": [{"name": "ram", "hits": 2}]},
          "origin": {"reads": 5, "bytes": 50}})"));
  ASSERT_TRUE(old.ok()) << old.status().message();
  EXPECT_EQ(old->dataset.files, 3u);
  EXPECT_EQ(old->tiers.at(0).counters.hits, 2u);
  EXPECT_EQ(old->origin.demand_reads, 5u);
  EXPECT_EQ(old->origin.demand_bytes, 50u);
  EXPECT_EQ(old->origin.asked_bytes(), 50u) << "no split: all asked";
  EXPECT_TRUE(old->views.empty());
  // A daemon from before shared-limit mode was a default: its budget has no memory_given, and
  // only --memory led to the mode; a newer one names the default "shared".
  for (const auto& [source, given] : {std::pair<const char*, bool>{"memory", true},
                                      std::pair<const char*, bool>{"shared", false}}) {
    nlohmann::json doc = nlohmann::json::parse(
        R"({"memory": {"rss_bytes": 1, "budget": {"memory_bytes": 100, "limit_bytes": 200}}})");
    doc["memory"]["budget"]["source"] = source;
    auto back = StatsFromJson(doc);
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_TRUE(back->memory.plan.shared_limit());
    EXPECT_EQ(back->memory.plan.memory_given, given) << source;
  }

  auto bad = StatsFromJson(nlohmann::json::parse(R"({"dataset": {"files": "three"}})"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kCorruption);
  EXPECT_FALSE(StatsFromJson(nlohmann::json::array()).ok());
}

// What a request costs the daemon: its CPU time over the requests that reached it.
TEST(StatsSnapshotTest, CpuPerThousandRequestsCountsEveryOperation) {
  StatsSnapshot s;
  s.cpu = {1.5, 0.5};
  EXPECT_EQ(s.CpuMillisPerThousandRequests(), 0.0);  // no request yet
  s.requests = {{"read", 1500, 0, 10, 20}, {"lookup", 500, 0, 5, 9}};
  EXPECT_DOUBLE_EQ(s.CpuMillisPerThousandRequests(), 1000.0);  // 2 s over 2,000 requests
  const std::string prom = StatsPrometheus(s);
  EXPECT_NE(prom.find("mmfs_cpu_seconds_total{dataset=\"\",mode=\"system\"} 0.5"),
            std::string::npos)
      << prom;
}

TEST(StatsSnapshotTest, TheTransportIsRenderedForPeopleAndPrometheus) {
  StatsSnapshot s;
  s.transport = {"io_uring", "why", 1234};
  const std::string prom = StatsPrometheus(s);
  EXPECT_NE(prom.find("mmfs_transport_info{dataset=\"\",transport=\"io_uring\"} 1"),
            std::string::npos)
      << prom;
  EXPECT_NE(prom.find("mmfs_ring_requests_total{dataset=\"\"} 1234"), std::string::npos);
}

}  // namespace
}  // namespace mmfs::fs
