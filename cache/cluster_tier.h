// ClusterTier: a cache tier shared by every host of a training job, on memcached.
//
// The last tier of the stack (cache/tier_stack.h), asked after the SSD tier and before the
// origin: not through TieredCache's per-key chain but by the miss loader, a whole sample in one
// multi-get (one round trip per sample, not per file); what a host reads from the origin is
// written to the cluster (asynchronously, through a bounded queue, so a slow cluster never slows a reader).
// Keys are spread over the servers by libmemcached's consistent hashing (ketama): a server that
// fails is ejected from the ring after two failures and retried every few seconds, so losing one
// of N servers loses about 1/N of the tier.
//
// Values: item "mmfs/NS/KEY" holds a 24-byte header (magic, length, xxh3 of the whole value) and
// the first part of the value; values larger than one item continue in "mmfs/NS/KEY/1", "/2"...
// A value is served only if all its parts are there and the checksum matches; a damaged one is
// a miss, counted, and deleted. NS is the dataset's identity, so two datasets never collide.
// Values are not compressed: images (JPEG, PNG, WebP) already are, and captions are tiny.
//
// Every failure is a miss: a server down, slow (per-request timeout) or damaged sends the read
// to the origin with a counter and one log line per server state change, never an error.
//
// Marks: small items "mmfs/NS/mark/NAME" beside the values, for hosts that split work between
// them (the shared fill, fs/readahead/fill_share.h): memcached's atomic `add` is a claim that
// one host wins. A mark lives on the server its name up to the last '/' hashes to, so that
// "X/claim" and "X/done" share one.
//
// Thread-safety: all methods are thread-safe (a pool of memcached connections; one writer).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "cache/tier.h"

namespace mmfs::cache {

struct ClusterTierOptions {
  std::vector<std::string> servers;  // "host:port"
  std::string name_space;            // the dataset's identity
  int timeout_ms = 100;              // connect, send, receive: a slower server is a miss
  uint64_t max_queued_bytes = 64ull << 20;  // the fill queue; beyond it inserts are dropped
  size_t item_bytes = 1000 * 1024;   // under memcached's default 1 MiB item limit
  // The pool: concurrent requests at most (the miss threads' lookups, the fill's workers and
  // their claims, the writer).
  unsigned connections = 48;
};

struct ClusterServerHealth {
  std::string server;  // "host:port"
  bool up = true;      // its last request succeeded
  uint64_t requests = 0;
  uint64_t errors = 0;
  uint64_t timeouts = 0;
  std::chrono::steady_clock::time_point last_log{};  // of its last state-change log line
};

struct ClusterCounters {
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t errors = 0;    // failed requests other than timeouts (server down, protocol)
  uint64_t timeouts = 0;
  uint64_t damaged = 0;   // values that failed their checksum or missed a part
  uint64_t bytes_in = 0;  // read from the cluster
  uint64_t bytes_out = 0; // written to it
  uint64_t writes = 0;
  uint64_t dropped = 0;   // inserts dropped because the fill queue was full
  uint64_t queued_bytes = 0;
  std::vector<ClusterServerHealth> servers;
};

class ClusterTier final : public CacheTier {
 public:
  static Result<std::unique_ptr<ClusterTier>> Open(const ClusterTierOptions& options);
  ~ClusterTier() override;  // writes what is queued (bounded by the timeouts), then stops
  ClusterTier(const ClusterTier&) = delete;
  ClusterTier& operator=(const ClusterTier&) = delete;

  std::string_view name() const override { return "cluster"; }
  TierRole role() const override { return TierRole::kShared; }
  Blob Lookup(CacheKey key) override;
  // Queued; written by the background writer.
  void Insert(CacheKey key, Blob blob) override;
  TierCounters Counters() const override;

