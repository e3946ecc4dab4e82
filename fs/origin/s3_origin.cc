#include "fs/origin/s3_origin.h"

#include "fs/origin/curl_transport.h"
#include "fs/origin/url.h"

namespace mmfs::origin {

Result<std::unique_ptr<HttpOrigin>> NewS3Origin(const std::string& url, const AwsSettings& aws,
                                                const RemoteOptions& options) {
  MMFS_ASSIGN_OR_RETURN(S3Location where, ParseS3Url(url));
  const std::string& endpoint = options.endpoint.empty() ? aws.endpoint : options.endpoint;
  MMFS_ASSIGN_OR_RETURN(std::string base,
                        S3BaseUrl(where, endpoint, aws.region, options.addressing));
  CurlOptions curl;
  curl.ca_file = options.ca_file;
  if (aws.has_credentials()) {
    curl.aws_sigv4 = "aws:amz:" + aws.region + ":s3";
    curl.access_key = aws.access_key;
    curl.secret_key = aws.secret_key;
    curl.session_token = aws.session_token;
  }
  auto origin = std::make_unique<HttpOrigin>(std::move(base),
                                             std::make_unique<CurlTransport>(curl), options.retry);
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
  curl.ca_file = options.ca_file;
  return std::make_unique<HttpOrigin>(url, std::make_unique<CurlTransport>(curl), options.retry);
}

}  // namespace mmfs::origin
