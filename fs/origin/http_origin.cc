#include "fs/origin/http_origin.h"

#include <chrono>
#include <cstring>
#include <random>
#include <thread>

namespace mmfs::origin {
namespace {

std::string StripSlashes(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

// RFC 3986 unreserved characters and '/' pass; every other byte is %XX.
std::string EncodePath(const std::string& path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : path) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '.' || c == '_' || c == '~' || c == '/') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
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
      retry_(retry) {}

std::string HttpOrigin::UrlOf(const std::string& name) const {
  return base_url_ + "/" + EncodePath(name);
}

const HttpOrigin::Shard* HttpOrigin::Find(ShardRef ref) const {
  if (ref.tree >= trees_.size() || trees_[ref.tree] == nullptr) return nullptr;
  const Tree& t = *trees_[ref.tree];
  return ref.shard < t.shards.size() ? &t.shards[ref.shard] : nullptr;
}

HttpResponse HttpOrigin::Fetch(const HttpRequest& request) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline = Clock::now() + retry_.total;
  for (uint32_t attempt = 0;; ++attempt) {
    const Clock::time_point start = Clock::now();
    HttpResponse response = transport_->Send(request);
    stats_.NoteRequest(Clock::now() - start, response.body.size());
    if (!IsRetryable(response)) return response;
    const Clock::time_point now = Clock::now();
    if (now >= deadline) return response;
    auto wait = std::chrono::duration_cast<Clock::duration>(retry_.Delay(attempt, Jitter()));
    if (wait > deadline - now) wait = deadline - now;
    // The backoff itself: the server is given time before it is asked again.
    std::this_thread::sleep_for(wait);
    stats_.NoteRetry();
  }
}

Status HttpOrigin::Failed(const HttpResponse& response, const std::string& url) {
  if (response.failure != TransportFailure::kNone) {
    return Status::IoError(url + ": " + response.error);
  }
  if (response.status == 404) return Status::NotFound(url + ": no such object (HTTP 404)");
  return Status::IoError(url + ": HTTP " + std::to_string(response.status));
}

Result<std::string> HttpOrigin::GetRange(const Shard& s, uint64_t offset, size_t len) {
  HttpRequest request;
  request.url = s.url;
  request.range = std::make_pair(offset, offset + len - 1);
  request.if_match = s.etag;
  request.max_body = len;
  HttpResponse response = Fetch(request);
  const auto replaced = [&] {
    stats_.NoteError();
    return Status::Corruption(s.name + ": replaced under a running mount (" + s.url +
                              " no longer has ETag " + s.etag + ")");
  };
  if (response.failure == TransportFailure::kNone && response.status == 412) return replaced();
  if (response.failure != TransportFailure::kNone || response.status != 206) {
    stats_.NoteError();
    return Failed(response, s.url);
  }
  if (!s.etag.empty() && !response.etag.empty() && response.etag != s.etag) return replaced();
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

Status HttpOrigin::AddTree(uint32_t tree, const TreeSpec& spec) {
  if (tree < trees_.size() && trees_[tree] != nullptr) {
    return Status::AlreadyExists(base_url_ + ": tree " + std::to_string(tree) +
                                 " is added already");
  }
  auto t = std::make_unique<Tree>();
  t->shards.reserve(spec.shards.size());
  for (const ShardSpec& want : spec.shards) {
    Shard s;
    s.name = spec.place.empty() ? want.name : spec.place + "/" + want.name;
    s.url = UrlOf(s.name);
    s.size = want.size;
    HttpRequest head;
    head.head = true;
    head.url = s.url;
    HttpResponse response = Fetch(head);
    if (response.failure != TransportFailure::kNone || response.status != 200) {
      stats_.NoteError();
      Status st = Failed(response, s.url);
      return spec.cannot_open.empty() ? st : st.WithContext(spec.cannot_open);
    }
    if (!response.content_length) {
      return Status::IoError(s.url + ": the server sends no Content-Length");
    }
    if (*response.content_length != want.size) {
      return Status::Corruption(s.url + ": size " + std::to_string(*response.content_length) +
                                " bytes, the manifest says " + std::to_string(want.size) +
                                spec.size_hint);
    }
    s.etag = response.etag;
    if (spec.magic != 0) {
      uint32_t magic = 0;
      if (want.size < spec.magic_offset + sizeof magic) {
        return Status::Corruption(s.url + ": " + spec.bad_magic);
      }
      MMFS_ASSIGN_OR_RETURN(std::string bytes, GetRange(s, spec.magic_offset, sizeof magic));
      std::memcpy(&magic, bytes.data(), sizeof magic);
      if (magic != spec.magic) return Status::Corruption(s.url + ": " + spec.bad_magic);
    }
    t->shards.push_back(std::move(s));
  }
  if (trees_.size() <= tree) trees_.resize(static_cast<size_t>(tree) + 1);
  trees_[tree] = std::move(t);
  return Status::Ok();
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
  MMFS_ASSIGN_OR_RETURN(std::string bytes, GetRange(*s, offset, len));
  return OriginBytes(std::move(bytes));
}

}  // namespace mmfs::origin
