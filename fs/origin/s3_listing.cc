#include "fs/origin/s3_listing.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstdio>
#include <ctime>
#include <memory>
#include <unordered_set>
#include <utility>

#include "fs/origin/s3_location.h"
#include "fs/origin/s3_xml.h"

namespace mmfs::origin {
namespace {

using s3xml::Child;
using s3xml::ErrorOf;
using s3xml::Named;
using s3xml::S3ErrorOf;
using s3xml::Text;

// "2024-01-01T00:00:00.000Z" (S3's form: UTC, milliseconds) or without the fraction, in
// nanoseconds since the epoch; 0 for anything else.
int64_t ParseS3Time(const std::string& text) {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &year, &month, &day, &hour,
                  &minute, &second, &consumed) != 6) {
    return 0;
  }
  int64_t fraction_ns = 0;
  size_t at = static_cast<size_t>(consumed);
  if (at < text.size() && text[at] == '.') {
    int64_t scale = 100000000;
    for (++at; at < text.size() && text[at] >= '0' && text[at] <= '9'; ++at, scale /= 10) {
      fraction_ns += (text[at] - '0') * scale;
    }
  }
  if (at + 1 != text.size() || text[at] != 'Z' || year < 1970 || month < 1 || month > 12 ||
      day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) {
    return 0;
  }
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  const time_t seconds = ::timegm(&tm);
  if (seconds < 0) return 0;
  return static_cast<int64_t>(seconds) * 1000000000 + fraction_ns;
}


// The URL of the listing page that follows `token` (empty: the first). The parameters are in
// SigV4's canonical order (sorted by name) and encoding, so that libcurl's signature, computed
// over the query as written, is the one S3 computes.
std::string PageUrl(const std::string& bucket_url, const std::string& prefix,
                    const std::string& token, uint32_t page_size) {
  std::string url = bucket_url + "?";
  if (!token.empty()) url += "continuation-token=" + EncodeQueryValue(token) + "&";
  url += "list-type=2&max-keys=" + std::to_string(page_size);
  if (!prefix.empty()) url += "&prefix=" + EncodeQueryValue(prefix);
  return url;
}

}  // namespace

Result<ListPage> ParseListPage(std::string_view xml) {
  MMFS_ASSIGN_OR_RETURN(s3xml::XmlDoc doc, s3xml::Parse(xml));
  const xmlNode* root = xmlDocGetRootElement(doc.get());
  if (root == nullptr) return Status::InvalidArgument("an XML document without an element");
  if (Named(root, "Error")) {
    return Status::InvalidArgument("an S3 error instead of a listing: " + ErrorOf(root));
  }
  if (!Named(root, "ListBucketResult")) {
    const std::string name(reinterpret_cast<const char*>(root->name));
    return Status::InvalidArgument("<" + name.substr(0, 60) +
                                   "> instead of a listing (<ListBucketResult>)");
  }
  ListPage page;
  const std::string truncated = Text(Child(root, "IsTruncated"));
  if (truncated == "true") {
    page.truncated = true;
  } else if (!truncated.empty() && truncated != "false") {
    return Status::InvalidArgument("IsTruncated is '" + truncated.substr(0, 20) +
                                   "', not true or false");
  }
  page.next_token = Text(Child(root, "NextContinuationToken"));
  for (const xmlNode* c = root->children; c != nullptr; c = c->next) {
    if (!Named(c, "Contents")) continue;
    ListedObject o;
    const xmlNode* key = Child(c, "Key");
    if (key == nullptr) {
      return Status::InvalidArgument("an object (<Contents>) without a <Key>, after " +
                                     std::to_string(page.objects.size()) + " objects");
    }
    o.key = Text(key);
    const std::string size = Text(Child(c, "Size"));
    const auto [end, ec] = std::from_chars(size.data(), size.data() + size.size(), o.size);
    if (size.empty() || ec != std::errc() || end != size.data() + size.size()) {
      return Status::InvalidArgument(o.key + ": size '" + size.substr(0, 30) +
                                     "' is not a number of bytes");
    }
    o.etag = Text(Child(c, "ETag"));
    o.last_modified_ns = ParseS3Time(Text(Child(c, "LastModified")));
    page.objects.push_back(std::move(o));
  }
  return page;
}

