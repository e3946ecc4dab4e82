#include "cache/cluster_tier.h"

#include <gtest/gtest.h>
#include <libmemcached-1.0/memcached.h>

#include <random>

#include "tests/memcached_helper.h"

namespace mmfs::cache {
namespace {

using testing::MemcachedServer;

Blob Bytes(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return std::make_shared<const std::string>(std::move(s));
}

class ClusterTierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (auto& s : servers_) ASSERT_TRUE(s.ready()) << "memcached did not start (is it installed?)";
  }
  std::unique_ptr<ClusterTier> Open(std::string ns = "ds-test") {
    ClusterTierOptions o;
    for (auto& s : servers_) o.servers.push_back(s.address());
    o.name_space = std::move(ns);
    o.item_bytes = 64 << 10;  // small items, so that values of a few hundred KiB are split
    auto t = ClusterTier::Open(o);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return t.ok() ? std::move(t).value() : nullptr;
  }
  MemcachedServer servers_[3];
};

TEST_F(ClusterTierTest, ServersAreParsedAndBadOnesNamed) {
  auto ok = ClusterTier::ParseServers("10.0.0.1:11211,host-b:11212+host-c:1");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->size(), 3u);
  auto bad = ClusterTier::ParseServers("10.0.0.1:11211,nohostport");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("nohostport"), std::string::npos);
  EXPECT_FALSE(ClusterTier::ParseServers("h:0").ok());
  EXPECT_FALSE(ClusterTier::ParseServers("").ok());
}

TEST_F(ClusterTierTest, ValuesLargeAndSmallComeBackExactAndNamespacesDoNotMix) {
  auto a = Open("ds-a");
  auto b = Open("ds-b");
  ASSERT_TRUE(a && b);
  Blob small = Bytes(100, 1), large = Bytes(300 << 10, 2), empty = Bytes(0, 3);
  a->Insert(1, small);
  a->Insert(2, large);
  a->Insert(3, empty);
  a->Flush();
  EXPECT_EQ(*a->Lookup(1), *small);
  EXPECT_EQ(*a->Lookup(2), *large);  // five items, reassembled
  EXPECT_EQ(*a->Lookup(3), *empty);
  EXPECT_EQ(a->Lookup(4), nullptr);
  EXPECT_EQ(b->Lookup(1), nullptr) << "another dataset's key";
  auto many = a->LookupMany({1, 2, 3, 4});
  EXPECT_EQ(many.size(), 3u);
  EXPECT_EQ(*many.at(2), *large);
  ClusterCounters c = a->ClusterStats();
  EXPECT_EQ(c.writes, 3u);
  EXPECT_EQ(c.damaged, 0u);
  EXPECT_GT(c.bytes_out, (300u << 10));
  EXPECT_EQ(c.servers.size(), 3u);
  // The keys spread over the servers.
  int used = 0;
  for (const auto& s : c.servers) used += s.requests > 0;
  EXPECT_GE(used, 1);
}

TEST_F(ClusterTierTest, DamagedValuesAreNeverServed) {
  auto t = Open();
  ASSERT_TRUE(t);
  Blob v = Bytes(200 << 10, 7);
  for (CacheKey k = 1; k <= 4; ++k) t->Insert(k, v);
  t->Flush();
  // Overwrite items behind the tier's back: a flipped payload byte, a wrong magic, a missing part.
  memcached_st* m = memcached_create(nullptr);
  memcached_behavior_set(m, MEMCACHED_BEHAVIOR_DISTRIBUTION, MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA);
  memcached_behavior_set(m, MEMCACHED_BEHAVIOR_BINARY_PROTOCOL, 1);
  for (auto& s : servers_) {
    std::string a = s.address();
    memcached_server_add(m, a.substr(0, a.find(':')).c_str(),
                         static_cast<in_port_t>(std::stoi(a.substr(a.find(':') + 1))));
  }
  auto get = [&](const std::string& k) {
    size_t len;
    uint32_t flags;
    memcached_return_t rc;
    char* p = memcached_get(m, k.data(), k.size(), &len, &flags, &rc);
    std::string s = p != nullptr ? std::string(p, len) : "";
    std::free(p);
    return s;
  };
  auto set = [&](const std::string& k, const std::string& v) {
    ASSERT_EQ(memcached_set(m, k.data(), k.size(), v.data(), v.size(), 0, 0), MEMCACHED_SUCCESS);
  };
  std::string k1 = "mmfs/ds-test/0000000000000001", k2 = "mmfs/ds-test/0000000000000002";
  std::string first = get(k1);
  ASSERT_GT(first.size(), 100u);
  first[100] ^= 0x40;
  set(k1, first);
  std::string second = get(k2);
  second[0] = 'X';
  set(k2, second);
  memcached_delete(m, "mmfs/ds-test/0000000000000003/2", 31, 0);
  set("mmfs/ds-test/0000000000000004/1", "short");
  memcached_free(m);
  for (CacheKey k = 1; k <= 4; ++k) EXPECT_EQ(t->Lookup(k), nullptr) << k;
  EXPECT_EQ(t->ClusterStats().damaged, 4u);
  // Damaged values are deleted, so the next fill replaces them.
  t->Insert(1, v);
  t->Flush();
  EXPECT_EQ(*t->Lookup(1), *v);
}

