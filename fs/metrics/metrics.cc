#include "fs/metrics/metrics.h"

#include <bit>

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

TransportStats Metrics::Transport() const {
  TransportStats t;
  {
    std::lock_guard<std::mutex> lock(transport_mu_);
    t.name = ring_ ? "io_uring" : "classic";
    t.why = why_;
  }
  t.ring_requests = ring_requests.load(std::memory_order_relaxed);
  return t;
}

}  // namespace mmfs::fs
