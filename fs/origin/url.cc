#include "fs/origin/url.h"

#include <cctype>

namespace mmfs::origin {
namespace {

bool SchemeChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '+' || c == '-' || c == '.';
}

bool ReadByMmfs(const std::string& scheme) {
  return scheme == "http" || scheme == "https" || scheme == "s3";
}

// Where a URL's authority starts in `text` (after "SCHEME:" and its slashes), given the length
// of the scheme.
size_t AuthorityStart(std::string_view text, size_t scheme_size) {
  size_t at = scheme_size + 1;
  while (at < text.size() && text[at] == '/') ++at;
  return at;
}

}  // namespace

std::string UrlScheme(std::string_view text) {
  if (text.empty() || std::isalpha(static_cast<unsigned char>(text[0])) == 0) return "";
  size_t i = 1;
  while (i < text.size() && SchemeChar(text[i])) ++i;
  if (i == text.size() || text[i] != ':') return "";
  std::string scheme(text.substr(0, i));
  for (char& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return scheme;
}

Result<std::string> DatasetLocation(const std::string& where) {
  const std::string scheme = UrlScheme(where);
  if (scheme.empty()) return where;
  const bool slashes = where.compare(scheme.size() + 1, 2, "//") == 0;
  if (ReadByMmfs(scheme)) {
    if (slashes) return scheme + where.substr(scheme.size());
    return Status::InvalidArgument(
        RedactUrl(where) + ": not a URL: '" + scheme + ":' needs '//' after it (" + scheme +
        (scheme == "s3" ? "://BUCKET/PATH" : "://HOST/PATH") +
        "); for a local folder of this name write ./" + where);
  }
  if (!slashes) return where;  // "name:thing" is a path; only "SCHEME://" is taken as a URL
  std::string message = RedactUrl(where) + ": mmfs does not read " + scheme +
                        ":// URLs (it reads http://, https:// and s3:// URLs, and local paths)";
  if (scheme == "file" && where.compare(scheme.size() + 1, 3, "///") == 0) {
    message += "; for a local dataset give its path: " + where.substr(scheme.size() + 3);
  }
  return Status::InvalidArgument(message);
}

std::string RedactUrl(std::string_view text) {
  const std::string scheme = UrlScheme(text);
  if (scheme.empty()) return std::string(text);
  // "data:x@y" is not a URL; a scheme mmfs reads is one even with its slashes missing, since
  // that is a mistake DatasetLocation names, with the text.
  if (text.compare(scheme.size() + 1, 2, "//") != 0 && !ReadByMmfs(scheme)) {
    return std::string(text);
  }
  const size_t start = AuthorityStart(text, scheme.size());
  size_t end = text.find_first_of("/?#", start);
  if (end == std::string_view::npos) end = text.size();
  const std::string_view authority = text.substr(start, end - start);
  const size_t at = authority.rfind('@');
  const size_t encoded = authority.rfind("%40");
  size_t cut = std::string_view::npos;
  if (at != std::string_view::npos) cut = at;
  if (encoded != std::string_view::npos && (cut == std::string_view::npos || encoded > cut)) {
    cut = encoded;
  }
  if (cut == std::string_view::npos) return std::string(text);
  return std::string(text.substr(0, start)) + "***" + std::string(text.substr(start + cut));
}

}  // namespace mmfs::origin
