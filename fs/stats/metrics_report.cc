#include "fs/stats/metrics_report.h"

#include <sys/resource.h>

namespace mmfs::fs {

void ReportMetrics(const Metrics& metrics, StatsSnapshot* out) {
  out->uptime_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - metrics.start).count();
  struct rusage ru {};
  if (::getrusage(RUSAGE_SELF, &ru) == 0) {
    auto seconds = [](const timeval& tv) {
      return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
    };
    out->cpu = {seconds(ru.ru_utime), seconds(ru.ru_stime)};
  }
  for (int i = 0; i < static_cast<int>(Op::kCount); ++i) {
    const OpStats& o = metrics.op(static_cast<Op>(i));
    out->requests.push_back({std::string(OpName(static_cast<Op>(i))), o.count(), o.errors(),
                             o.PercentileMicros(0.5), o.PercentileMicros(0.99)});
  }
  out->bytes_served = metrics.bytes_served.load(std::memory_order_relaxed);
  out->transport = metrics.Transport();
  out->checksum_errors = metrics.checksum_failures.load(std::memory_order_relaxed);
  out->io_errors = metrics.io_errors.load(std::memory_order_relaxed);
  out->listed_entries = metrics.listed_entries.load(std::memory_order_relaxed);
  out->largest_readdir_request = metrics.largest_readdir_request.load(std::memory_order_relaxed);
  out->memory.page_cache_drops = metrics.page_cache_drops.load(std::memory_order_relaxed);
  out->memory.page_cache_drops_skipped =
      metrics.page_cache_drops_skipped.load(std::memory_order_relaxed);
  PushStats& pushed = out->readahead.pushed;
  pushed.queue_full = metrics.push_queue_full.load(std::memory_order_relaxed);
  pushed.waited = metrics.push_waited.load(std::memory_order_relaxed);
  pushed.wait_skipped = metrics.push_wait_skipped.load(std::memory_order_relaxed);
  pushed.wait_expired = metrics.push_wait_expired.load(std::memory_order_relaxed);
}

}  // namespace mmfs::fs
