#include "fs/origin/curl_transport.h"

#include <curl/curl.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <optional>
#include <string_view>

#include "base/file_util.h"

namespace mmfs::origin {
namespace {

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

constexpr const char* kEmptyPayloadSha256Header =
    "x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
// A body is not hashed for the signature (a shard's part would cost a SHA-256 pass): S3 takes
// it unsigned; over https TLS guards it on the way (over plain http nothing does).
constexpr const char* kUnsignedPayloadHeader = "x-amz-content-sha256: UNSIGNED-PAYLOAD";

// The body of an answer that is not 2xx (an error page) is read and dropped, up to this much.
constexpr uint64_t kMaxErrorBody = 64 << 10;
// Of which the start is kept, for the message (an S3 error's <Code> and <Message>).
constexpr size_t kKeptErrorBody = 4 << 10;
// A body is given its whole room at its first bytes up to this size (ranges are at most an
// extent); past it, it grows as it comes.
constexpr uint64_t kMaxReserve = 256ull << 20;

struct Exchange {
  CURL* curl;
  HttpResponse* response;
  uint64_t max_body;
  bool too_long = false;
  uint64_t dropped = 0;
};

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* x = static_cast<Exchange*>(user);
  const size_t n = size * count;
  long status = 0;
  curl_easy_getinfo(x->curl, CURLINFO_RESPONSE_CODE, &status);
  if (status < 200 || status > 299) {
    const size_t keep = x->response->error_body.size() < kKeptErrorBody
                            ? std::min(n, kKeptErrorBody - x->response->error_body.size())
                            : 0;
    x->response->error_body.append(data, keep);
    x->dropped += n;
    return x->dropped <= kMaxErrorBody ? n : 0;
  }
  if (x->response->body.size() + n > x->max_body) {
    x->too_long = true;
    return 0;  // CURLE_WRITE_ERROR: the transfer stops here
  }
  if (x->response->body.empty() && x->response->content_length) {
    // The whole body's room at its first bytes, when the answer says how long it is.
    x->response->body.reserve(std::min<uint64_t>({*x->response->content_length, x->max_body,
                                                  kMaxReserve}));
  }
  x->response->body.append(data, n);
  return n;
}

bool HeaderIs(std::string_view line, std::string_view name) {
  if (line.size() <= name.size() || line[name.size()] != ':') return false;
  for (size_t i = 0; i < name.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(line[i])) != name[i]) return false;
  }
  return true;
}

// Header names are compared in lower case: HTTP/2 sends them so, HTTP/1.1 servers as they like.
constexpr std::string_view kUserMetadataPrefix = "x-amz-meta-";
bool StartsCaseless(std::string_view line, std::string_view lower_prefix) {
  if (line.size() < lower_prefix.size()) return false;
  for (size_t i = 0; i < lower_prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(line[i])) != lower_prefix[i]) return false;
  }
  return true;
}

std::string_view HeaderValue(std::string_view line, size_t name_size) {
  std::string_view v = line.substr(name_size + 1);
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == '\r' || v.back() == '\n' || v.back() == ' '))
    v.remove_suffix(1);
  return v;
}

