#include "cache/cluster_tier.h"

#include <libmemcached-1.0/memcached.h>
#include <libmemcachedutil-1.0/util.h>
#include <xxhash.h>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <spdlog/spdlog.h>

namespace mmfs::cache {

namespace {

constexpr char kMagic[8] = {'M', 'M', 'F', 'S', 'C', 'L', '1', '\0'};
constexpr size_t kHeaderBytes = 24;  // magic, length, xxh3 (little-endian)

memcached_st* M(void* p) { return static_cast<memcached_st*>(p); }
memcached_pool_st* P(void* p) { return static_cast<memcached_pool_st*>(p); }

// A connection borrowed from the pool for one call.
class Client {
 public:
  explicit Client(void* pool) : pool_(P(pool)) {
    struct timespec wait = {2, 0};
    memcached_return_t rc;
    client_ = memcached_pool_fetch(pool_, &wait, &rc);
  }
  ~Client() {
    if (client_ != nullptr) memcached_pool_release(pool_, client_);
  }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;
  memcached_st* get() const { return client_; }

 private:
  memcached_pool_st* pool_;
  memcached_st* client_ = nullptr;
};

bool Succeeded(memcached_return_t rc) {
  return rc == MEMCACHED_SUCCESS || rc == MEMCACHED_NOTFOUND || rc == MEMCACHED_END ||
         rc == MEMCACHED_STORED || rc == MEMCACHED_DELETED || rc == MEMCACHED_BUFFERED;
}

uint64_t LoadU64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// "HOST:PORT" split in two; false unless HOST is non-empty and PORT is 1..65535 and nothing else.
bool SplitHostPort(const std::string& item, std::string* host, in_port_t* port) {
  size_t colon = item.rfind(':');
  if (colon == 0 || colon == std::string::npos) return false;
  // Digits only: strtol alone would take " 80" and "+80".
  if (colon + 1 >= item.size() || !std::isdigit(static_cast<unsigned char>(item[colon + 1]))) {
    return false;
  }
  char* rest = nullptr;
  long value = std::strtol(item.c_str() + colon + 1, &rest, 10);
  if (value <= 0 || value > 65535 || *rest != '\0') return false;
  *host = item.substr(0, colon);
  *port = static_cast<in_port_t>(value);
  return true;
}

}  // namespace

Result<std::vector<std::string>> ClusterTier::ParseServers(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find_first_of(",+", start);
    if (end == std::string::npos) end = list.size();
    std::string item = list.substr(start, end - start);
    start = end + 1;
    if (item.empty()) continue;
    std::string host;
    in_port_t port = 0;
    if (!SplitHostPort(item, &host, &port)) {
      return Status::InvalidArgument("cluster cache server '" + item + "' is not HOST:PORT");
    }
    out.push_back(item);
  }
  if (out.empty()) return Status::InvalidArgument("no cluster cache server given");
  return out;
}

std::string ClusterTier::FindLocalServer(const std::vector<std::string>& servers) {
  std::vector<std::string> mine;
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) == 0 && name[0] != '\0') mine.emplace_back(name);
  ifaddrs* addrs = nullptr;
  if (::getifaddrs(&addrs) == 0) {
    for (ifaddrs* a = addrs; a != nullptr; a = a->ifa_next) {
      if (a->ifa_addr == nullptr) continue;
      char text[INET6_ADDRSTRLEN] = {};
      const int family = a->ifa_addr->sa_family;
      const void* at = nullptr;
      if (family == AF_INET) at = &reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr;
      if (family == AF_INET6) at = &reinterpret_cast<sockaddr_in6*>(a->ifa_addr)->sin6_addr;
      if (at != nullptr && ::inet_ntop(family, at, text, sizeof text) != nullptr) {
        mine.emplace_back(text);
      }
    }
    ::freeifaddrs(addrs);
  }
  std::string found;
  for (const std::string& s : servers) {
    std::string host;
    in_port_t port = 0;
    if (!SplitHostPort(s, &host, &port)) continue;
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
      host = host.substr(1, host.size() - 2);
    }
    if (std::find(mine.begin(), mine.end(), host) == mine.end()) continue;
    if (!found.empty()) return "";  // two servers here (a test, a laptop): no one is ours
    found = s;
  }
  return found;
}

