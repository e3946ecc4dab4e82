// HttpTransport: one HTTP request and its answer, the seam between a remote origin
// (http_origin.h) and the network, so that the origin's retries, ETag pinning and counters are
// tested with a fake transport and the real one (CurlTransport, libcurl) with a local server.
//
// A transport sends exactly the request it is given to the URL it is given: it follows no
// redirect, uses no proxy (not even one the environment names) and never contacts an address
// the request does not name.
//
// Ownership: a transport owns its connections; requests and responses are values.
// Thread-safety: Send may be called from any number of threads at once.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mmfs::origin {

struct HttpRequest {
  bool head = false;  // HEAD instead of GET
  // Another method than GET or HEAD ("PUT", "POST", "DELETE"): a write, which a mount never
  // sends (only `mmfs pack` into a bucket does).
  std::string method;
  // The body a PUT or POST sends, not owned: it must stay as it is until Send returns. It is
  // sent unsigned (x-amz-content-sha256: UNSIGNED-PAYLOAD): over https TLS guards it on the way;
  // over a plain http:// endpoint nothing does, as nothing guards a read's bytes there.
  std::string_view upload;
  // Headers sent besides those the transport adds, each "Name: value" ("x-amz-meta-…: …").
  std::vector<std::string> headers;
  std::string url;
  // Bytes [first, last] (inclusive, as the Range header) of the object; none: the whole object.
  std::optional<std::pair<uint64_t, uint64_t>> range;
  // The ETag the object must still have (If-Match); empty: no condition.
  std::string if_match;
  // A body longer than this is cut off and the request fails (a server that ignores Range must
  // not make the daemon hold a whole shard). 0: no body kept at all.
  uint64_t max_body = 0;
  // The whole exchange may take at most this (a timeout, worth another try); 0: no limit but
  // the transport's own (a stalled body).
  std::chrono::milliseconds timeout{0};
};

// How a request failed before an HTTP status came back.
enum class TransportFailure {
  kNone,       // an HTTP status came back
  kTransient,  // timeout, refused or reset connection, DNS: worth another try
  kPermanent,  // a bad URL, a TLS certificate refused, a body longer than max_body
};

struct HttpResponse {
  TransportFailure failure = TransportFailure::kNone;
  std::string error;  // what failed, when failure != kNone
  long status = 0;    // HTTP status
  std::string etag;   // the ETag header as sent (quotes kept); empty if none
  // The Content-Encoding header as sent ("gzip"); empty if none. Nothing is asked to be
  // encoded (no Accept-Encoding), and nothing is decoded: an encoded body is not the object's
  // bytes.
  std::string content_encoding;
  std::optional<uint64_t> content_length;
  // A ranged answer's (206) Content-Range, "bytes FIRST-LAST/SIZE": the bytes it holds and
  // the whole object's size (a 416's "bytes */SIZE" gives the size only).
  std::optional<std::pair<uint64_t, uint64_t>> range;
  std::optional<uint64_t> object_size;
  // The start of an error answer's body (not 2xx; at most 4 KiB): an S3 store says there why.
  std::string error_body;
  // The object's user metadata (x-amz-meta-NAME headers): NAME in lower case, and the value.
  std::vector<std::pair<std::string, std::string>> user_metadata;
  std::string body;
  // The body held more than max_body (failure is then kPermanent; the status and headers are
  // those of the answer that was cut).
  bool body_cut = false;
};

class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  virtual HttpResponse Send(const HttpRequest& request) = 0;
  // Closes the connections kept for later requests (before a fork: a parent that exits must
  // not close, TLS shutdown included, what its child goes on using). Later requests open new
  // ones.
  virtual void DropIdle() {}
};

}  // namespace mmfs::origin