// A header's decimal value; nothing unless it is all digits and fits in 64 bits.
std::optional<uint64_t> ParseDecimal(std::string_view v) {
  if (v.empty()) return std::nullopt;
  uint64_t value = 0;
  for (char c : v) {
    if (c < '0' || c > '9' || value > (UINT64_MAX - 9) / 10) return std::nullopt;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  return value;
}

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* x = static_cast<Exchange*>(user);
  const size_t n = size * count;
  std::string_view line(data, n);
  if (line.rfind("HTTP/", 0) == 0) {  // a new response (after a 100 Continue): start afresh
    x->response->etag.clear();
    x->response->content_encoding.clear();
    x->response->content_length.reset();
    x->response->object_size.reset();
    x->response->range.reset();
    x->response->user_metadata.clear();
  } else if (const size_t colon = line.find(':');
             colon != std::string_view::npos && colon > kUserMetadataPrefix.size() &&
             StartsCaseless(line, kUserMetadataPrefix)) {
    std::string name(line.substr(kUserMetadataPrefix.size(), colon - kUserMetadataPrefix.size()));
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    x->response->user_metadata.emplace_back(std::move(name), HeaderValue(line, colon));
  } else if (HeaderIs(line, "etag")) {
    x->response->etag = std::string(HeaderValue(line, 4));
  } else if (HeaderIs(line, "content-encoding")) {
    x->response->content_encoding = std::string(HeaderValue(line, 16));
  } else if (HeaderIs(line, "content-length")) {
    x->response->content_length = ParseDecimal(HeaderValue(line, 14));
  } else if (HeaderIs(line, "content-range")) {
    // "bytes FIRST-LAST/SIZE"; SIZE may be "*" (unknown), which gives nothing.
    std::string_view v = HeaderValue(line, 13);
    const size_t slash = v.rfind('/');
    if (v.rfind("bytes ", 0) == 0 && slash != std::string_view::npos) {
      x->response->object_size = ParseDecimal(v.substr(slash + 1));
      const std::string_view span = v.substr(6, slash - 6);
      const size_t dash = span.find('-');
      if (dash != std::string_view::npos) {
        auto first = ParseDecimal(span.substr(0, dash));
        auto last = ParseDecimal(span.substr(dash + 1));
        if (first && last) x->response->range = std::make_pair(*first, *last);
      }
    }
  }
  return n;
}

bool Transient(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_SSL_CONNECT_ERROR:
      return true;
    default:
      return false;
  }
}

// What a file that is not a regular file is, for the message.
std::string FileKind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO or pipe (as <(...) gives)";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

Result<std::string> ReadCaFile(const std::string& path) {
  const auto refuse = [&](const std::string& why) {
    return Status::InvalidArgument("--ca-file " + path + ": " + why);
  };
  // Looked at before it is opened (a device is never opened), and again on the descriptor (the
  // name may have changed in between).
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return Status::FromErrno(errno, "--ca-file " + path);
  if (!S_ISREG(st.st_mode)) return refuse(FileKind(st.st_mode) + ", not a regular file");
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (!fd.valid()) return Status::FromErrno(errno, "--ca-file " + path);
  if (::fstat(fd.get(), &st) != 0) return Status::FromErrno(errno, "--ca-file " + path);
  if (!S_ISREG(st.st_mode)) return refuse(FileKind(st.st_mode) + ", not a regular file");
  if (static_cast<uint64_t>(st.st_size) > kMaxCaFileBytes) {
    return refuse(std::to_string(st.st_size) + " bytes, more than a CA file holds (at most " +
                  std::to_string(kMaxCaFileBytes >> 20) + " MiB)");
  }
  std::string pem(static_cast<size_t>(st.st_size), '\0');
  MMFS_RETURN_IF_ERROR(PreadFull(fd.get(), pem.data(), pem.size(), 0, "--ca-file " + path));
  if (pem.find("-----BEGIN ") == std::string::npos ||
      pem.find("CERTIFICATE-----") == std::string::npos) {
    return refuse("no PEM certificate in it (-----BEGIN CERTIFICATE-----)");
  }
  return pem;
}

CurlTransport::CurlTransport(CurlOptions options) : options_(std::move(options)) { GlobalInit(); }

CurlTransport::~CurlTransport() {
  for (void* h : idle_) curl_easy_cleanup(static_cast<CURL*>(h));
}

void CurlTransport::DropIdle() {
  std::vector<void*> idle;
  {
    std::lock_guard<std::mutex> lock(mu_);
    idle.swap(idle_);
  }
  for (void* h : idle) curl_easy_cleanup(static_cast<CURL*>(h));
}

void* CurlTransport::TakeHandle() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!idle_.empty()) {
      void* h = idle_.back();
      idle_.pop_back();
      return h;
    }
  }
  return curl_easy_init();
}

void CurlTransport::GiveBack(void* handle) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (idle_.size() < options_.max_idle_handles) {
      idle_.push_back(handle);
      return;
    }
  }
  curl_easy_cleanup(static_cast<CURL*>(handle));
}

