// The field tables of the stats document's memory section (MemoryStats, stats.h; the budget and
// the governor's counters, fs/memory): its JSON keys and Prometheus metrics, each written once,
// as stat_fields.h does for the rest. By hand in stats_format.cc, stats_parse.cc and
// stats_prometheus.cc: the budget's source, limit source and explanation (names and text), the
// memory limit's metric (its source is a label), the pressure level, the PSI value (present
// only when measured) and the sample's parts read back from the differences the document gives.
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

// The memory section's own values.
inline constexpr Field<MemoryStats> kMemoryFields[] = {
    F("rss_bytes", &MemoryStats::rss_bytes,
      Gauge("mmfs_resident_memory_bytes", "Resident set size of the daemon.")),
    F("rss_file_bytes", &MemoryStats::rss_file_bytes,
      Gauge("mmfs_resident_file_memory_bytes",
            "Of the daemon's resident set, the pages of mapped files (its code, the index).")),
    F("hold_once.dropped_files", &MemoryStats::page_cache_drops),
    F("hold_once.skipped", &MemoryStats::page_cache_drops_skipped),
    F("index.bytes", &MemoryStats::index_bytes),
    F("index.locked", &MemoryStats::index_locked,
      Gauge("mmfs_index_locked", "1 if the index's pages are locked in memory once read.")),
    F("heap.huge_pages", &MemoryStats::heap_huge_pages,
      Gauge("mmfs_heap_huge_pages", "1 if the daemon's malloc heap is on transparent huge pages.")),
    F("heap.prefaulting", &MemoryStats::heap_prefaulting,
      Gauge("mmfs_heap_prefaulting",
            "1 if a thread of the daemon populates its heap ahead of the allocator.")),
    F("heap.prefaulted_bytes", &MemoryStats::heap_prefaulted_bytes,
      Counter("mmfs_heap_prefaulted_bytes_total",
              "Bytes of the daemon's heap populated ahead of the allocator.")),
};

// memory.budget, with a governor.
inline constexpr const char* kBudgetHelp = "Budgets planned at mount, by part.";
inline constexpr Field<MemoryBudget> kBudgetFields[] = {
    F("clamped", &MemoryBudget::clamped,
      Gauge("mmfs_memory_budget_clamped",
            "1 if --ram-cache or --memory did not fit and was lowered.")),
    Derived<MemoryBudget>(
        nullptr, [](const MemoryBudget& b) -> uint64_t { return b.shared_limit(); },
        Gauge("mmfs_memory_shared_limit",
              "1 in shared-limit mode (--memory, or by default under a memory cgroup's limit).")),
    F("ram_cache_bytes", &MemoryBudget::ram_cache_bytes,
      Gauge("mmfs_memory_budget_bytes", kBudgetHelp, "part=\"ram_cache\"")),
    F("prefetch_bytes", &MemoryBudget::prefetch_bytes,
      Gauge("mmfs_memory_budget_bytes", kBudgetHelp, "part=\"prefetch\"")),
    F("read_buffer_bytes", &MemoryBudget::read_buffer_bytes,
      Gauge("mmfs_memory_budget_bytes", kBudgetHelp, "part=\"read_buffer\"")),
    F("fill_bytes", &MemoryBudget::fill_bytes,
      Gauge("mmfs_memory_budget_bytes", kBudgetHelp, "part=\"fill\"")),
    F("reserved_bytes", &MemoryBudget::reserved_bytes,
      Gauge("mmfs_memory_budget_bytes", kBudgetHelp, "part=\"reserved\"")),
    F("memory_bytes", &MemoryBudget::memory_bytes,
      Gauge("mmfs_memory_budget_bytes", kBudgetHelp, "part=\"memory\"")),
    F("page_cache_bytes", &MemoryBudget::page_cache_bytes,
      Gauge("mmfs_memory_budget_bytes", kBudgetHelp, "part=\"page_cache\"")),
    F("limit_bytes", &MemoryBudget::limit_bytes),  // exported by hand: its source is a label
    F("cgroup", &MemoryBudget::cgroup_dir),
    F("in_use_bytes", &MemoryBudget::in_use_bytes),
    F("explicit_ram", &MemoryBudget::explicit_ram),
    F("requested_ram_bytes", &MemoryBudget::requested_ram_bytes),
    F("requested_memory_bytes", &MemoryBudget::requested_memory_bytes),
    F("memory_given", &MemoryBudget::memory_given),
    F("index_counted_as_read", &MemoryBudget::index_counted_as_read),
};

// memory.pressure holds three tables' fields: the latest sample's, the governor's own and the
// targets in force.
inline constexpr Field<MemorySample> kSampleFields[] = {
    Derived<MemorySample>(
        "working_bytes", [](const MemorySample& m) { return m.working_bytes(); },
        Gauge("mmfs_memory_working_bytes",
              "Working set under the limit (usage less inactive file pages).")),
    Derived<MemorySample>(
        "unreclaimable_bytes", [](const MemorySample& m) { return m.unreclaimable_bytes(); },
        Gauge("mmfs_memory_unreclaimable_bytes",
              "Memory reclaim cannot take back (no page cache, no reclaimable kernel objects); "
              "what the governor judges in shared-limit mode.")),
    F("kernel_reclaimable_bytes", &MemorySample::kernel_reclaimable_bytes,
      Gauge("mmfs_memory_kernel_reclaimable_bytes",
            "Reclaimable kernel objects under the limit (dentries, inodes; on cgroup v1 all "
            "kernel memory).")),
    F("usage_bytes", &MemorySample::usage_bytes),
    F("limit_events", &MemorySample::limit_events),
    F("oom_kills", &MemorySample::oom_kills),
};

inline constexpr Field<GovernorCounters> kGovernorFields[] = {
    F("samples", &GovernorCounters::samples),
    F("shrinks", &GovernorCounters::shrinks,
      Counter("mmfs_memory_shrinks_total",
              "Times memory pressure made the daemon release cache or buffer memory.")),
};

inline constexpr const char* kTargetHelp = "Budgets in force now, by part.";
inline constexpr Field<MemoryTargets> kTargetFields[] = {
    F("ram_cache_bytes", &MemoryTargets::ram_cache_bytes,
      Gauge("mmfs_memory_target_bytes", kTargetHelp, "part=\"ram_cache\"")),
    F("prefetch_bytes", &MemoryTargets::prefetch_bytes,
      Gauge("mmfs_memory_target_bytes", kTargetHelp, "part=\"prefetch\"")),
    F("read_buffer_bytes", &MemoryTargets::read_buffer_bytes,
      Gauge("mmfs_memory_target_bytes", kTargetHelp, "part=\"read_buffer\"")),
    F("push", &MemoryTargets::push),
};

}  // namespace mmfs::fs::stat_fields
