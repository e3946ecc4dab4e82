#include "fs/stats/metrics.h"

#include <sys/resource.h>

#include <bit>

#include "fs/stats/stats.h"

namespace mmfs::fs {

std::string_view OpName(Op op) {
  switch (op) {
    case Op::kLookup: return "lookup";
    case Op::kGetattr: return "getattr";
    case Op::kReaddir: return "readdir";
    case Op::kReadlink: return "readlink";
    case Op::kOpen: return "open";
    case Op::kRead: return "read";
    case Op::kStatfs: return "statfs";
    case Op::kGetxattr: return "getxattr";
    case Op::kListxattr: return "listxattr";
    case Op::kWrite: return "write";
    case Op::kIoctl: return "ioctl";
    case Op::kOpendir: return "opendir";
    case Op::kCount: break;
  }
  return "unknown";
}

void OpStats::Record(uint64_t micros, bool ok) {
  count_.fetch_add(1, std::memory_order_relaxed);
  if (!ok) errors_.fetch_add(1, std::memory_order_relaxed);
  int bucket = micros == 0 ? 0 : std::bit_width(micros);
  if (bucket >= kBuckets) bucket = kBuckets - 1;
  buckets_[static_cast<size_t>(bucket)].fetch_add(1, std::memory_order_relaxed);
}

uint64_t OpStats::PercentileMicros(double q) const {
  uint64_t total = 0;
  for (const auto& b : buckets_) total += b.load(std::memory_order_relaxed);
  if (total == 0) return 0;
  auto target = static_cast<uint64_t>(q * static_cast<double>(total));
  if (target == 0) target = 1;
  uint64_t seen = 0;
  for (int i = 0; i < kBuckets; ++i) {
    seen += buckets_[static_cast<size_t>(i)].load(std::memory_order_relaxed);
    if (seen >= target) return i == 0 ? 1 : (uint64_t{1} << i);
  }
  return uint64_t{1} << (kBuckets - 1);
}

void Metrics::NoteListing(size_t request_bytes, uint64_t entries) {
  listed_entries.fetch_add(entries, std::memory_order_relaxed);
  uint64_t seen = largest_readdir_request.load(std::memory_order_relaxed);
  while (request_bytes > seen &&
         !largest_readdir_request.compare_exchange_weak(seen, request_bytes,
                                                        std::memory_order_relaxed)) {
  }
}

void Metrics::SetTransport(bool ring, std::string why) {
  std::lock_guard<std::mutex> lock(transport_mu_);
  ring_ = ring;
  why_ = std::move(why);
}

void Metrics::Report(StatsSnapshot* out) const {
  out->uptime_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  struct rusage ru {};
  if (::getrusage(RUSAGE_SELF, &ru) == 0) {
    auto seconds = [](const timeval& tv) {
      return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
    };
    out->cpu = {seconds(ru.ru_utime), seconds(ru.ru_stime)};
  }
  for (int i = 0; i < static_cast<int>(Op::kCount); ++i) {
    const OpStats& o = op(static_cast<Op>(i));
    out->requests.push_back({std::string(OpName(static_cast<Op>(i))), o.count(), o.errors(),
                             o.PercentileMicros(0.5), o.PercentileMicros(0.99)});
  }
  out->bytes_served = bytes_served.load(std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(transport_mu_);
    out->transport.name = ring_ ? "io_uring" : "classic";
    out->transport.why = why_;
  }
  out->transport.ring_requests = ring_requests.load(std::memory_order_relaxed);
  out->checksum_errors = checksum_failures.load(std::memory_order_relaxed);
  out->io_errors = io_errors.load(std::memory_order_relaxed);
  out->listed_entries = listed_entries.load(std::memory_order_relaxed);
  out->largest_readdir_request = largest_readdir_request.load(std::memory_order_relaxed);
  out->memory.page_cache_drops = page_cache_drops.load(std::memory_order_relaxed);
  out->memory.page_cache_drops_skipped = page_cache_drops_skipped.load(std::memory_order_relaxed);
  PushStats& pushed = out->readahead.pushed;
  pushed.queue_full = push_queue_full.load(std::memory_order_relaxed);
  pushed.waited = push_waited.load(std::memory_order_relaxed);
  pushed.wait_skipped = push_wait_skipped.load(std::memory_order_relaxed);
  pushed.wait_expired = push_wait_expired.load(std::memory_order_relaxed);
}

}  // namespace mmfs::fs
