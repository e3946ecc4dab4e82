// The fill shared by a job's hosts through memcached (fs/readahead/fill_share.h), without a
// mount: each "host" is a dataset, a counting origin and a tier stack with a cluster tier on the
// same real memcached servers. Each chunk comes from the store once for the job; a server lost
// after the fill, or a host that claimed chunks and went, costs store reads, never a file.
#include "fs/readahead/fill_share.h"

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cache/cluster_tier.h"
#include "cache/tier_stack.h"
#include "fs/format/dataset.h"
#include "fs/metrics/metrics.h"
#include "fs/read/origin_reader.h"
#include "fs/readahead/filler.h"
#include "tests/memcached_helper.h"
#include "tests/origin_helper.h"
#include "tests/pack_helper.h"
#include "tests/test_util.h"

namespace mmfs::fs {
namespace {

using namespace std::chrono_literals;
using testing::TempDir;

constexpr int kShareFiles = 300;
constexpr size_t kShareFileBytes = 6000;
constexpr uint64_t kChunkBytes = 64 << 10;

std::string ShareContents(int i) {
  std::string s(kShareFileBytes, '\0');
  for (size_t k = 0; k < s.size(); ++k) s[k] = static_cast<char>('A' + (i * 7 + k) % 26);
  return s;
}

// One host of the job: its own view of the dataset, its store reads counted, its tiers.
struct Host {
  std::unique_ptr<format::Dataset> dataset;
  std::unique_ptr<origin::Origin> origin;
  testing::CountingOrigin* io = nullptr;
  Metrics metrics;
  std::unique_ptr<OriginReader> reader;
  std::unique_ptr<cache::TierStack> tiers;
  std::unique_ptr<Filler> filler;

  // Regular files the host's RAM tier holds with their packed contents.
  int HeldExactly() const {
    int n = 0;
    for (int i = 0; i < kShareFiles; ++i) {
      auto e = dataset->GetEntry(static_cast<uint64_t>(i) + 2);  // the root and d/ come first
      if (!e.ok()) continue;
      auto blob = tiers->ram().Lookup(e->index);
      if (blob != nullptr && *blob == ShareContents(i)) ++n;
    }
    return n;
  }
};

class FillShareTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // spdlog's registry is made at its first use; two hosts' fill threads would make it at
    // once (libspdlog is not instrumented: TSan sees its construction race). The daemon logs
    // on its main thread first; so does this test.
    spdlog::default_logger();
    dir_ = new TempDir();
    for (int i = 0; i < kShareFiles; ++i) {
      testing::WriteFile(*dir_ / ("src/d/" + std::to_string(10000 + i) + ".txt"), ShareContents(i));
    }
    ASSERT_TRUE(testing::PackFolder(*dir_ / "src", *dir_ / "ds").ok());
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override {
    for (auto& s : servers_) ASSERT_TRUE(s.ready()) << "memcached did not start";
  }
  std::vector<std::string> Addresses() const {
    return {servers_[0].address(), servers_[1].address()};
  }
  // A host whose own server is `self` (empty: none), its fill started with `peer_wait`; each
  // store read takes 30 ms, so that two hosts started together both get to claim chunks.
  std::unique_ptr<Host> StartHost(const std::string& self, std::chrono::milliseconds peer_wait) {
    auto h = std::make_unique<Host>();
    auto ds = format::Dataset::Open(*dir_ / "ds");
    EXPECT_TRUE(ds.ok());
    if (!ds.ok()) return nullptr;
    h->dataset = std::move(ds).value();
    auto counting = std::make_unique<testing::CountingOrigin>(*h->dataset);
    h->io = counting.get();
    h->io->delay_ms = 30;
    h->origin = std::move(counting);
    h->reader = std::make_unique<OriginReader>(*h->dataset, *h->origin, h->metrics,
                                               OriginReaderOptions{});
    cache::ClusterTierOptions c;
    c.servers = Addresses();
    c.name_space = "fill-share-test";
    c.timeout_ms = 500;
    auto cluster = cache::ClusterTier::Open(c);
    EXPECT_TRUE(cluster.ok());
    if (!cluster.ok()) return nullptr;
    h->tiers = std::make_unique<cache::TierStack>(64 << 20, h->dataset->manifest().files, nullptr,
                                                  std::move(cluster).value());
    FillOptions o;
    o.mode = FillMode::kOn;
    o.chunk_bytes = kChunkBytes;
    o.window = 50ms;
    o.cluster_self = self;
    o.peer_wait = peer_wait;
    h->filler = std::make_unique<Filler>(*h->dataset, *h->reader, *h->tiers, o,
                                         [] { return uint64_t{0}; });
    return h;
  }
  // The packed dataset's shards: what the whole job should read from the store, about.
  uint64_t ShardBytes(const Host& h) const {
    uint64_t n = 0;
    for (const auto& shard : h.dataset->manifest().shards) n += shard.size;
    return n;
  }