// Each server started with -m 64 and no extstore: 64 MiB each, and what a dead one held counts
// nothing.
TEST_F(ClusterTierTest, CapacityIsWhatTheAnsweringServersCanHold) {
  constexpr uint64_t kEach = uint64_t{64} << 20;
  auto t = Open();
  ASSERT_TRUE(t);
  EXPECT_EQ(t->CapacityBytes(), std::optional<uint64_t>(3 * kEach));
  // A server down from the start (no earlier answer of its known to the client) counts nothing
  // and takes nothing from the others.
  servers_[2].Kill();
  auto later = Open();
  ASSERT_TRUE(later);
  EXPECT_EQ(later->CapacityBytes(), std::optional<uint64_t>(2 * kEach));
  EXPECT_EQ(t->CapacityBytes(), std::optional<uint64_t>(2 * kEach));
  servers_[0].Kill();
  servers_[1].Kill();
  EXPECT_EQ(t->CapacityBytes(), std::nullopt);
}

TEST_F(ClusterTierTest, ADeadServerIsAMissNeverAnErrorAndOnlyItsShareIsLost) {
  auto t = Open();
  ASSERT_TRUE(t);
  constexpr CacheKey kKeys = 300;
  for (CacheKey k = 0; k < kKeys; ++k) t->Insert(k, Bytes(512, static_cast<unsigned>(k)));
  t->Flush();
  servers_[1].Kill();
  std::vector<CacheKey> on_live_servers;
  for (CacheKey k = 0; k < kKeys; ++k) {
    Blob b = t->Lookup(k);
    if (b != nullptr) {
      on_live_servers.push_back(k);
      EXPECT_EQ(*b, *Bytes(512, static_cast<unsigned>(k)));
    }
  }
  // About two thirds stay (ketama); the rest are misses, counted as errors, never exceptions.
  const int hits = static_cast<int>(on_live_servers.size());
  EXPECT_GT(hits, static_cast<int>(kKeys) / 3);
  EXPECT_LT(hits, static_cast<int>(kKeys));
  ClusterCounters c = t->ClusterStats();
  EXPECT_GT(c.errors + c.timeouts, 0u);
  int down = 0;
  for (const auto& s : c.servers) down += !s.up;
  EXPECT_EQ(down, 1);
  // Writes keep going to the live servers. Which keys those hold depends on the ports the
  // servers got (ketama hashes host:port), so the test rewrites every key and expects the new
  // value back for exactly those it found on a live server above: consistent hashing keeps
  // them there whether or not a client has ejected the dead server yet.
  for (CacheKey k = 0; k < kKeys; ++k) t->Insert(k, Bytes(64, 9));
  t->Flush();
  for (CacheKey k : on_live_servers) {
    Blob b = t->Lookup(k);
    ASSERT_NE(b, nullptr) << "key " << k << " was on a live server";
    EXPECT_EQ(*b, *Bytes(64, 9)) << k;
  }
}

}  // namespace
}  // namespace mmfs::cache