  // Multi-get for prefetch batches: the blobs of `keys` the cluster holds, in one round trip
  // per server (plus one for the parts of values larger than an item).
  std::unordered_map<CacheKey, Blob> LookupMany(const std::vector<CacheKey>& keys);
  ClusterCounters ClusterStats() const;
  // What the servers that answer can hold, in bytes: each one's memory (limit_maxbytes) plus its
  // extstore (extstore_limit_maxbytes), summed; nullopt if none answered. A server that does not
  // answer counts nothing, so the figure errs small. A connection of its own and one `stats`
  // request per server, each bounded by the timeout.
  std::optional<uint64_t> CapacityBytes() const;
  // Waits until everything queued so far is written (tests, shutdown).
  void Flush() override;

  // Writes `blob` now, not through the queue (the shared fill marks a chunk done only once its
  // files are in): true if every part was stored.
  bool InsertNow(CacheKey key, const Blob& blob);

  enum class MarkResult { kAdded, kExists, kFailed };
  // memcached `add` of mark `name` for `ttl`: kAdded if no one held it (this host now does),
  // kExists if someone does, kFailed if its server did not answer.
  MarkResult AddMark(const std::string& name, std::chrono::seconds ttl);
  // Sets mark `name` for `ttl` (0: until evicted); true if stored.
  bool SetMark(const std::string& name, std::chrono::seconds ttl);
  // Whether mark `name` is held; nullopt if its server did not answer.
  std::optional<bool> HasMark(const std::string& name);
  void DeleteMark(const std::string& name);
  // The server that holds mark `name` (ketama over every server given, up or not, so that every
  // host computes the same answer): "host:port" as given. Marks "X/..." share X's server.
  std::string ServerOfMark(const std::string& name) const;

  // The one server of `servers` that runs on this host (its host part is one of this host's
  // addresses, numeric, or its hostname); empty if none or more than one does.
  static std::string FindLocalServer(const std::vector<std::string>& servers);

  // Parses "host:port[,host:port...]" (also '+' as separator, for mount -o).
  static Result<std::vector<std::string>> ParseServers(const std::string& list);

 private:
  explicit ClusterTier(ClusterTierOptions options) : options_(std::move(options)) {}
  std::string ItemKey(CacheKey key, size_t part) const;
  // Checks a header item and the parts; nullptr if damaged or incomplete (and counts it).
  Blob Assemble(CacheKey key, const std::string& first, void* client);
  void WriterLoop();
  bool Write(CacheKey key, const Blob& blob, void* client);
  std::string MarkKey(const std::string& name) const;
  // The key that places mark `name` on a server (memcached's *_by_key group key).
  std::string MarkGroup(const std::string& name) const;
  // Counts a request's outcome for the server holding `item_key`; logs state changes.
  void Note(void* client, const std::string& item_key, int rc);

  const ClusterTierOptions options_;
  void* master_ = nullptr;  // memcached_st*, owned
  void* pool_ = nullptr;    // memcached_pool_st*, owned
  // Ketama over every server, never changed by failures: which server a mark's name hashes to.
  // Guarded by owner_mu_ (libmemcached's lookups are not documented as thread-safe).
  mutable std::mutex owner_mu_;
  void* owner_map_ = nullptr;  // memcached_st*, owned

  std::atomic<uint64_t> lookups_{0}, hits_{0}, misses_{0}, inserts_{0}, errors_{0}, timeouts_{0},
      damaged_{0}, bytes_in_{0}, bytes_out_{0}, writes_{0}, dropped_{0};

  mutable std::mutex health_mu_;
  std::map<std::string, ClusterServerHealth> health_;  // guarded by health_mu_

  mutable std::mutex queue_mu_;
  std::condition_variable queue_cv_, drained_cv_;
  std::deque<std::pair<CacheKey, Blob>> queue_;  // guarded by queue_mu_
  uint64_t queued_bytes_ = 0;                    // guarded by queue_mu_
  bool writing_ = false;                         // guarded by queue_mu_
  bool stop_ = false;                            // guarded by queue_mu_
  std::thread writer_;
};

}  // namespace mmfs::cache
