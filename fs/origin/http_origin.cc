#include "fs/origin/http_origin.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <optional>
#include <random>
#include <system_error>
#include <thread>

#include "fs/origin/read_deadline.h"
#include "fs/origin/s3_location.h"

namespace mmfs::origin {
namespace {

std::string StripSlashes(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

uint64_t Jitter() {
  thread_local std::mt19937_64 rng(std::random_device{}());
  return rng();
}

}  // namespace

HttpOrigin::HttpOrigin(std::string base_url, std::unique_ptr<HttpTransport> transport,
                       RetryPolicy retry)
    : base_url_(StripSlashes(std::move(base_url))),
      transport_(std::move(transport)),
      retry_(retry),
      failed_(std::min(retry.failure_hold, retry.total)) {}

std::string HttpOrigin::UrlOf(const std::string& name) const {
  return base_url_ + "/" + EncodeUrlPath(name);
}

const HttpOrigin::Shard* HttpOrigin::Find(ShardRef ref) const {
  if (ref.tree >= trees_.size() || trees_[ref.tree] == nullptr) return nullptr;
  const Tree& t = *trees_[ref.tree];
  return ref.shard < t.shards.size() ? &t.shards[ref.shard] : nullptr;
}

HttpResponse HttpOrigin::Fetch(const HttpRequest& asked, bool* failed_for_good) {
  using Clock = std::chrono::steady_clock;
  if (failed_for_good != nullptr) *failed_for_good = false;
  const Clock::time_point first = Clock::now();
  const Clock::time_point budget_end = first + retry_.total;
  // A READ's own deadline, when this thread serves one: it counts from the READ's arrival, not
  // this request's, and each try is given no more than what is left of it (but a floor).
  const std::optional<Clock::time_point> read_deadline = CurrentReadDeadline();
  const Clock::time_point deadline =
      read_deadline.has_value() ? std::min(budget_end, *read_deadline) : budget_end;
  HttpRequest request = asked;
  for (uint32_t attempt = 0;; ++attempt) {
    const Clock::time_point start = Clock::now();
    if (ReadsStopping()) {
      // The daemon is going away: whoever waits for this answer is gone or leaving too.
      HttpResponse stopped;
      stopped.failure = TransportFailure::kTransient;
      stopped.error = "not sent: the mount is stopping";
      return stopped;
    }
    if (read_deadline.has_value()) {
      request.timeout = std::max(
          retry_.min_try, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - start));
    }
    HttpResponse response = transport_->Send(request);
    stats_.NoteRequest(Clock::now() - start, response.body.size());
    if (!IsRetryable(response)) return response;
    const Clock::time_point now = Clock::now();
    if (now >= deadline || ReadsStopping()) {
      // The store failed these bytes for good if it was given a fair share of the budget: a READ
      // that came late to its turn and had one short try says little of the bytes.
      if (failed_for_good != nullptr) *failed_for_good = !ReadsStopping() && now - first >= retry_.total / 2;
      return response;
    }
    auto wait = std::chrono::duration_cast<Clock::duration>(retry_.Delay(attempt, Jitter()));
    if (wait > deadline - now) wait = deadline - now;
    // The backoff itself: the server is given time before it is asked again.
    std::this_thread::sleep_for(wait);
    stats_.NoteRetry();
  }
}

namespace {

// The text of <tag>...</tag> in an S3 error document (plain text only, at most 200 bytes);
// empty when there is none.
std::string XmlField(const std::string& body, const std::string& tag) {
  const std::string open = "<" + tag + ">", close = "</" + tag + ">";
  const size_t a = body.find(open);
  if (a == std::string::npos) return "";
  const size_t from = a + open.size();
  const size_t b = body.find(close, from);
  if (b == std::string::npos || b - from > 200) return "";
  std::string text = body.substr(from, b - from);
  for (char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == '<') return "";
  }
  return text;
}

bool HasEncoding(const HttpResponse& response) {
  return !response.content_encoding.empty() && response.content_encoding != "identity";
}

// Whether a successful answer's body is encoded (compressed): then it is not the object's bytes.
// (An error page may be compressed: its status says what is wrong.)
bool Encoded(const HttpResponse& response) {
  return response.failure == TransportFailure::kNone &&
         (response.status == 200 || response.status == 206) && HasEncoding(response);
}

// Why the answer to `request` (a range) is not the bytes asked for, when it is encoded or holds
// more than them: each cause named as it is, since the user's fix differs (turn compression off,
// serve ranges, fix the server).
std::string NotTheRange(const HttpResponse& response, const HttpRequest& request) {
  if (HasEncoding(response)) {
    return "the server compresses its answer (Content-Encoding: " + response.content_encoding +
           "); shards are read as the bytes stored, so it must send them unencoded";
  }
  if (response.status == 200) {
    return "the server answers a range request with the whole object (HTTP 200: it ignores "
           "Range); shards are read in ranges";
  }
  const std::string asked = request.range ? "bytes " + std::to_string(request.range->first) +
                                                "-" + std::to_string(request.range->second)
                                          : std::string("the object");
  std::string what = response.status != 0 ? "HTTP " + std::to_string(response.status) + ", " : "";
  what += response.content_length
              ? "Content-Length " + std::to_string(*response.content_length)
              : std::string("no Content-Length: a body without a stated end");
  return "the answer to a request for " + asked + " holds more than the " +
         std::to_string(request.max_body) + " bytes asked for (" + what +
         "); the server does not keep to the range";
}

}  // namespace