Result<std::unique_ptr<ClusterTier>> ClusterTier::Open(const ClusterTierOptions& options) {
  std::unique_ptr<ClusterTier> tier(new ClusterTier(options));
  memcached_st* m = memcached_create(nullptr);
  if (m == nullptr) return Status::ResourceExhausted("memcached_create");
  tier->master_ = m;
  const uint64_t timeout = static_cast<uint64_t>(std::max(1, options.timeout_ms));
  memcached_behavior_set(m, MEMCACHED_BEHAVIOR_DISTRIBUTION, MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA);
  memcached_behavior_set(m, MEMCACHED_BEHAVIOR_BINARY_PROTOCOL, 1);
  memcached_behavior_set(m, MEMCACHED_BEHAVIOR_TCP_NODELAY, 1);
  memcached_behavior_set(m, MEMCACHED_BEHAVIOR_CONNECT_TIMEOUT, timeout);
  memcached_behavior_set(m, MEMCACHED_BEHAVIOR_POLL_TIMEOUT, timeout);
  memcached_behavior_set(m, MEMCACHED_BEHAVIOR_SND_TIMEOUT, timeout * 1000);
  memcached_behavior_set(m, MEMCACHED_BEHAVIOR_RCV_TIMEOUT, timeout * 1000);
  // Two failures in a row take a server out of the ring (its keys rehash to the others); it is
  // tried again after the retry timeout.
  memcached_behavior_set(m, MEMCACHED_BEHAVIOR_SERVER_FAILURE_LIMIT, 2);
  memcached_behavior_set(m, MEMCACHED_BEHAVIOR_REMOVE_FAILED_SERVERS, 1);
  memcached_behavior_set(m, MEMCACHED_BEHAVIOR_RETRY_TIMEOUT, 2);
  for (const std::string& s : options.servers) {
    std::string host;
    in_port_t port = 0;
    if (!SplitHostPort(s, &host, &port)) {
      return Status::InvalidArgument("server '" + s + "' is not HOST:PORT");  // named by the caller
    }
    memcached_return_t rc = memcached_server_add(m, host.c_str(), port);
    if (rc != MEMCACHED_SUCCESS) {
      return Status::InvalidArgument("cluster cache server " + s + ": " +
                                     memcached_strerror(m, rc));
    }
    tier->health_[host + ":" + std::to_string(port)].server = host + ":" + std::to_string(port);
  }
  // The same servers in the same order, hashed the same way, but never ejected: every host then
  // agrees on which server a mark's name belongs to.
  memcached_st* owners = memcached_create(nullptr);
  if (owners == nullptr) return Status::ResourceExhausted("memcached_create");
  tier->owner_map_ = owners;
  memcached_behavior_set(owners, MEMCACHED_BEHAVIOR_DISTRIBUTION,
                         MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA);
  for (const std::string& s : options.servers) {
    std::string host;
    in_port_t port = 0;
    if (SplitHostPort(s, &host, &port)) memcached_server_add(owners, host.c_str(), port);
  }
  tier->pool_ = memcached_pool_create(m, 1, std::max(2u, options.connections + 1));
  if (tier->pool_ == nullptr) return Status::ResourceExhausted("memcached_pool_create");
  tier->writer_ = std::thread([t = tier.get()] { t->WriterLoop(); });
  return tier;
}

ClusterTier::~ClusterTier() {
  if (writer_.joinable()) {
    Flush();
    {
      std::lock_guard<std::mutex> lock(queue_mu_);
      stop_ = true;
    }
    queue_cv_.notify_all();
    writer_.join();
  }
  if (pool_ != nullptr) memcached_pool_destroy(P(pool_));
  if (master_ != nullptr) memcached_free(M(master_));
  if (owner_map_ != nullptr) memcached_free(M(owner_map_));
}

std::string ClusterTier::ItemKey(CacheKey key, size_t part) const {
  char buf[48];
  if (part == 0) {
    std::snprintf(buf, sizeof buf, "/%016llx", static_cast<unsigned long long>(key));
  } else {
    std::snprintf(buf, sizeof buf, "/%016llx/%zu", static_cast<unsigned long long>(key), part);
  }
  return "mmfs/" + options_.name_space + buf;
}

