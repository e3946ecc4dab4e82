// NewS3Origin: a dataset's shards in an S3 bucket (or an S3-compatible store), as an HttpOrigin
// that reads them as it reads a web server's, with each request signed (SigV4, by libcurl) with the user's
// credentials. The URL is "s3://BUCKET/PATH"; the endpoint, region and credentials come from
// the options and the AWS settings (aws_config.h); addressing as s3_location.h says.
//
// mmfs contacts only the endpoint the user gave, or, with none given, AWS's regional endpoint
// for the bucket the URL names.
//
// Every request to a bucket, a shard's read as a listing's page (s3_listing.h), is sent through
// what NewS3Client builds from the same settings: one set of rules for the endpoint, the
// addressing, TLS and signing.
//
// Ownership: the caller owns the origin (and the client) returned.
// Thread-safety: NewS3Origin and NewS3Client are pure functions of their arguments (OpenUrlOrigin
// and WithProcessSettings read the environment, OpenUrlOrigin the AWS files too); the origin is
// as HttpOrigin.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "fs/origin/aws_config.h"
#include "fs/origin/http_origin.h"
#include "fs/origin/s3_location.h"

namespace mmfs::origin {

struct RemoteOptions {
  std::string endpoint;  // --endpoint; overrides the AWS settings' (AWS_ENDPOINT_URL)
  // --ca-file: its CAs are trusted and nothing else (read by ReadCaFile; refused for a plain
  // http:// origin, which checks no certificate); empty: the system's CAs.
  std::string ca_file;
  S3Addressing addressing = S3Addressing::kAuto;
  RetryPolicy retry;
};

// The way to one bucket: its URLs for the endpoint and addressing of `options` and `aws`, and a
// transport (libcurl) that trusts the CAs of `options.ca_file` and signs each request with
// `aws`'s credentials (none: unsigned, for a public bucket).
struct S3Client {
  // The bucket itself, for requests on the bucket (a listing): "http://127.0.0.1:9000/bkt",
  // "https://bkt.s3.eu-west-1.amazonaws.com/".
  std::string bucket_url;
  // `where.key` in the bucket (S3BaseUrl), for its objects; the bucket's root when it is empty.
  std::string base_url;
  std::unique_ptr<HttpTransport> transport;
};
Result<S3Client> NewS3Client(const S3Location& where, const AwsSettings& aws,
                             const RemoteOptions& options);

// `options` as every user of a URL in this process takes them: MMFS_TEST_REMOTE_RETRY_MS, when
// set, is each request's retry budget in milliseconds (tests only: a server that is down is
// then an error within seconds).
RemoteOptions WithProcessSettings(RemoteOptions options);

// The origin for "s3://BUCKET/PATH". Reads without signing when `aws` has no credentials (a
// public bucket).
Result<std::unique_ptr<HttpOrigin>> NewS3Origin(const std::string& url, const AwsSettings& aws,
                                                const RemoteOptions& options);

// The origin for an http:// or https:// URL of a dataset's directory.
Result<std::unique_ptr<HttpOrigin>> NewHttpOrigin(const std::string& url,
                                                  const RemoteOptions& options);

// The origin for a dataset's URL, whatever its scheme: NewS3Origin with the AWS settings of this
// process (environment, then profile files) for s3://, NewHttpOrigin for http(s)://. Every user
// of a URL (mount, info, verify) opens it here, so that credentials, endpoint, TLS and retries
// follow one set of rules. `options.endpoint` for an http(s):// URL is refused, naming it: the
// URL names its server. The options are taken through WithProcessSettings.
Result<std::unique_ptr<HttpOrigin>> OpenUrlOrigin(const std::string& url, RemoteOptions options);

}  // namespace mmfs::origin