Status HttpOrigin::Failed(const HttpResponse& response, const std::string& url) {
  if (response.failure != TransportFailure::kNone) {
    return Status::IoError(url + ": " + response.error);
  }
  if (response.status == 404) return Status::NotFound(url + ": no such object (HTTP 404)");
  std::string why = url + ": HTTP " + std::to_string(response.status);
  if (response.status == 200) why += " (the whole object: the server ignores Range)";
  // An S3 store says why in its error document: "AccessDenied", "PermanentRedirect" (another
  // region), "SignatureDoesNotMatch".
  const std::string code = XmlField(response.error_body, "Code");
  if (!code.empty()) {
    why += " " + code;
    const std::string message = XmlField(response.error_body, "Message");
    if (!message.empty()) why += ": " + message;
  }
  return Status::IoError(why);
}

Result<std::string> HttpOrigin::GetRange(ShardRef ref, const Shard& s, uint64_t offset,
                                         size_t len) {
  if (auto failed = failed_.Find(ref, offset, len, FailedRanges::Clock::now())) {
    stats_.NoteFailedFast();
    return *failed;
  }
  HttpRequest request;
  request.url = s.url;
  request.range = std::make_pair(offset, offset + len - 1);
  request.if_match = s.etag;
  request.max_body = len;
  bool failed_for_good = false;
  HttpResponse response = Fetch(request, &failed_for_good);
  const auto replaced = [&] {
    stats_.NoteError();
    return Status::Corruption(s.name + ": replaced under a running mount (" + s.url +
                              " no longer has ETag " + s.etag + ")");
  };
  if (response.failure == TransportFailure::kNone && response.status == 412) return replaced();
  if (response.failure != TransportFailure::kNone || response.status != 206) {
    stats_.NoteError();
    Status failed = Failed(response, s.url);
    // Retried for most of the budget, for a READ: the same bytes are not asked for again at
    // once. The daemon's own large reads (the fill, prefetch) are not remembered: a span of
    // megabytes would fail the READs of every file in it.
    if (failed_for_good && CurrentReadDeadline().has_value()) {
      failed_.Note(ref, offset, len, failed, FailedRanges::Clock::now());
    }
    return failed;
  }
  if (!s.etag.empty() && !response.etag.empty() && response.etag != s.etag) return replaced();
  if (response.range != std::make_pair(offset, offset + len - 1)) {
    // Other bytes than asked for, whatever their length, are not served.
    stats_.NoteError();
    return Status::IoError(s.url + ": the answer holds " +
                           (response.range ? "bytes " + std::to_string(response.range->first) +
                                                 "-" + std::to_string(response.range->second)
                                           : std::string("no Content-Range")) +
                           ", asked for " + std::to_string(offset) + "-" +
                           std::to_string(offset + len - 1));
  }
  if (response.body.size() != len) {
    stats_.NoteError();
    return Status::IoError(s.url + ": " + std::to_string(response.body.size()) + " bytes at " +
                           std::to_string(offset) + ", asked for " + std::to_string(len));
  }
  return std::move(response.body);
}

