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
#include "fs/format/view_set.h"
#include "fs/metrics/metrics.h"
#include "fs/read/extent_reader.h"
#include "fs/read/miss_loader.h"
#include "fs/read/origin_reader.h"
#include "fs/read/view_files.h"
#include "fs/readahead/filler.h"
#include "tests/memcached_helper.h"
#include "tests/origin_helper.h"
#include "tests/pack_helper.h"
#include "tests/test_util.h"

namespace mmfs::fs {
namespace {

using namespace std::chrono_literals;
using testing::TempDir;
using testing::WaitFor;

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
  // A client of both servers under `name_space`; null (and a test failure) if it cannot open.
  std::unique_ptr<cache::ClusterTier> OpenCluster(const std::string& name_space,
                                                  int timeout_ms = 100) const {
    cache::ClusterTierOptions c;
    c.servers = Addresses();
    c.name_space = name_space;
    c.timeout_ms = timeout_ms;
    auto cluster = cache::ClusterTier::Open(c);
    EXPECT_TRUE(cluster.ok()) << cluster.status().ToString();
    return cluster.ok() ? std::move(cluster).value() : nullptr;
  }
  // A host whose own server is `self` (empty: none), its fill started with `peer_wait`; each
  // store read takes 30 ms, so that two hosts started together both get to claim chunks.
  std::unique_ptr<Host> StartHost(const std::string& self, std::chrono::milliseconds peer_wait,
                                  uint64_t ram_bytes = 64 << 20) {
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
    auto cluster = OpenCluster("fill-share-test", 500);
    if (cluster == nullptr) return nullptr;
    h->tiers = std::make_unique<cache::TierStack>(ram_bytes, h->dataset->manifest().files, nullptr,
                                                  std::move(cluster));
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

// Each host's tier holds about half the dataset, the cluster all of it: the job's fill brings
// every file into the cluster once, and each host keeps only its share.
TEST_F(FillShareTest, HostsThatKeepAShareStillFillTheClusterWithTheWholeDataset) {
  constexpr uint64_t kRam = kShareFiles * kShareFileBytes / 2;
  auto a = StartHost(Addresses()[0], 20s, kRam);
  auto b = StartHost(Addresses()[1], 20s, kRam);
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(a->filler->WaitDone(60s));
  ASSERT_TRUE(b->filler->WaitDone(60s));
  const FillStats sa = a->filler->Stats(), sb = b->filler->Stats();
  ASSERT_TRUE(sa.share && sb.share);
  for (const Host* h : {a.get(), b.get()}) {
    EXPECT_GT(h->HeldExactly(), kShareFiles / 4);
    EXPECT_LT(h->HeldExactly(), kShareFiles * 3 / 4) << "a host keeps its share, no more";
  }
  EXPECT_GT(sa.hosts.cluster_only_chunks, 0u);
  EXPECT_EQ(sa.hosts.cluster_only_chunks, sb.hosts.cluster_only_chunks);
  EXPECT_EQ(sa.hosts.cluster_only_fetched_chunks + sb.hosts.cluster_only_fetched_chunks,
            sa.hosts.cluster_only_chunks)
      << "each chunk past the share read by one host";
  // Every file is in the cluster, exact.
  std::vector<cache::CacheKey> keys;
  for (int i = 0; i < kShareFiles; ++i) keys.push_back(static_cast<uint64_t>(i) + 2);
  auto got = a->tiers->cluster()->LookupMany(keys);
  int exact = 0;
  for (int i = 0; i < kShareFiles; ++i) {
    auto it = got.find(static_cast<uint64_t>(i) + 2);
    if (it != got.end() && it->second != nullptr && *it->second == ShareContents(i)) ++exact;
  }
  EXPECT_EQ(exact, kShareFiles);
  const uint64_t job_bytes = a->io->bytes.load() + b->io->bytes.load();
  EXPECT_LE(static_cast<double>(job_bytes), 1.05 * static_cast<double>(ShardBytes(*a)))
      << "a: " << a->io->bytes.load() << ", b: " << b->io->bytes.load();
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
  auto cluster = OpenCluster("fill-share-test");
  ASSERT_NE(cluster, nullptr);
  // The departed host's plan (the same cut as every host's) and its claims, for 60 s.
  FillShare departed(*cluster, FillShareOptions{});
  departed.Plan(**ds, (*ds)->entry_count(), (*ds)->entry_count(), kChunkBytes,
                [](const format::Entry& e) { return e.is_regular() && e.size() > 0; });
  const std::vector<std::string> claims = departed.ClaimNames();
  ASSERT_GT(claims.size(), 4u);
  for (const std::string& name : claims) {
    ASSERT_EQ(cluster->AddMark(name, 60s), cache::ClusterTier::MarkResult::kAdded);
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

// Every chunk cluster-only (a tier that keeps none of the dataset), each claimed by a host that
// then went away: this host looks at them again until the claims lapse, takes each one, and
// reads it into the cluster; none is left to a host that will never fetch it.
TEST_F(FillShareTest, ClusterOnlyChunksOfAHostThatWentAreTakenOver) {
  auto ds = format::Dataset::Open(*dir_ / "ds");
  ASSERT_TRUE(ds.ok());
  auto cluster = OpenCluster("fill-share-test-takeover");
  ASSERT_NE(cluster, nullptr);
  const auto fetchable = [](const format::Entry& e) { return e.is_regular() && e.size() > 0; };
  FillShare departed(*cluster, FillShareOptions{});
  departed.Plan(**ds, 0, (*ds)->entry_count(), kChunkBytes, fetchable);
  const std::vector<std::string> claims = departed.ClaimNames();
  ASSERT_GT(claims.size(), 4u);
  for (const std::string& name : claims) {
    ASSERT_EQ(cluster->AddMark(name, 2s), cache::ClusterTier::MarkResult::kAdded);
  }
  FillShare host(*cluster, FillShareOptions{});
  host.Plan(**ds, 0, (*ds)->entry_count(), kChunkBytes, fetchable);
  EXPECT_EQ(host.Stats().cluster_only_chunks, claims.size());
  size_t taken = 0;
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  for (;;) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << taken << " chunks taken";
    FillShare::Task task = host.Next([](const format::Entry&) { return false; });
    if (task.kind == FillShare::Kind::kNone) break;
    if (task.kind == FillShare::Kind::kWait) {
      std::this_thread::sleep_until(task.due);  // the share's own retry time, not a guess
      continue;
    }
    ASSERT_EQ(task.kind, FillShare::Kind::kStore);
    EXPECT_TRUE(task.cluster_only);
    EXPECT_TRUE(task.held.empty());
    ++taken;
    host.Fetched(task.chunk, /*complete=*/true);
  }
  EXPECT_EQ(taken, claims.size());
  EXPECT_EQ(host.Stats().cluster_only_fetched_chunks, claims.size());
}

// A prefetch buffer that holds nothing: the demand misses below read their file alone.
class ShareEmptyBuffer final : public MemberBuffer {
 public:
  cache::Blob Take(uint64_t) override { return nullptr; }
  cache::Blob TakeHeld(uint64_t, bool*) override { return nullptr; }
  void PutMember(uint64_t, cache::Blob) override {}
  uint64_t FileLimit() const override { return 8 << 20; }
};

// A reader's miss on a host of a shared fill, without the fill's threads: another host (the
// holder) claimed every chunk; this host's FillShare, planned the same, tells its MissLoader
// which files the holder is fetching.
class SharedMissTest : public FillShareTest {
 protected:
  static FillShareOptions Waiting(std::chrono::milliseconds demand_wait) {
    FillShareOptions o;
    o.demand_wait = demand_wait;
    return o;
  }
  void Make(FillShareOptions options) {
    auto ds = format::Dataset::Open(*dir_ / "ds");
    ASSERT_TRUE(ds.ok());
    dataset_ = std::move(ds).value();
    auto counting = std::make_unique<testing::CountingOrigin>(*dataset_);
    io_ = counting.get();
    origin_ = std::move(counting);
    reader_ = std::make_unique<OriginReader>(*dataset_, *origin_, metrics_, OriginReaderOptions{});
    holder_ = OpenCluster();
    ASSERT_NE(holder_, nullptr);
    auto mine = OpenCluster();
    ASSERT_NE(mine, nullptr);
    cluster_ = mine.get();
    tiers_ = std::make_unique<cache::TierStack>(64 << 20, dataset_->manifest().files, nullptr,
                                                std::move(mine));
    const auto fetchable = [](const format::Entry& e) { return e.is_regular() && e.size() > 0; };
    held_by_other_ = std::make_unique<FillShare>(*holder_, FillShareOptions{});
    held_by_other_->Plan(*dataset_, dataset_->entry_count(), dataset_->entry_count(), kChunkBytes,
                         fetchable);
    share_ = std::make_unique<FillShare>(*cluster_, std::move(options));
    share_->Plan(*dataset_, dataset_->entry_count(), dataset_->entry_count(), kChunkBytes,
                 fetchable);
    views_ = std::make_unique<ViewFiles>(*dataset_, format::ViewSet::Open(*dataset_, *origin_),
                                         0, *reader_);
    ExtentOptions no_extents;
    no_extents.mode = ExtentMode::kOff;
    extents_ = std::make_unique<ExtentReader>(*dataset_, *tiers_, no_extents);
    loader_ = std::make_unique<MissLoader>(*dataset_, *reader_, *views_, *tiers_, *extents_,
                                           MissLoaderOptions{});
    loader_->SetPeerFetches(share_.get());
  }
  // Generous timeouts: a mark look-up that times out reads as "not fetching", and these tests
  // count the waits exactly.
  std::unique_ptr<cache::ClusterTier> OpenCluster() {
    return FillShareTest::OpenCluster("fill-share-test", 5000);
  }
  // The holder claims every chunk, as a host whose fill is under way.
  void HolderClaimsAll() {
    for (const std::string& name : held_by_other_->ClaimNames()) {
      ASSERT_EQ(holder_->AddMark(name, 60s), cache::ClusterTier::MarkResult::kAdded);
    }
  }
  // File i of the dataset (entry i + 2: the root and d/ come first) as the original tree's.
  TreeFile File(int i) {
    auto e = dataset_->GetEntry(static_cast<uint64_t>(i) + 2);
    EXPECT_TRUE(e.ok());
    auto f = views_->Resolve(0, *e);
    EXPECT_TRUE(f.ok());
    return f.ok() ? *f : TreeFile{};
  }

  Metrics metrics_;
  std::unique_ptr<format::Dataset> dataset_;
  std::unique_ptr<origin::Origin> origin_;
  testing::CountingOrigin* io_ = nullptr;
  std::unique_ptr<OriginReader> reader_;
  std::unique_ptr<cache::ClusterTier> holder_;  // the other host's connection
  cache::ClusterTier* cluster_ = nullptr;       // this host's, in its tier stack
  std::unique_ptr<cache::TierStack> tiers_;
  std::unique_ptr<FillShare> held_by_other_;
  std::unique_ptr<FillShare> share_;
  std::unique_ptr<ViewFiles> views_;
  std::unique_ptr<ExtentReader> extents_;
  std::unique_ptr<MissLoader> loader_;
  ShareEmptyBuffer buffer_;
};

TEST_F(SharedMissTest, AMissOfAFileAnotherHostIsFetchingWaitsForItInTheCluster) {
  Make(Waiting(20s));
  HolderClaimsAll();
  const TreeFile f = File(7);
  ASSERT_TRUE(share_->FetchingElsewhere(f.entry.index));
  // The holder's read lands once the miss waits for it (as a slow store read would).
  std::thread holder([&] {
    if (WaitFor([&] { return share_->Stats().demand_waits >= 1; }, 30)) {
      holder_->InsertNow(f.key, std::make_shared<const std::string>(ShareContents(7)));
    }
  });
  const auto start = std::chrono::steady_clock::now();
  auto got = loader_->Load(f, buffer_);
  holder.join();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(**got, ShareContents(7));
  EXPECT_EQ(io_->bytes.load(), 0u) << "the store was read although another host had the file";
  EXPECT_LT(std::chrono::steady_clock::now() - start, 15s) << "served by the landing, not a timeout";
  const FillHostsStats st = share_->Stats();
  EXPECT_EQ(st.demand_waits, 1u);
  EXPECT_EQ(st.demand_waits_served, 1u);
}

TEST_F(SharedMissTest, AHolderThatNeverDeliversIsWaitedForAtMostTheDemandWait) {
  Make(Waiting(300ms));
  HolderClaimsAll();
  const TreeFile f = File(11);
  const auto start = std::chrono::steady_clock::now();
  auto got = loader_->Load(f, buffer_);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(**got, ShareContents(11));
  EXPECT_GE(std::chrono::steady_clock::now() - start, 300ms);
  EXPECT_GT(io_->bytes.load(), 0u) << "read from the store after the wait";
  const FillHostsStats st = share_->Stats();
  EXPECT_EQ(st.demand_waits, 1u);
  EXPECT_EQ(st.demand_waits_served, 0u);
  // The holder may be gone with its claim still there: the chunk's other files are not waited
  // for again while the claim could still be that host's; other chunks still are.
  EXPECT_FALSE(share_->FetchingElsewhere(f.entry.index));
  EXPECT_TRUE(share_->FetchingElsewhere(File(150).entry.index));
}

TEST_F(SharedMissTest, NoWaitForADoneChunkAnUnclaimedOneOrAFileOutsideThePlan) {
  Make(Waiting(20s));
  // Nothing claimed: the store at once.
  const TreeFile f = File(3);
  EXPECT_FALSE(share_->FetchingElsewhere(f.entry.index));
  EXPECT_FALSE(share_->FetchingElsewhere(0)) << "the root directory is in no chunk";
  EXPECT_FALSE(share_->FetchingElsewhere(dataset_->entry_count() + 5));
  auto got = loader_->Load(f, buffer_);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(**got, ShareContents(3));
  // Claimed: waited for. Claimed and done (the holder between its two marks, or a done chunk
  // whose value was evicted): not waited for.
  HolderClaimsAll();
  const TreeFile g = File(150);
  EXPECT_TRUE(share_->FetchingElsewhere(g.entry.index));
  for (std::string name : held_by_other_->ClaimNames()) {
    name.replace(name.rfind("/claim"), std::string::npos, "/done");  // the chunk's done mark
    ASSERT_TRUE(holder_->SetMark(name, 0s));
  }
  EXPECT_FALSE(share_->FetchingElsewhere(g.entry.index));
  auto again = loader_->Load(g, buffer_);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(**again, ShareContents(150));
  EXPECT_EQ(share_->Stats().demand_waits, 0u);
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
