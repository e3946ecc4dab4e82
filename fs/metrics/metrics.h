// Request counters and latency histograms of the filesystem core, the numbers `mmfs stats` shows.
//
// The lowest layer of the core (fs/metrics): the rooms that count (the origin reader, the
// Filesystem, the FUSE layer) bump these counters and include nothing above them. Their part of
// the stats snapshot is read out above, in fs/stats (ReportMetrics, fs/stats/metrics_report.h).
//
// Counting is a few relaxed atomic increments per request; percentiles come from power-of-two
// microsecond buckets (the reported p50/p99 is the upper edge of the bucket, within 2x).
//
// Ownership: the Filesystem owns its Metrics; OpTimer borrows one for a request's lifetime.
// Thread-safety: all methods are thread-safe.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

namespace mmfs::fs {

// How requests reach the daemon (fs/fuse/transport.h), chosen at mount. ring_requests counts
// the requests that came over io_uring, so a ring chosen but not started shows 0.
struct TransportStats {
  std::string name = "classic";  // "io_uring" or "classic" (/dev/fuse)
  std::string why;               // the mount's reason, one line
  uint64_t ring_requests = 0;
};

enum class Op : int {
  kLookup,
  kGetattr,
  kReaddir,
  kReadlink,
  kOpen,
  kRead,
  kStatfs,
  kGetxattr,
  kListxattr,
  kWrite,  // any modifying request, all refused with EROFS
  kIoctl,  // answered "not a terminal": Python's open() asks isatty() of every file
  kOpendir,  // only until the kernel takes ENOSYS as "never again" (no_opendir)
  kCount,
};

std::string_view OpName(Op op);

class OpStats {
 public:
  static constexpr int kBuckets = 32;
  void Record(uint64_t micros, bool ok);
  uint64_t count() const { return count_.load(std::memory_order_relaxed); }
  uint64_t errors() const { return errors_.load(std::memory_order_relaxed); }
  // Upper edge of the bucket holding quantile q in (0, 1], in microseconds; 0 with no samples.
  uint64_t PercentileMicros(double q) const;

 private:
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> errors_{0};
  std::array<std::atomic<uint64_t>, kBuckets> buckets_{};
};

class Metrics {
 public:
  OpStats& op(Op o) { return ops_[static_cast<int>(o)]; }
  const OpStats& op(Op o) const { return ops_[static_cast<int>(o)]; }

  std::atomic<uint64_t> bytes_served{0};  // in READ replies
  // Files a reader asked for that failed their checksum, and failed reads of the shards
  // (OriginReader::CountError). Push counters live in the prefetcher.
  std::atomic<uint64_t> checksum_failures{0};
  std::atomic<uint64_t> io_errors{0};
  // Hold once (fs/fuse/page_cache_dropper.h): files the RAM tier holds whose pages were dropped
  // from the mount's page cache, and drops not done (queue full, inode gone).
  std::atomic<uint64_t> page_cache_drops{0};
  std::atomic<uint64_t> page_cache_drops_skipped{0};
  // The pushers' queue (PushStats says what each counts).
  std::atomic<uint64_t> push_queue_full{0}, push_waited{0}, push_wait_skipped{0},
      push_wait_expired{0};
  // Directory entries in READDIR(PLUS) replies, and the largest buffer the kernel asked for
  // (4 KiB on older kernels; newer ones size it from getdents' buffer): entries per reply is
  // listed_entries / readdir requests.
  std::atomic<uint64_t> listed_entries{0};
  std::atomic<uint64_t> largest_readdir_request{0};
  // Requests that came over io_uring (all but FORGET, which has no reply).
  std::atomic<uint64_t> ring_requests{0};
  const std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();

  // A READDIR(PLUS) reply of `entries` entries to a request for `request_bytes`.
  void NoteListing(size_t request_bytes, uint64_t entries);
  // The transport the mount chose and why (TransportStats), set once before requests come.
  void SetTransport(bool ring, std::string why);
  // That choice, and the requests that came over io_uring.
  TransportStats Transport() const;

 private:
  std::array<OpStats, static_cast<int>(Op::kCount)> ops_;
  mutable std::mutex transport_mu_;
  bool ring_ = false;     // guarded by transport_mu_
  std::string why_;       // guarded by transport_mu_
};

// Records one request's latency and outcome when it goes out of scope.
class OpTimer {
 public:
  OpTimer(Metrics& metrics, Op op)
      : stats_(&metrics.op(op)), start_(std::chrono::steady_clock::now()) {}
  // Moved with a request that is answered later (a queued READ): recorded once, by the last
  // owner, when it is answered.
  OpTimer(OpTimer&& other) noexcept
      : stats_(std::exchange(other.stats_, nullptr)), start_(other.start_), ok_(other.ok_) {}
  OpTimer& operator=(OpTimer&&) = delete;
  OpTimer(const OpTimer&) = delete;
  ~OpTimer() {
    if (stats_ == nullptr) return;
    auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                  std::chrono::steady_clock::now() - start_)
                  .count();
    stats_->Record(static_cast<uint64_t>(us), ok_);
  }
  void Fail() { ok_ = false; }
  std::chrono::steady_clock::time_point start() const { return start_; }

 private:
  OpStats* stats_;
  std::chrono::steady_clock::time_point start_;
  bool ok_ = true;
};

}  // namespace mmfs::fs