Result<std::string> HttpOrigin::FetchObject(const std::string& name, uint64_t max_bytes) {
  HttpRequest request;
  request.url = UrlOf(name);
  request.max_body = max_bytes;
  HttpResponse response = Fetch(request);
  if (Encoded(response)) {
    // A manifest would otherwise be "not valid JSON" and an index a checksum mismatch.
    stats_.NoteError();
    return Status::IoError(request.url + ": the server compresses its answer (Content-Encoding: " +
                           response.content_encoding + "); mmfs reads the bytes stored");
  }
  if (response.body_cut) {
    stats_.NoteError();
    return Status::ResourceExhausted(request.url + ": more than " + std::to_string(max_bytes) +
                                     " bytes");
  }
  if (response.failure != TransportFailure::kNone || response.status != 200) {
    stats_.NoteError();
    return Failed(response, request.url);
  }
  return std::move(response.body);
}

Result<uint64_t> HttpOrigin::ObjectSize(const std::string& name) {
  HttpRequest request;
  request.head = true;
  request.url = UrlOf(name);
  HttpResponse response = Fetch(request);
  if (response.failure != TransportFailure::kNone || response.status != 200) {
    stats_.NoteError();
    return Failed(response, request.url);
  }
  if (!response.content_length) {
    stats_.NoteError();
    return Status::IoError(request.url + ": the server gives no Content-Length for it");
  }
  return *response.content_length;
}

Result<HttpOrigin::Shard> HttpOrigin::CheckShard(const TreeSpec& spec, const ShardSpec& want) {
  Shard s;
  s.name = spec.place.empty() ? want.name : spec.place + "/" + want.name;
  s.url = UrlOf(s.name);
  s.size = want.size;
  const auto context = [&](Status st) {
    return spec.cannot_open.empty() ? st : st.WithContext(spec.cannot_open);
  };
  uint32_t magic = 0;
  // Too small for its magic, by the manifest: asked for its size only, so that a missing or
  // resized shard is named as such first.
  const bool no_room = spec.magic != 0 && want.size < spec.magic_offset + sizeof magic;
  // One ranged GET of the magic (of the first byte, without one) answers everything: the size
  // (Content-Range), the ETag to pin, the magic, and whether the server honours ranges at all.
  HttpRequest request;
  request.url = s.url;
  const uint64_t first = spec.magic != 0 ? spec.magic_offset : 0;
  // Without a magic, the first two bytes (one for a one-byte object): s3rver takes the range
  // 0-0's end of 0 for no end at all and sends the whole object.
  const uint64_t len = spec.magic != 0 ? sizeof magic : std::min<uint64_t>(want.size, 2);
  if (no_room || (want.size == 0 && spec.magic == 0)) {
    request.head = true;  // no byte to read
  } else {
    request.range = std::make_pair(first, first + len - 1);
    request.max_body = len;
  }
  HttpResponse response = Fetch(request);
  if (response.body_cut || Encoded(response)) {
    stats_.NoteError();
    return context(Status::IoError(s.url + ": " + NotTheRange(response, request)));
  }
  const bool ranged = !request.head && response.failure == TransportFailure::kNone &&
                      (response.status == 206 || response.status == 416);
  const bool headed = request.head && response.failure == TransportFailure::kNone &&
                      response.status == 200;
  if (!ranged && !headed) {
    stats_.NoteError();
    return context(Failed(response, s.url));
  }
  const std::optional<uint64_t> size = headed ? response.content_length : response.object_size;
  if (!size) {
    return Status::IoError(s.url + (headed ? ": the server sends no Content-Length"
                                           : ": the server sends no size in Content-Range"));
  }
  if (*size != want.size) {
    return Status::Corruption(s.url + ": size " + std::to_string(*size) +
                              " bytes, the manifest says " + std::to_string(want.size) +
                              spec.size_hint);
  }
  if (response.status == 416) return Failed(response, s.url);  // in range after all: odd server
  if (!request.head && response.range != request.range) {
    return Status::IoError(s.url + ": the answer's Content-Range is not the range asked for");
  }
  // A weak ETag ("W/...") never matches If-Match (a strong comparison): every read would look
  // like a replaced shard. Such a shard is read unpinned (its files' checksums still hold).
  if (response.etag.rfind("W/", 0) != 0) s.etag = response.etag;
  if (no_room) return Status::Corruption(s.url + ": " + spec.bad_magic);
  if (spec.magic != 0) {
    if (response.body.size() != sizeof magic) {
      return Status::IoError(s.url + ": " + std::to_string(response.body.size()) +
                             " bytes of the magic, asked for " + std::to_string(sizeof magic));
    }
    std::memcpy(&magic, response.body.data(), sizeof magic);
    if (magic != spec.magic) return Status::Corruption(s.url + ": " + spec.bad_magic);
  }
  return s;
}

