#include "fs/origin/s3_location.h"

#include "fs/origin/url.h"

namespace mmfs::origin {
namespace {

bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

bool ValidBucket(const std::string& b) {
  if (b.size() < 3 || b.size() > 63) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(b.front()) || !alnum(b.back())) return false;
  for (size_t i = 0; i < b.size(); ++i) {
    const char c = b[i];
    if (!alnum(c) && c != '.' && c != '-') return false;
    if (c == '.' && i + 1 < b.size() && b[i + 1] == '.') return false;
  }
  return true;
}

std::string Trim(std::string s) {
  while (!s.empty() && s.back() == '/') s.pop_back();
  size_t start = 0;
  while (start < s.size() && s[start] == '/') ++start;
  return s.substr(start);
}

// `text` with RFC 3986's unreserved characters (and '/' when `keep_slash`) as they are, every
// other byte %XX.
std::string PercentEncode(const std::string& text, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '.' || c == '_' || c == '~' || (keep_slash && c == '/')) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

// ParseS3Url and ParseS3Prefix: `key_required` refuses an empty key (a dataset is never a whole
// bucket; a listing may be).
Result<S3Location> ParseS3(const std::string& url, bool key_required) {
  const std::string shown = RedactUrl(url);
  if (!IsS3Url(url)) return Status::InvalidArgument(shown + ": not an s3:// URL");
  const std::string rest = url.substr(5);
  const size_t slash = rest.find('/');
  S3Location where;
  where.bucket = rest.substr(0, slash);
  if (shown != url) {
    // Checked before the bucket's name, which would show them.
    return Status::InvalidArgument(shown + ": a user name or password in an s3:// URL is refused "
                                   "(credentials come from the AWS settings)");
  }
  if (!ValidBucket(where.bucket)) {
    return Status::InvalidArgument(url + ": '" + where.bucket + "' is not an S3 bucket name");
  }
  where.key = slash == std::string::npos ? "" : Trim(rest.substr(slash + 1));
  if (where.key.empty() && key_required) {
    return Status::InvalidArgument(url + ": no dataset after the bucket (s3://BUCKET/PATH)");
  }
  if (where.key.find_first_of("?#") != std::string::npos) {
    return Status::InvalidArgument(url + ": a query or fragment is not part of an S3 key here");
  }
  return where;
}

}  // namespace

std::string EncodeUrlPath(const std::string& path) { return PercentEncode(path, true); }

std::string EncodeQueryValue(const std::string& value) { return PercentEncode(value, false); }

bool IsS3Url(const std::string& url) { return StartsWith(url, "s3://"); }

bool IsHttpUrl(const std::string& url) {
  return StartsWith(url, "http://") || StartsWith(url, "https://");
}

Result<S3Location> ParseS3Url(const std::string& url) { return ParseS3(url, true); }

Result<S3Location> ParseS3Prefix(const std::string& url) { return ParseS3(url, false); }

Result<std::string> S3BaseUrl(const S3Location& where, const std::string& endpoint,
                              const std::string& region, S3Addressing addressing) {
  std::string scheme, host;
  bool path_style = false;
  if (endpoint.empty()) {
    if (region.empty()) return Status::InvalidArgument("no region for AWS's S3 endpoint");
    scheme = "https://";
    host = "s3." + region + ".amazonaws.com";
    path_style = addressing == S3Addressing::kPathStyle ||
                 (addressing == S3Addressing::kAuto && where.bucket.find('.') != std::string::npos);
  } else {
    // Each refusal names its own cause: a path is allowed (kept before the bucket), so "not an
    // http:// URL" would be wrong for a query or another scheme.
    const std::string shown = "endpoint " + RedactUrl(endpoint);
    const std::string given = UrlScheme(endpoint);
    const std::string form = "http://HOST[:PORT][/PATH] or https://...";
    if (given.empty() || endpoint.compare(given.size() + 1, 2, "//") != 0) {
      return Status::InvalidArgument(shown + ": not a URL (an endpoint is " + form + ")");
    }
    if (given != "http" && given != "https") {
      return Status::InvalidArgument(shown + ": mmfs speaks http:// and https:// only, not " +
                                     given + "://");
    }
    if (endpoint.find_first_of("?#") != std::string::npos) {
      return Status::InvalidArgument(shown + ": a query or fragment ('?', '#') is not part of an "
                                     "endpoint (" + form + ")");
    }
    scheme = given + "://";  // lower-cased, as RFC 3986 allows
    host = endpoint.substr(scheme.size());
    if (RedactUrl(endpoint) != endpoint) {
      // It would be shown in stats, logs and error messages.
      return Status::InvalidArgument(shown + ": a user name or password in the endpoint is "
                                     "refused (credentials come from the AWS settings)");
    }
    while (!host.empty() && host.back() == '/') host.pop_back();
    if (host.empty() || host[0] == '/') {
      return Status::InvalidArgument(shown + ": no host in the endpoint (" + form + ")");
    }
    path_style = addressing != S3Addressing::kVirtualHosted;
  }
  // A key is any bytes: each of its steps is percent-encoded, as the object names below it are.
  const std::string key = EncodeUrlPath(where.key);
  if (path_style) return scheme + host + "/" + where.bucket + "/" + key;
  if (host.find('/') != std::string::npos) {
    return Status::InvalidArgument("endpoint " + endpoint +
                                   ": virtual-hosted addressing needs an endpoint "
                                   "without a path");
  }
  return scheme + where.bucket + "." + host + "/" + key;
}

}  // namespace mmfs::origin
