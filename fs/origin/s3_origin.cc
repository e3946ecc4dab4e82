#include "fs/origin/s3_origin.h"

#include <chrono>
#include <cstdlib>

#include "fs/origin/curl_transport.h"
#include "fs/origin/url.h"

namespace mmfs::origin {
namespace {

// The CAs of `ca_file` for requests to `base` (none when no file is given). A plain http://
// server is not checked at all: a CA file given for one would be silently ignored, so it is
// refused, as the user may believe the server checked.
Result<std::string> CaFor(const std::string& base, const std::string& ca_file) {
  if (ca_file.empty()) return std::string();
  if (UrlScheme(base) != "https") {
    return Status::InvalidArgument("--ca-file " + ca_file + " does not apply: " + base +
                                   " is plain http://, which has no certificate to check");
  }
  return ReadCaFile(ca_file);
}

}  // namespace

Result<S3Client> NewS3Client(const S3Location& where, const AwsSettings& aws,
                             const RemoteOptions& options) {
  const std::string& endpoint = options.endpoint.empty() ? aws.endpoint : options.endpoint;
  S3Client client;
  MMFS_ASSIGN_OR_RETURN(client.base_url,
                        S3BaseUrl(where, endpoint, aws.region, options.addressing));
  MMFS_ASSIGN_OR_RETURN(client.bucket_url, S3BaseUrl(S3Location{where.bucket, ""}, endpoint,
                                                     aws.region, options.addressing));
  // The bucket is "/bkt" in path style (s3rver routes "/:bucket"; AWS's SDKs send no trailing
  // '/'), and "/" when it is the host.
  while (!client.bucket_url.empty() && client.bucket_url.back() == '/') {
    client.bucket_url.pop_back();
  }
  const size_t host = client.bucket_url.find("://");
  if (client.bucket_url.find('/', host == std::string::npos ? 0 : host + 3) ==
      std::string::npos) {
    client.bucket_url += '/';
  }
  CurlOptions curl;
  MMFS_ASSIGN_OR_RETURN(curl.ca_pem, CaFor(client.base_url, options.ca_file));
  if (aws.has_credentials()) {
    curl.aws_sigv4 = "aws:amz:" + aws.region + ":s3";
    curl.access_key = aws.access_key;
    curl.secret_key = aws.secret_key;
    curl.session_token = aws.session_token;
  }
  client.transport = std::make_unique<CurlTransport>(curl);
  return client;
}

RemoteOptions WithProcessSettings(RemoteOptions options) {
  if (const char* ms = std::getenv("MMFS_TEST_REMOTE_RETRY_MS"); ms != nullptr) {
    options.retry.total = std::chrono::milliseconds(std::strtoull(ms, nullptr, 10));
  }
  return options;
}

Result<std::unique_ptr<HttpOrigin>> NewS3Origin(const std::string& url, const AwsSettings& aws,
                                                const RemoteOptions& options) {
  MMFS_ASSIGN_OR_RETURN(S3Location where, ParseS3Url(url));
  MMFS_ASSIGN_OR_RETURN(S3Client client, NewS3Client(where, aws, options));
  auto origin = std::make_unique<HttpOrigin>(std::move(client.base_url),
                                             std::move(client.transport), options.retry);
  origin->set_display_url(url);
  return origin;
}

Result<std::unique_ptr<HttpOrigin>> NewHttpOrigin(const std::string& url,
                                                  const RemoteOptions& options) {
  const std::string shown = RedactUrl(url);
  if (!IsHttpUrl(url)) {
    return Status::InvalidArgument(shown + ": not an http:// or https:// URL of a dataset");
  }
  if (shown != url) {
    // It would be shown in stats, logs and error messages, and sent on every request.
    return Status::InvalidArgument(shown + ": a user name or password in the URL is refused (it "
                                   "would be shown in stats and logs)");
  }
  if (url.find_first_of("?#") != std::string::npos) {
    return Status::InvalidArgument(url + ": a query or fragment ('?', '#') is not part of a "
                                   "dataset's URL (http(s)://HOST/PATH)");
  }
  CurlOptions curl;
  MMFS_ASSIGN_OR_RETURN(curl.ca_pem, CaFor(url, options.ca_file));
  return std::make_unique<HttpOrigin>(url, std::make_unique<CurlTransport>(curl), options.retry);
}

Result<std::unique_ptr<HttpOrigin>> OpenUrlOrigin(const std::string& url, RemoteOptions options) {
  options = WithProcessSettings(std::move(options));
  if (IsS3Url(url)) {
    MMFS_ASSIGN_OR_RETURN(AwsSettings aws, LoadAwsSettings(AwsSources::System()));
    return NewS3Origin(url, aws, options);
  }
  if (!options.endpoint.empty()) {
    return Status::InvalidArgument("--endpoint is for s3:// URLs; " + RedactUrl(url) +
                                   " names its server");
  }
  return NewHttpOrigin(url, options);
}

}  // namespace mmfs::origin