HttpResponse CurlTransport::Send(const HttpRequest& request) {
  HttpResponse response;
  auto* curl = static_cast<CURL*>(TakeHandle());
  if (curl == nullptr) {
    response.failure = TransportFailure::kTransient;
    response.error = "curl_easy_init failed";
    return response;
  }
  // A reused handle keeps its connection cache and drops the last request's options.
  curl_easy_reset(curl);
  Exchange x{curl, &response, request.max_body};
  char error[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(curl, CURLOPT_PROXY, "");  // not the environment's http_proxy either
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(options_.connect_timeout.count()));
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1024L);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, static_cast<long>(options_.stall_timeout.count()));
  if (request.timeout.count() > 0) {
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(request.timeout.count()));
  }
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 2L);
  if (!options_.ca_pem.empty()) {
    curl_blob ca{const_cast<char*>(options_.ca_pem.data()), options_.ca_pem.size(),
                 CURL_BLOB_NOCOPY};  // options_ outlives every handle
    // The system's CAs stay trusted through the built-in CA directory unless it is unset too.
    // Checked: a request whose CAs were not set would be checked against the system's.
    if (curl_easy_setopt(curl, CURLOPT_CAINFO_BLOB, &ca) != CURLE_OK ||
        curl_easy_setopt(curl, CURLOPT_CAPATH, nullptr) != CURLE_OK) {
      curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, nullptr);
      GiveBack(curl);
      response.failure = TransportFailure::kPermanent;
      response.error = "libcurl did not take the CAs of --ca-file";
      return response;
    }
  }
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &x);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &x);
  if (request.head) curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  const bool sends_body = request.method == "PUT" || request.method == "POST";
  if (!request.method.empty()) curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  if (sends_body) {
    // Sent from memory as it is (POSTFIELDS; the method line is the one asked for above).
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(request.upload.size()));
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS,
                     request.upload.empty() ? "" : request.upload.data());
  }
  std::string range;
  if (request.range) {
    range = std::to_string(request.range->first) + "-" + std::to_string(request.range->second);
    curl_easy_setopt(curl, CURLOPT_RANGE, range.c_str());
  }
  curl_slist* headers = nullptr;
  if (sends_body) {
    // No form encoding is claimed, and no 100-continue round trip is waited for.
    headers = curl_slist_append(headers, "Content-Type: application/octet-stream");
    headers = curl_slist_append(headers, "Expect:");
  }
  for (const std::string& h : request.headers) headers = curl_slist_append(headers, h.c_str());
  if (!request.if_match.empty()) {
    headers = curl_slist_append(headers, ("If-Match: " + request.if_match).c_str());
  }
  if (!options_.aws_sigv4.empty()) {
    // S3 refuses a SigV4 request without x-amz-content-sha256 (libcurl 7.88 does not add it),
    // and libcurl signs it and takes its value as the payload's hash: the SHA-256 of the empty
    // body, as a GET or a HEAD sends none.
    headers = curl_slist_append(
        headers, request.upload.empty() ? kEmptyPayloadSha256Header : kUnsignedPayloadHeader);
    curl_easy_setopt(curl, CURLOPT_AWS_SIGV4, options_.aws_sigv4.c_str());
    curl_easy_setopt(curl, CURLOPT_USERNAME, options_.access_key.c_str());
    curl_easy_setopt(curl, CURLOPT_PASSWORD, options_.secret_key.c_str());
    if (!options_.session_token.empty()) {
      headers =
          curl_slist_append(headers, ("x-amz-security-token: " + options_.session_token).c_str());
    }
  }
  if (headers != nullptr) curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);

  const CURLcode code = curl_easy_perform(curl);
  curl_slist_free_all(headers);
  if (x.dropped > 0) {
    // An error answer: its status is what counts, whether or not its page was read whole.
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
  } else if (x.too_long) {
    // The status too: a 200 (the whole object) and a 206 that runs on are told apart by it.
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
    response.failure = TransportFailure::kPermanent;
    response.body_cut = true;
    response.error =
        "the answer holds more than the " + std::to_string(request.max_body) + " bytes asked for";
  } else if (code != CURLE_OK) {
    response.failure =
        Transient(code) ? TransportFailure::kTransient : TransportFailure::kPermanent;
    response.error = error[0] != '\0' ? std::string(error) : curl_easy_strerror(code);
  } else {
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
  }
  // The handle is reset before its next use; what it points at (the error buffer, `x`) is not
  // read by it between requests.
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, nullptr);
  GiveBack(curl);
  return response;
}

}  // namespace mmfs::origin
