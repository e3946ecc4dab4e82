// HttpOrigin: the shards of a dataset on a web server or an object store, read with ranged GETs.
//
// Shard NAME of a tree in place P is the object BASE_URL/P/NAME (BASE_URL/NAME for the
// dataset's own tree). AddTree checks each shard as LocalFileOrigin does, over the network, with
// one ranged GET of its magic bytes (16 shards at a time): its size (Content-Range), its magic,
// that the server honours ranges, and pins its ETag.
// Every later read is a GET of exactly the bytes asked for (Range, expecting 206 and that many
// bytes) sent with If-Match: the pinned ETag; a 412 or another ETag is an error naming the shard
// "replaced under a running mount", never bytes of two versions. A server that sends no ETag is
// read without that check.
//
// Requests that fail for a reason worth another try (RetryPolicy: timeouts, connection errors,
// 5xx, 429) are tried again with backoff, within the policy's total time or the thread's READ
// deadline (read_deadline.h), whichever ends first, then fail with an IoError naming the URL.
// A range a READ's load kept failing for most of the budget fails again at once for a few seconds
// (FailedRanges), so that the kernel's second READ and the other readers of those bytes do not
// wait out the budget again; nothing else is sticky. What it did is counted (RemoteStats).
//
// The transport decides how requests go out: CurlTransport for a real server (plain HTTP(S), or
// SigV4-signed for S3: s3_origin.h), a fake in tests.
//
// It has none of the OriginAdvice capabilities (there is no page cache under it).
//
// Ownership: owns its transport; ReadSpan's bytes are the caller's.
// Thread-safety: as Origin (origin.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fs/origin/failed_ranges.h"
#include "fs/origin/http_transport.h"
#include "fs/origin/origin.h"
#include "fs/origin/remote_stats.h"
#include "fs/origin/retry_policy.h"

namespace mmfs::origin {

class HttpOrigin final : public Origin {
 public:
  // Shards under `base_url` (the dataset's directory, "https://host/path/ds.mmfs"; a trailing
  // '/' is dropped); no tree yet.
  HttpOrigin(std::string base_url, std::unique_ptr<HttpTransport> transport,
             RetryPolicy retry = {});

  Status AddTree(uint32_t tree, const TreeSpec& spec) override;
  Result<uint64_t> ShardSize(ShardRef ref) const override;
  std::string ShardName(ShardRef ref) const override;
  Result<OriginBytes> ReadSpan(ShardRef ref, uint64_t offset, size_t len) override;
  OriginCapabilities Capabilities() const override { return {}; }
  void Advise(const OriginAdvice&) override {}

  const std::string& base_url() const { return base_url_; }
  const RetryPolicy& retry() const { return retry_; }
  // The URL stats show (the user's "s3://bucket/ds" rather than the endpoint's); the base URL
  // unless set. Set before the origin is shared.
  void set_display_url(std::string url) { display_url_ = std::move(url); }
  // Closes the kept-alive connections (HttpTransport::DropIdle): before the daemon forks.
  void DropConnections() { transport_->DropIdle(); }
  // The URL of object `name` (relative to the base; each path step percent-encoded).
  std::string UrlOf(const std::string& name) const;
  RemoteStatsSnapshot Stats() const;
  std::optional<RemoteStatsSnapshot> RequestStats() const override { return Stats(); }

  // The whole object `name` (relative to the base: "manifest.json"), retried as reads are;
  // ResourceExhausted if it holds more than `max_bytes`, NotFound on a 404. For the small files
  // a mount copies before it serves (the manifest, the index), not for shards.
  Result<std::string> FetchObject(const std::string& name, uint64_t max_bytes);
  // The size of object `name` (a HEAD's Content-Length), retried as reads are; NotFound on a
  // 404. For objects known by URL only (a tar named by a pattern), before they are read.
  Result<uint64_t> ObjectSize(const std::string& name);

 private:
  struct Shard {
    std::string name;  // relative to the base, for messages
    std::string url;
    uint64_t size = 0;
    std::string etag;  // pinned when the tree was added; empty if the server sends none
  };
  struct Tree {
    std::vector<Shard> shards;
  };
  // Shards checked at once when a tree is added.
  static constexpr size_t kParallelChecks = 16;

  const Shard* Find(ShardRef ref) const;
  // Shard `want` of `spec` as the server has it: present, of the manifest's size, with its magic;
  // its ETag pinned.
  Result<Shard> CheckShard(const TreeSpec& spec, const ShardSpec& want);
  // `request` sent, and sent again while the answer is retryable and the policy's time (or the
  // thread's READ deadline) lasts. The answer of the last try (a transport failure or any HTTP
  // status); `failed_for_good`: it kept failing for at least half the policy's budget (not one
  // short try of a READ late to its turn, nor a stop).
  HttpResponse Fetch(const HttpRequest& request, bool* failed_for_good = nullptr);
  // The status for an answer that is not what was expected.
  static Status Failed(const HttpResponse& response, const std::string& url);
  // `len` bytes at `offset` of `s`, which must still carry its pinned ETag.
  Result<std::string> GetRange(ShardRef ref, const Shard& s, uint64_t offset, size_t len);

  const std::string base_url_;
  std::string display_url_;
  const std::unique_ptr<HttpTransport> transport_;
  const RetryPolicy retry_;
  FailedRanges failed_;
  std::vector<std::unique_ptr<Tree>> trees_;  // by tree number; null where none was added
  RemoteStats stats_;
};

}  // namespace mmfs::origin
