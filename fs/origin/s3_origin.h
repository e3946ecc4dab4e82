// NewS3Origin: a dataset's shards in an S3 bucket (or an S3-compatible store), as an HttpOrigin
// that reads them as it reads a web server's, with each request signed (SigV4, by libcurl) with the user's
// credentials. The URL is "s3://BUCKET/PATH"; the endpoint, region and credentials come from
// the options and the AWS settings (aws_config.h); addressing as s3_location.h says.
//
// mmfs contacts only the endpoint the user gave, or, with none given, AWS's regional endpoint
// for the bucket the URL names.
//
// Ownership: the caller owns the origin returned.
// Thread-safety: NewS3Origin is a pure function of its arguments (OpenUrlOrigin reads the
// environment and the AWS files too); the origin is as HttpOrigin.
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
// URL names its server. MMFS_TEST_REMOTE_RETRY_MS, when set, is each request's retry budget in
// milliseconds (tests only: a server that is down is then EIO within seconds).
Result<std::unique_ptr<HttpOrigin>> OpenUrlOrigin(const std::string& url, RemoteOptions options);

}  // namespace mmfs::origin