void ClusterTier::Note(void* client, const std::string& item_key, int code) {
  auto rc = static_cast<memcached_return_t>(code);
  bool ok = Succeeded(rc);
  if (rc == MEMCACHED_TIMEOUT) {
    timeouts_.fetch_add(1, std::memory_order_relaxed);
  } else if (!ok) {
    errors_.fetch_add(1, std::memory_order_relaxed);
  }
  // A multi-get spans servers: its outcome says nothing about one of them.
  if (item_key.empty()) return;
  memcached_return_t lookup_rc;
  const memcached_instance_st* server =
      memcached_server_by_key(M(client), item_key.data(), item_key.size(), &lookup_rc);
  if (server == nullptr) return;
  std::string name = std::string(memcached_server_name(server)) + ":" +
                     std::to_string(memcached_server_port(server));
  std::lock_guard<std::mutex> lock(health_mu_);
  ClusterServerHealth& h = health_[name];
  h.server = name;
  ++h.requests;
  if (rc == MEMCACHED_TIMEOUT) ++h.timeouts;
  if (!ok) ++h.errors;
  if (h.up != ok) {
    h.up = ok;
    // One line per state change, at most one per server every 10 s (a flapping server).
    auto now = std::chrono::steady_clock::now();
    if (now - h.last_log < std::chrono::seconds(10)) return;
    h.last_log = now;
    if (ok) {
      spdlog::info("cluster cache server {} answers again", name);
    } else {
      spdlog::warn("cluster cache server {} is failing ({}); its reads go to the origin", name,
                   memcached_strerror(M(client), rc));
    }
  }
}

Blob ClusterTier::Assemble(CacheKey key, const std::string& first, void* client) {
  auto damaged = [&] {
    damaged_.fetch_add(1, std::memory_order_relaxed);
    std::string k = ItemKey(key, 0);
    memcached_delete(M(client), k.data(), k.size(), 0);
    return Blob();
  };
  if (first.size() < kHeaderBytes || std::memcmp(first.data(), kMagic, sizeof kMagic) != 0) {
    return damaged();
  }
  const uint64_t total = LoadU64(first.data() + 8);
  const uint64_t sum = LoadU64(first.data() + 16);
  const size_t head = first.size() - kHeaderBytes;
  if (head > total || total > (1ull << 36)) return damaged();
  auto out = std::make_shared<std::string>();
  out->reserve(total);
  out->append(first, kHeaderBytes, head);
  if (out->size() < total) {
    const size_t parts = (total - head + options_.item_bytes - 1) / options_.item_bytes;
    std::vector<std::string> keys;
    std::vector<const char*> key_ptrs;
    std::vector<size_t> key_lens;
    for (size_t p = 1; p <= parts; ++p) keys.push_back(ItemKey(key, p));
    for (const std::string& k : keys) {
      key_ptrs.push_back(k.data());
      key_lens.push_back(k.size());
    }
    memcached_return_t rc = memcached_mget(M(client), key_ptrs.data(), key_lens.data(), keys.size());
    Note(client, "", rc);
    // A server down (not yet out of the ring) took no keys: a part missing then is a miss,
    // not damage, and the value stays for when the server answers.
    const bool partial = rc != MEMCACHED_SUCCESS;
    std::unordered_map<std::string, std::string> got;
    while (memcached_result_st* r = memcached_fetch_result(M(client), nullptr, &rc)) {
      got.emplace(std::string(memcached_result_key_value(r), memcached_result_key_length(r)),
                  std::string(memcached_result_value(r), memcached_result_length(r)));
      memcached_result_free(r);
    }
    for (const std::string& k : keys) {
      auto it = got.find(k);
      if (it == got.end() && partial) return Blob();
      if (it == got.end()) return damaged();  // a part was evicted: the value is incomplete
      out->append(it->second);
    }
  }
  if (out->size() != total || XXH3_64bits(out->data(), out->size()) != sum) return damaged();
  return out;
}