Result<std::vector<ListedObject>> ListBucket(HttpTransport& transport,
                                             const std::string& bucket_url,
                                             const std::string& prefix, const RetryPolicy& retry,
                                             const ListOptions& list, const std::string& shown) {
  const std::string who =
      !shown.empty() ? shown : bucket_url + (prefix.empty() ? "" : " (prefix " + prefix + ")");
  if (list.page_size < 1 || list.page_size > 1000) {
    return Status::InvalidArgument(who + ": a listing page of " + std::to_string(list.page_size) +
                                   " keys (S3 lists 1 to 1000 at a time)");
  }
  std::vector<ListedObject> all;
  std::string token;
  // A store that hands back a token it gave before would be listed forever.
  std::unordered_set<std::string> tokens;
  for (uint64_t page = 1;; ++page) {
    HttpRequest request;
    request.url = PageUrl(bucket_url, prefix, token, list.page_size);
    request.max_body = list.max_page_bytes;
    const HttpResponse response = SendWithRetries(transport, request, retry);
    const std::string where = who + ": listing page " + std::to_string(page) + " (" +
                              request.url + ")";
    if (response.body_cut) {
      return Status::ResourceExhausted(where + ": more than " +
                                       std::to_string(list.max_page_bytes) +
                                       " bytes in one page");
    }
    if (response.failure != TransportFailure::kNone) {
      return Status::IoError(where + ": " + response.error);
    }
    if (response.status != 200) {
      std::string why = where + ": HTTP " + std::to_string(response.status);
      // S3 says why in its error document: AccessDenied, NoSuchBucket, PermanentRedirect (the
      // bucket is in another region), SignatureDoesNotMatch.
      const std::string s3 = S3ErrorOf(response.error_body);
      if (!s3.empty()) why += " " + s3;
      if (response.status == 404) return Status::NotFound(why);
      return Status::IoError(why);
    }
    if (!response.content_encoding.empty() && response.content_encoding != "identity") {
      // Nothing asked for it; an encoded body is not the XML.
      return Status::IoError(where + ": the answer is encoded (Content-Encoding: " +
                             response.content_encoding + ")");
    }
    Result<ListPage> parsed = ParseListPage(response.body);
    if (!parsed.ok()) return Status::IoError(where + ": " + parsed.status().message());
    for (ListedObject& o : parsed->objects) {
      if (o.key.compare(0, prefix.size(), prefix) != 0) {
        return Status::IoError(where + ": the store lists '" + o.key +
                               "', which is not under the prefix");
      }
      all.push_back(std::move(o));
    }
    if (!parsed->truncated) break;
    if (parsed->next_token.empty()) {
      return Status::IoError(where + ": more keys follow (IsTruncated) but the store sends no "
                             "NextContinuationToken");
    }
    if (!tokens.insert(parsed->next_token).second) {
      return Status::IoError(where + ": the store sends a continuation token it sent before "
                             "(the listing would never end)");
    }
    token = std::move(parsed->next_token);
  }
  // S3 lists in byte order, page after page; a store that does not is put in order here, and
  // one that lists a key twice (pages that overlap) is an error, not a duplicate shard.
  std::stable_sort(all.begin(), all.end(),
                   [](const ListedObject& a, const ListedObject& b) { return a.key < b.key; });
  for (size_t i = 1; i < all.size(); ++i) {
    if (all[i].key == all[i - 1].key) {
      return Status::IoError(who + ": the store lists '" + all[i].key + "' twice");
    }
  }
  return all;
}

Result<std::vector<ListedObject>> ListS3Prefix(const std::string& url, const AwsSettings& aws,
                                               const RemoteOptions& options,
                                               const ListOptions& list) {
  MMFS_ASSIGN_OR_RETURN(S3Location where, ParseS3Prefix(url));
  // The key names a directory: "s3://b/shards" lists "shards/...", not "shards-old/...".
  const std::string prefix = where.key.empty() ? "" : where.key + "/";
  MMFS_ASSIGN_OR_RETURN(S3Client client, NewS3Client(where, aws, options));
  return ListBucket(*client.transport, client.bucket_url, prefix, options.retry, list, url);
}

Result<std::vector<ListedObject>> ListS3Prefix(const std::string& url,
                                               const RemoteOptions& options,
                                               const ListOptions& list) {
  MMFS_ASSIGN_OR_RETURN(AwsSettings aws, LoadAwsSettings(AwsSources::System()));
  return ListS3Prefix(url, aws, WithProcessSettings(options), list);
}

}  // namespace mmfs::origin