  static TempDir* dir_;
  testing::MemcachedServer servers_[2];
};

TempDir* FillShareTest::dir_ = nullptr;

TEST_F(FillShareTest, TwoHostsFetchEachChunkFromTheStoreOnce) {
  auto a = StartHost(Addresses()[0], 20s);
  auto b = StartHost(Addresses()[1], 20s);
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(a->filler->WaitDone(60s));
  ASSERT_TRUE(b->filler->WaitDone(60s));
  EXPECT_EQ(a->HeldExactly(), kShareFiles);
  EXPECT_EQ(b->HeldExactly(), kShareFiles);
  const FillStats sa = a->filler->Stats(), sb = b->filler->Stats();
  EXPECT_TRUE(sa.shared);
  ASSERT_GT(sa.hosts.chunks, 4u);
  EXPECT_EQ(sa.hosts.chunks, sb.hosts.chunks);
  // Each host owns about half the chunks (ketama over two servers), and every chunk was read
  // from the store by exactly one of them.
  EXPECT_GT(sa.hosts.own_chunks, 0u);
  EXPECT_GT(sb.hosts.own_chunks, 0u);
  EXPECT_EQ(sa.hosts.own_chunks + sb.hosts.own_chunks, sa.hosts.chunks);
  EXPECT_EQ(sa.hosts.claimed_chunks + sb.hosts.claimed_chunks, sa.hosts.chunks);
  EXPECT_GT(sa.hosts.peer_files, 0u);
  EXPECT_GT(sb.hosts.peer_files, 0u);
  const uint64_t job_bytes = a->io->bytes.load() + b->io->bytes.load();
  EXPECT_LE(static_cast<double>(job_bytes), 1.05 * static_cast<double>(ShardBytes(*a)))
      << "a: " << a->io->bytes.load() << ", b: " << b->io->bytes.load();
}

// Host a filled the job's cluster, then one memcached server died: host b reads what the other
// server holds and fetches the rest (the lost values, and the chunks whose marks were there)
// from the store.
TEST_F(FillShareTest, AServerLostAfterTheFillCostsStoreReadsNotFiles) {
  auto a = StartHost(Addresses()[0], 20s);
  ASSERT_TRUE(a);
  ASSERT_TRUE(a->filler->WaitDone(60s));
  EXPECT_EQ(a->filler->Stats().hosts.claimed_chunks, a->filler->Stats().hosts.chunks);
  servers_[1].Kill();
  auto b = StartHost(Addresses()[1], 20s);
  ASSERT_TRUE(b);
  ASSERT_TRUE(b->filler->WaitDone(60s));
  EXPECT_EQ(b->HeldExactly(), kShareFiles);
  const FillStats sb = b->filler->Stats();
  EXPECT_GT(sb.hosts.peer_files, 0u) << "the live server's share came from the cluster: chunks "
                               << sb.hosts.chunks << ", own " << sb.hosts.own_chunks << ", claimed "
                               << sb.hosts.claimed_chunks << ", peer chunks " << sb.hosts.peer_chunks
                               << ", waited out " << sb.hosts.waited_out_chunks;
  EXPECT_GT(b->io->bytes.load(), 0u) << "the dead server's share came from the store";
  EXPECT_LT(b->io->bytes.load(), ShardBytes(*b));
}

// Host a filled the job's cluster and finished; host b joins long after (its claims are gone):
// b wins each claim, sees the chunk done and reads it from the cluster, nothing from the store.
TEST_F(FillShareTest, AHostThatJoinsLateReadsTheClusterNotTheStore) {
  auto a = StartHost(Addresses()[0], 20s);
  ASSERT_TRUE(a);
  ASSERT_TRUE(a->filler->WaitDone(60s));
  auto b = StartHost(Addresses()[1], 20s);
  ASSERT_TRUE(b);
  ASSERT_TRUE(b->filler->WaitDone(60s));
  EXPECT_EQ(b->HeldExactly(), kShareFiles);
  const FillStats sb = b->filler->Stats();
  EXPECT_EQ(sb.hosts.peer_chunks, sb.hosts.chunks);
  EXPECT_EQ(sb.hosts.claimed_chunks, 0u);
  EXPECT_EQ(b->io->bytes.load(), 0u);
}

// A host claimed every chunk and went away before it fetched any: the other host waits for the
// claims (at most peer_wait), then reads the dataset from the store itself.
TEST_F(FillShareTest, AHostThatClaimedChunksAndWentIsWaitedOutNotForever) {
  auto ds = format::Dataset::Open(*dir_ / "ds");
  ASSERT_TRUE(ds.ok());
  cache::ClusterTierOptions c;
  c.servers = Addresses();
  c.name_space = "fill-share-test";
  auto cluster = cache::ClusterTier::Open(c);
  ASSERT_TRUE(cluster.ok());
  // The departed host's plan (the same cut as every host's) and its claims, for 60 s.
  FillShare departed(**cluster, FillShareOptions{});
  departed.Plan(**ds, (*ds)->entry_count(), kChunkBytes,
                [](const format::Entry& e) { return e.is_regular() && e.size() > 0; });
  const std::vector<std::string> claims = departed.ClaimNames();
  ASSERT_GT(claims.size(), 4u);
  for (const std::string& name : claims) {
    ASSERT_EQ((*cluster)->AddMark(name, 60s), cache::ClusterTier::MarkResult::kAdded);
  }
  const auto start = std::chrono::steady_clock::now();
  auto b = StartHost(Addresses()[1], 1500ms);
  ASSERT_TRUE(b);
  ASSERT_TRUE(b->filler->WaitDone(60s));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 30s);
  EXPECT_EQ(b->HeldExactly(), kShareFiles);
  const FillStats sb = b->filler->Stats();
  EXPECT_EQ(sb.hosts.chunks, claims.size()) << "the same cut as the departed host's";
  EXPECT_EQ(sb.hosts.claimed_chunks, 0u);
  EXPECT_EQ(sb.hosts.waited_out_chunks, sb.hosts.chunks);
  EXPECT_GE(static_cast<double>(b->io->bytes.load()), 0.9 * static_cast<double>(ShardBytes(*b)));
}

TEST(ClusterLocalServerTest, PicksTheOneServerOnThisHost) {
  EXPECT_EQ(cache::ClusterTier::FindLocalServer({"127.0.0.1:11211", "198.51.100.7:11211"}),
            "127.0.0.1:11211");
  EXPECT_EQ(cache::ClusterTier::FindLocalServer({"198.51.100.7:11211", "198.51.100.8:11211"}), "");
  // Two here (a test, a laptop): none is this host's own.
  EXPECT_EQ(cache::ClusterTier::FindLocalServer({"127.0.0.1:11211", "127.0.0.1:11212"}), "");
}

}  // namespace
}  // namespace mmfs::fs