Blob ClusterTier::Lookup(CacheKey key) {
  lookups_.fetch_add(1, std::memory_order_relaxed);
  Client client(pool_);
  if (client.get() == nullptr) {
    errors_.fetch_add(1, std::memory_order_relaxed);
    misses_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  std::string k = ItemKey(key, 0);
  size_t len = 0;
  uint32_t flags = 0;
  memcached_return_t rc;
  char* value = memcached_get(client.get(), k.data(), k.size(), &len, &flags, &rc);
  Note(client.get(), k, rc);
  Blob blob;
  if (value != nullptr) {
    std::string first(value, len);
    std::free(value);
    blob = Assemble(key, first, client.get());
  }
  if (blob == nullptr) {
    misses_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  hits_.fetch_add(1, std::memory_order_relaxed);
  bytes_in_.fetch_add(blob->size(), std::memory_order_relaxed);
  return blob;
}

std::unordered_map<CacheKey, Blob> ClusterTier::LookupMany(const std::vector<CacheKey>& keys) {
  std::unordered_map<CacheKey, Blob> out;
  if (keys.empty()) return out;
  lookups_.fetch_add(keys.size(), std::memory_order_relaxed);
  Client client(pool_);
  if (client.get() == nullptr) {
    errors_.fetch_add(1, std::memory_order_relaxed);
    misses_.fetch_add(keys.size(), std::memory_order_relaxed);
    return out;
  }
  std::vector<std::string> item_keys;
  std::unordered_map<std::string, CacheKey> key_of;
  for (CacheKey k : keys) {
    item_keys.push_back(ItemKey(k, 0));
    key_of[item_keys.back()] = k;
  }
  std::vector<const char*> ptrs;
  std::vector<size_t> lens;
  for (const std::string& k : item_keys) {
    ptrs.push_back(k.data());
    lens.push_back(k.size());
  }
  memcached_return_t rc = memcached_mget(client.get(), ptrs.data(), lens.data(), item_keys.size());
  Note(client.get(), "", rc);
  std::vector<std::pair<CacheKey, std::string>> firsts;
  // Whatever the code says, what the servers that took their keys answer is fetched: with one
  // server down (and not yet out of the ring) the request fails for its keys only
  // (SERVER_TEMPORARILY_DISABLED, SOME_ERRORS...), and the others' values still come.
  {
    while (memcached_result_st* r = memcached_fetch_result(client.get(), nullptr, &rc)) {
      auto it = key_of.find(std::string(memcached_result_key_value(r), memcached_result_key_length(r)));
      if (it != key_of.end()) {
        firsts.emplace_back(it->second,
                            std::string(memcached_result_value(r), memcached_result_length(r)));
      }
      memcached_result_free(r);
    }
  }
  // Parts of large values only after every first item is fetched (one request at a time).
  for (auto& [k, first] : firsts) {
    if (Blob b = Assemble(k, first, client.get())) {
      bytes_in_.fetch_add(b->size(), std::memory_order_relaxed);
      out.emplace(k, std::move(b));
    }
  }
  hits_.fetch_add(out.size(), std::memory_order_relaxed);
  misses_.fetch_add(keys.size() - out.size(), std::memory_order_relaxed);
  return out;
}

void ClusterTier::Insert(CacheKey key, Blob blob) {
  if (blob == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    if (queued_bytes_ + blob->size() > options_.max_queued_bytes) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    queued_bytes_ += blob->size();
    queue_.emplace_back(key, std::move(blob));
  }
  inserts_.fetch_add(1, std::memory_order_relaxed);
  queue_cv_.notify_one();
}

bool ClusterTier::Write(CacheKey key, const Blob& blob, void* client) {
  const std::string& v = *blob;
  const size_t head = std::min(v.size(), options_.item_bytes - kHeaderBytes);
  // The parts first, the header item last: a reader never finds a header without its parts.
  size_t part = 1;
  for (size_t at = head; at < v.size(); at += options_.item_bytes, ++part) {
    std::string k = ItemKey(key, part);
    size_t n = std::min(options_.item_bytes, v.size() - at);
    memcached_return_t rc = memcached_set(M(client), k.data(), k.size(), v.data() + at, n, 0, 0);
    Note(client, k, rc);
    if (rc != MEMCACHED_SUCCESS) return false;
    bytes_out_.fetch_add(n, std::memory_order_relaxed);
  }
  std::string first(kHeaderBytes + head, '\0');
  uint64_t total = v.size(), sum = XXH3_64bits(v.data(), v.size());
  std::memcpy(first.data(), kMagic, sizeof kMagic);
  std::memcpy(first.data() + 8, &total, sizeof total);
  std::memcpy(first.data() + 16, &sum, sizeof sum);
  std::memcpy(first.data() + kHeaderBytes, v.data(), head);
  std::string k = ItemKey(key, 0);
  memcached_return_t rc = memcached_set(M(client), k.data(), k.size(), first.data(), first.size(), 0, 0);
  Note(client, k, rc);
  if (rc != MEMCACHED_SUCCESS) return false;
  bytes_out_.fetch_add(first.size(), std::memory_order_relaxed);
  writes_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

bool ClusterTier::InsertNow(CacheKey key, const Blob& blob) {
  if (blob == nullptr) return false;
  inserts_.fetch_add(1, std::memory_order_relaxed);
  Client client(pool_);
  if (client.get() == nullptr) {
    errors_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  return Write(key, blob, client.get());
}

std::string ClusterTier::MarkKey(const std::string& name) const {
  return "mmfs/" + options_.name_space + "/mark/" + name;
}

std::string ClusterTier::MarkGroup(const std::string& name) const {
  // Marks that differ only after their last '/' (a chunk's claim and done) share a server.
  const size_t slash = name.rfind('/');
  return MarkKey(slash == std::string::npos ? name : name.substr(0, slash));
}

ClusterTier::MarkResult ClusterTier::AddMark(const std::string& name, std::chrono::seconds ttl) {
  Client client(pool_);
  if (client.get() == nullptr) return MarkResult::kFailed;
  const std::string k = MarkKey(name), g = MarkGroup(name);
  memcached_return_t rc = memcached_add_by_key(client.get(), g.data(), g.size(), k.data(),
                                               k.size(), "1", 1,
                                               static_cast<time_t>(ttl.count()), 0);
  if (rc == MEMCACHED_NOTSTORED || rc == MEMCACHED_DATA_EXISTS) {
    Note(client.get(), g, MEMCACHED_SUCCESS);
    return MarkResult::kExists;
  }
  Note(client.get(), g, rc);
  return rc == MEMCACHED_SUCCESS ? MarkResult::kAdded : MarkResult::kFailed;
}

bool ClusterTier::SetMark(const std::string& name, std::chrono::seconds ttl) {
  Client client(pool_);
  if (client.get() == nullptr) return false;
  const std::string k = MarkKey(name), g = MarkGroup(name);
  memcached_return_t rc = memcached_set_by_key(client.get(), g.data(), g.size(), k.data(),
                                               k.size(), "1", 1,
                                               static_cast<time_t>(ttl.count()), 0);
  Note(client.get(), g, rc);
  return rc == MEMCACHED_SUCCESS;
}

std::optional<bool> ClusterTier::HasMark(const std::string& name) {
  Client client(pool_);
  if (client.get() == nullptr) return std::nullopt;
  const std::string k = MarkKey(name), g = MarkGroup(name);
  size_t len = 0;
  uint32_t flags = 0;
  memcached_return_t rc;
  char* value = memcached_get_by_key(client.get(), g.data(), g.size(), k.data(), k.size(), &len,
                                     &flags, &rc);
  Note(client.get(), g, rc);
  std::free(value);
  if (rc == MEMCACHED_SUCCESS) return true;
  if (rc == MEMCACHED_NOTFOUND) return false;
  return std::nullopt;
}

void ClusterTier::DeleteMark(const std::string& name) {
  Client client(pool_);
  if (client.get() == nullptr) return;
  const std::string k = MarkKey(name), g = MarkGroup(name);
  memcached_return_t rc =
      memcached_delete_by_key(client.get(), g.data(), g.size(), k.data(), k.size(), 0);
  Note(client.get(), g, rc);
}

std::string ClusterTier::ServerOfMark(const std::string& name) const {
  const std::string k = MarkGroup(name);
  std::lock_guard<std::mutex> lock(owner_mu_);
  memcached_return_t rc;
  const memcached_instance_st* server =
      memcached_server_by_key(M(owner_map_), k.data(), k.size(), &rc);
  if (server == nullptr) return "";
  return std::string(memcached_server_name(server)) + ":" +
         std::to_string(memcached_server_port(server));
}

void ClusterTier::WriterLoop() {
  std::unique_lock<std::mutex> lock(queue_mu_);
  for (;;) {
    queue_cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stop_
    auto [key, blob] = std::move(queue_.front());
    queue_.pop_front();
    writing_ = true;
    lock.unlock();
    {
      Client client(pool_);
      if (client.get() != nullptr) {
        Write(key, blob, client.get());
      } else {
        errors_.fetch_add(1, std::memory_order_relaxed);
      }
    }
    lock.lock();
    queued_bytes_ -= blob->size();
    writing_ = false;
    if (queue_.empty()) drained_cv_.notify_all();
  }
}

void ClusterTier::Flush() {
  std::unique_lock<std::mutex> lock(queue_mu_);
  drained_cv_.wait(lock, [&] { return queue_.empty() && !writing_; });
}

TierCounters ClusterTier::Counters() const {
  TierCounters c;
  c.lookups = lookups_.load(std::memory_order_relaxed);
  c.hits = hits_.load(std::memory_order_relaxed);
  c.misses = misses_.load(std::memory_order_relaxed);
  c.inserts = inserts_.load(std::memory_order_relaxed);
  c.corrupt = damaged_.load(std::memory_order_relaxed);
  c.write_errors = errors_.load(std::memory_order_relaxed);
  c.dropped = dropped_.load(std::memory_order_relaxed);
  return c;
}

std::optional<uint64_t> ClusterTier::CapacityBytes() const {
  struct Sum {
    uint64_t bytes = 0;
    bool answered = false;
  };
  const auto add = [](const memcached_instance_st* /*server*/, const char* key,
                      size_t key_length, const char* value, size_t value_length, void* context) {
    auto* s = static_cast<Sum*>(context);
    const std::string_view k(key, key_length);
    if (k != "limit_maxbytes" && k != "extstore_limit_maxbytes") return MEMCACHED_SUCCESS;
    uint64_t n = 0;
    for (size_t i = 0; i < value_length; ++i) {
      if (value[i] < '0' || value[i] > '9' || n > (UINT64_MAX - 9) / 10) return MEMCACHED_SUCCESS;
      n = n * 10 + static_cast<uint64_t>(value[i] - '0');
    }
    s->bytes += n;
    s->answered = true;
    return MEMCACHED_SUCCESS;
  };
  // One client per server: asked through one client of several servers, libmemcached gives up
  // on every server's stats when any of them does not answer.
  const uint64_t timeout = static_cast<uint64_t>(std::max(1, options_.timeout_ms));
  uint64_t total = 0;
  bool any = false;
  for (const std::string& server : options_.servers) {
    std::string host;
    in_port_t port = 0;
    if (!SplitHostPort(server, &host, &port)) continue;
    memcached_st* one = memcached_create(nullptr);
    if (one == nullptr) continue;
    memcached_behavior_set(one, MEMCACHED_BEHAVIOR_BINARY_PROTOCOL, 1);
    memcached_behavior_set(one, MEMCACHED_BEHAVIOR_CONNECT_TIMEOUT, timeout);
    memcached_behavior_set(one, MEMCACHED_BEHAVIOR_POLL_TIMEOUT, timeout);
    memcached_behavior_set(one, MEMCACHED_BEHAVIOR_SND_TIMEOUT, timeout * 1000);
    memcached_behavior_set(one, MEMCACHED_BEHAVIOR_RCV_TIMEOUT, timeout * 1000);
    Sum sum;
    if (memcached_server_add(one, host.c_str(), port) == MEMCACHED_SUCCESS) {
      (void)memcached_stat_execute(one, nullptr, add, &sum);
    }
    memcached_free(one);
    if (sum.answered) {
      total += sum.bytes;
      any = true;
    }
  }
  if (!any) return std::nullopt;
  return total;
}

ClusterCounters ClusterTier::ClusterStats() const {
  ClusterCounters c;
  c.hits = hits_.load(std::memory_order_relaxed);
  c.misses = misses_.load(std::memory_order_relaxed);
  c.errors = errors_.load(std::memory_order_relaxed);
  c.timeouts = timeouts_.load(std::memory_order_relaxed);
  c.damaged = damaged_.load(std::memory_order_relaxed);
  c.bytes_in = bytes_in_.load(std::memory_order_relaxed);
  c.bytes_out = bytes_out_.load(std::memory_order_relaxed);
  c.writes = writes_.load(std::memory_order_relaxed);
  c.dropped = dropped_.load(std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    c.queued_bytes = queued_bytes_;
  }
  std::lock_guard<std::mutex> lock(health_mu_);
  for (const auto& [name, h] : health_) c.servers.push_back(h);
  return c;
}

}  // namespace mmfs::cache
