// S3Uploader: objects written into one directory of a bucket ("s3://BUCKET/PREFIX/ds.mmfs"),
// for `mmfs pack` into a bucket. A small file is one PUT; a larger one a multipart upload
// (CreateMultipartUpload, its parts PUT several at a time, CompleteMultipartUpload; aborted when
// a part fails for good, so the store keeps no orphan parts). Each request is sent as a mount's
// and a listing's are: through the transport NewS3Client builds (endpoint, addressing, CA file,
// SigV4 credentials) and retried by the same RetryPolicy (5xx, 429, timeouts); a write is given,
// on top of that budget, the time its body takes at 1 MB/s.
//
// An object carries user metadata (x-amz-meta-NAME), which Head reads back: that is how a
// resumed pack knows a shard in the bucket is the one it uploaded (its size and checksum).
//
// Memory: a multipart upload holds parts_in_flight parts (8 MiB each by default) at a time.
//
// Ownership: the uploader owns its transport.
// Thread-safety: every method may be called from any number of threads at once.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "fs/origin/http_transport.h"
#include "fs/origin/retry_policy.h"
#include "fs/origin/s3_origin.h"

namespace mmfs::origin {

struct UploadOptions {
  // A file up to this size is one PUT; a larger one is uploaded in parts of part_bytes (more
  // when it would take over S3's 10,000 parts; at least 5 MiB, S3's smallest part).
  uint64_t single_put_bytes = 8ull << 20;
  uint64_t part_bytes = 8ull << 20;
  int parts_in_flight = 4;
};

// User metadata: NAME (lower case: a-z, 0-9, '-') and its value (printable ASCII).
using ObjectMetadata = std::vector<std::pair<std::string, std::string>>;

struct RemoteObject {
  uint64_t size = 0;
  ObjectMetadata metadata;
  // The value of metadata NAME; empty when the object has none.
  std::string Metadata(std::string_view name) const;
};

class S3Uploader {
 public:
  // Objects under "s3://BUCKET/KEY" (the directory they go in), reached with the AWS settings
  // of this process and `options` as OpenUrlOrigin reaches a dataset.
  static Result<std::unique_ptr<S3Uploader>> Open(const std::string& url, RemoteOptions options,
                                                  UploadOptions upload = {});

  // `base_url` is the directory's HTTP URL (S3Client::base_url); `shown` names it in errors.
  S3Uploader(std::string base_url, std::string shown, std::unique_ptr<HttpTransport> transport,
             RetryPolicy retry, UploadOptions upload);

  // The file at `path` as object `name`, with `metadata`. Errors name the object and the file,
  // and the store's error Code and Message.
  Status PutFile(const std::string& name, const std::string& path,
                 const ObjectMetadata& metadata = {});
  // `bytes` as object `name`, in one PUT.
  Status PutBytes(const std::string& name, std::string_view bytes,
                  const ObjectMetadata& metadata = {});
  // Object `name`'s size and metadata; nothing when there is no such object.
  Result<std::optional<RemoteObject>> Head(const std::string& name);
  // Removes object `name` (no error when it is not there).
  Status Delete(const std::string& name);
  // While set, a multipart upload sends no further part and is aborted (Cancelled): a pack
  // stopped by Ctrl-C does not wait for a whole shard's upload.
  void set_cancelled(bool cancelled) { cancelled_.store(cancelled); }

  // "s3://BUCKET/KEY/NAME": object `name` as the user knows it.
  std::string Shown(const std::string& name) const { return shown_ + "/" + name; }
  // Body bytes the store has acknowledged, parts and whole objects (progress: bytes out).
  uint64_t bytes_sent() const { return bytes_sent_.load(std::memory_order_relaxed); }
  // Requests sent, tries included (tests count them).
  uint64_t requests() const { return requests_.load(std::memory_order_relaxed); }

 private:
  HttpResponse Send(HttpRequest request);
  Status Failed(const std::string& what, const HttpResponse& response) const;
  Status PutInParts(const std::string& name, int fd, uint64_t size, const std::string& path,
                    const ObjectMetadata& metadata);
  std::string UrlOf(const std::string& name) const;

  const std::string base_url_;
  const std::string shown_;
  const std::unique_ptr<HttpTransport> transport_;
  const RetryPolicy retry_;
  const UploadOptions upload_;
  std::atomic<bool> cancelled_{false};
  std::atomic<uint64_t> bytes_sent_{0};
  std::atomic<uint64_t> requests_{0};
};

}  // namespace mmfs::origin
