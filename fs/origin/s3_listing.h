// S3 listings: every object under a prefix of a bucket ("s3://BUCKET/PREFIX/", or the whole
// bucket), for packing a dataset straight from a bucket.
//
// A listing is ListObjectsV2 (GET BUCKET?list-type=2&prefix=...), page after page, each page's
// NextContinuationToken sent back until IsTruncated is false. Each page is one request sent as
// a mount's reads are: through the transport NewS3Client builds (the same endpoint, addressing,
// CA file and SigV4 credentials as OpenUrlOrigin), retried by the origin's RetryPolicy (5xx,
// 429, timeouts), and bounded in size (a page of 1000 keys is at most a few MB; a server that
// sends more is refused, not held). The page's XML is read with libxml2, without network
// access and without loading a DTD (S3 never sends one; a page that has one is refused).
//
// The query is written sorted by name and already percent-encoded as SigV4's canonical query
// string has it: libcurl before 8.1 signs the query as it is given, so any other order or
// encoding would be refused by S3 as SignatureDoesNotMatch.
//
// Ownership: results are values; ListBucket borrows its transport for the call.
// Thread-safety: pure functions of their arguments and the store's answers (ListS3Prefix reads
// the environment and the AWS files too); a transport may serve several listings at once.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "fs/origin/aws_config.h"
#include "fs/origin/http_transport.h"
#include "fs/origin/retry_policy.h"
#include "fs/origin/s3_origin.h"

namespace mmfs::origin {

struct ListedObject {
  std::string key;    // the whole key in the bucket ("shards/00001.tar")
  uint64_t size = 0;  // bytes
  std::string etag;   // as the store sent it, quotes kept; empty if none
  // LastModified ("2024-01-01T00:00:00.000Z"), in nanoseconds since the epoch; 0 when the
  // page gives none or one not in that form (a date is no reason to refuse a listing).
  int64_t last_modified_ns = 0;
};

struct ListOptions {
  // Keys asked for per page (max-keys): 1 to 1000, S3's own cap. Fewer only to test paging.
  uint32_t page_size = 1000;
  // The most bytes one page may hold: 1000 keys of at most 1024 bytes, each of them escaped
  // (&amp; is 5 bytes for 1), with their size, ETag and dates, fit in well under this.
  uint64_t max_page_bytes = 16ull << 20;
};

// One page of a listing, as parsed from its XML.
struct ListPage {
  std::vector<ListedObject> objects;
  bool truncated = false;   // IsTruncated: more pages follow
  std::string next_token;   // NextContinuationToken, when truncated
};

// The ListBucketResult document `xml`. InvalidArgument naming the cause for a document that is
// not well-formed XML, has a DTD, is not a ListBucketResult (an S3 <Error> document names its
// Code and Message), or has an object without a key or with a size that is not a number.
Result<ListPage> ParseListPage(std::string_view xml);

// Every object whose key starts with `prefix` (empty: the whole bucket) in the bucket at
// `bucket_url` (S3Client::bucket_url), in key order (byte order, as S3 lists them), every page
// fetched through `transport` and retried per `retry`. Errors name `shown` (the user's URL; the
// bucket URL and prefix when empty) and the cause: the HTTP status with S3's error Code and
// Message when the body has them (NotFound for a 404 such as NoSuchBucket, IoError otherwise),
// ResourceExhausted for a page above `list.max_page_bytes`, InvalidArgument for a page that is
// not a listing (ParseListPage) or for a page size out of range, IoError for a store that pages
// without a token or sends one key twice.
Result<std::vector<ListedObject>> ListBucket(HttpTransport& transport,
                                             const std::string& bucket_url,
                                             const std::string& prefix, const RetryPolicy& retry,
                                             const ListOptions& list = {},
                                             const std::string& shown = "");

// Every object under "s3://BUCKET/PREFIX/" (the prefix taken as a directory: "s3://b/x" and
// "s3://b/x/" both list "x/..."; "s3://b/" and "s3://b" list the whole bucket), reached with
// `aws` and `options` as NewS3Origin reaches a dataset.
Result<std::vector<ListedObject>> ListS3Prefix(const std::string& url, const AwsSettings& aws,
                                               const RemoteOptions& options,
                                               const ListOptions& list = {});

// As above with the AWS settings of this process (environment, then profile files) and the
// options through WithProcessSettings, as OpenUrlOrigin opens a dataset's URL.
Result<std::vector<ListedObject>> ListS3Prefix(const std::string& url,
                                               const RemoteOptions& options,
                                               const ListOptions& list = {});

}  // namespace mmfs::origin
