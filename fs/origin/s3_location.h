// S3 locations: an s3:// URL taken apart, and the HTTP URL of its objects for an endpoint.
//
// "s3://BUCKET/KEY/PREFIX" names a dataset's directory in a bucket. Its objects are reached at
// an endpoint the user gave (--endpoint or AWS_ENDPOINT_URL: an S3-compatible store), either
// path-style (ENDPOINT/BUCKET/KEY) or virtual-hosted (SCHEME://BUCKET.HOST/KEY); with no
// endpoint given, at AWS's own regional endpoint (virtual-hosted, or path-style for a bucket
// whose name has a dot, which the wildcard certificate would not cover).
//
// Thread-safety: pure functions of their arguments.
#pragma once

#include <string>

#include "base/status.h"

namespace mmfs::origin {

struct S3Location {
  std::string bucket;
  std::string key;  // the dataset's directory in the bucket, without leading or trailing '/'
};

// Whether `url` is an s3:// URL (and not a path or an http(s):// URL).
bool IsS3Url(const std::string& url);
// Whether `url` is an http:// or https:// URL.
bool IsHttpUrl(const std::string& url);
// `path` with RFC 3986's unreserved characters and '/' as they are and every other byte %XX:
// an object's name or an S3 key as a URL path.
std::string EncodeUrlPath(const std::string& path);
// `value` with RFC 3986's unreserved characters as they are and every other byte, '/' included,
// %XX (upper-case hex): a query parameter's value as SigV4's canonical query string has it, so
// that the URL sent is its own canonical form.
std::string EncodeQueryValue(const std::string& value);

// "s3://bucket/a/b/ds.mmfs" -> {"bucket", "a/b/ds.mmfs"}. InvalidArgument for another scheme, a
// user name or password before the bucket (never shown), a bucket name S3 would refuse (3 to 63
// of a-z 0-9 . -, starting and ending with a letter or digit), or an empty key.
Result<S3Location> ParseS3Url(const std::string& url);
// As ParseS3Url, for a prefix of keys to list: "s3://bucket/" and "s3://bucket" (the whole
// bucket) give an empty key.
Result<S3Location> ParseS3Prefix(const std::string& url);

enum class S3Addressing { kAuto, kPathStyle, kVirtualHosted };

// The HTTP URL of `where`'s directory. `endpoint`: "http(s)://host[:port]" (the scheme in any
// case; a path after it is kept, before the bucket in path style); empty: AWS's endpoint for
// `region`. kAuto is path style for a given endpoint (what S3-compatible stores expect) and
// virtual-hosted for AWS's. InvalidArgument naming the cause: not a URL, a scheme other than
// http or https, a query or fragment, a user name or password (never shown), no host.
Result<std::string> S3BaseUrl(const S3Location& where, const std::string& endpoint,
                              const std::string& region, S3Addressing addressing);

}  // namespace mmfs::origin