Status HttpOrigin::AddTree(uint32_t tree, const TreeSpec& spec) {
  if (tree < trees_.size() && trees_[tree] != nullptr) {
    return Status::AlreadyExists(base_url_ + ": tree " + std::to_string(tree) +
                                 " is added already");
  }
  // The shards are checked kParallelChecks at a time: a mount waits for the slowest of a few
  // round trips, not for one per shard in turn (80 shards at 20 ms would be 1.6 s).
  // After a failure no new shard is started: the add fails anyway, and a store that answers
  // 503s would otherwise hold the mount for every shard's retries.
  const size_t n = spec.shards.size();
  std::vector<std::optional<Result<Shard>>> checked(n);
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  const auto work = [&] {
    for (size_t i = next.fetch_add(1); i < n && !failed.load(); i = next.fetch_add(1)) {
      checked[i] = CheckShard(spec, spec.shards[i]);
      if (!checked[i]->ok()) failed.store(true);
    }
  };
  std::vector<std::thread> helpers;
  const size_t threads = std::min(n, kParallelChecks);
  for (size_t i = 1; i < threads; ++i) {
    try {
      helpers.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // no more threads to be had: fewer check the shards
    }
  }
  work();
  for (std::thread& t : helpers) t.join();

  auto t = std::make_unique<Tree>();
  t->shards.reserve(n);
  for (std::optional<Result<Shard>>& c : checked) {  // the first failure in the manifest's order
    if (!c.has_value()) continue;  // not checked: another failed first
    if (!c->ok()) return c->status();
    t->shards.push_back(std::move(**c));
  }
  if (trees_.size() <= tree) trees_.resize(static_cast<size_t>(tree) + 1);
  trees_[tree] = std::move(t);
  return Status::Ok();
}

RemoteStatsSnapshot HttpOrigin::Stats() const {
  RemoteStatsSnapshot s = stats_.Snapshot();
  s.url = display_url_.empty() ? base_url_ : display_url_;
  return s;
}

Result<uint64_t> HttpOrigin::ShardSize(ShardRef ref) const {
  const Shard* s = Find(ref);
  if (s == nullptr) return Status::NotFound(ShardName(ref) + ": no such shard");
  return s->size;
}

std::string HttpOrigin::ShardName(ShardRef ref) const {
  if (const Shard* s = Find(ref)) return s->name;
  return "tree " + std::to_string(ref.tree) + " shard " + std::to_string(ref.shard);
}

Result<OriginBytes> HttpOrigin::ReadSpan(ShardRef ref, uint64_t offset, size_t len) {
  const Shard* s = Find(ref);
  if (s == nullptr) return Status::NotFound(ShardName(ref) + ": no such shard");
  if (offset > s->size || len > s->size - offset) {
    return Status::InvalidArgument(s->name + ": read outside the shard");
  }
  if (len == 0) return OriginBytes();
  MMFS_ASSIGN_OR_RETURN(std::string bytes, GetRange(ref, *s, offset, len));
  return OriginBytes(std::move(bytes));
}

}  // namespace mmfs::origin
