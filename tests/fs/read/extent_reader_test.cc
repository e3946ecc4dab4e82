// Extent reads on demand misses (the plan: fs/read/extent_plan.h, alone in extent_plan_test.cc;
// its state and the neighbours: fs/read/extent_reader.h), driven through the Filesystem with a
// counting origin and, for `auto`, a fixed origin cost: a miss reads the extent around its
// sample in one origin read and its neighbours are then served without another; the neighbour
// area lives in what the RAM tier has not filled; with no room or unused neighbours the reader
// falls back to sample reads by itself (probing now and then); with an SSD tier the neighbours
// are written through and a remount serves them without the origin.
#include "fs/read/extent_reader.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cache/ssd_tier.h"
#include "cache/tier_stack.h"
#include "fs/core/filesystem.h"
#include "tests/origin_helper.h"
#include "tests/pack_helper.h"
#include "tests/test_util.h"

namespace mmfs::fs {
namespace {

using testing::TempDir;
using testing::WriteFile;

constexpr int kExtentFiles = 600;
constexpr size_t kExtentFileBytes = 3000;

using testing::CountingOrigin;

// A hard disk as the cost model would see it: 5 ms a request, 200 MB/s (extent 960 KiB).
OriginCostEstimate ReaderHardDisk() {
  OriginCostEstimate e;
  e.known = true;
  e.latency_seconds = 0.005;
  e.bandwidth_bytes_per_second = 200e6;
  e.extent_bytes = 15 * (64 << 10);
  e.reads = 1000;
  return e;
}

// ReaderHardDisk with requests of `latency` seconds and extents of 64 KiB (about 16 files).
OriginCostEstimate SixteenFileExtents(double latency) {
  OriginCostEstimate e = ReaderHardDisk();
  e.latency_seconds = latency;
  e.extent_bytes = 64 << 10;
  return e;
}

std::string Name(int i) { return std::to_string(10000 + i) + ".txt"; }

// What file i holds: distinct bytes, so a neighbour served from the wrong place shows.
std::string ExtentContents(int i) {
  std::string s(kExtentFileBytes, '\0');
  for (size_t k = 0; k < s.size(); ++k) s[k] = static_cast<char>('a' + (i * 7 + k) % 26);
  return s;
}

class ExtentReaderTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    for (int i = 0; i < kExtentFiles; ++i) WriteFile(*dir_ / ("src/d/" + Name(i)), ExtentContents(i));
    ASSERT_TRUE(testing::PackFolder(*dir_ / "src", *dir_ / "ds").ok());
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  // A filesystem over the dataset with `extents`, a RAM tier of `ram` bytes and, with `ssd`, an
  // SSD tier in the suite's directory.
  void Make(ExtentOptions extents, uint64_t ram, bool ssd = false) {
    fs_.reset();  // flushes and closes the previous SSD tier first
    auto ds = format::Dataset::Open(*dir_ / "ds");
    ASSERT_TRUE(ds.ok());
    std::unique_ptr<cache::CacheTier> ssd_tier;
    if (ssd) {
      cache::SsdTierOptions o;
      o.dir = *dir_ / "ssd";
      o.name_space = (*ds)->Identity();
      o.budget_bytes = 64 << 20;
      o.min_free_fraction = 0;
      auto tier = cache::SsdTier::Open(o);
      ASSERT_TRUE(tier.ok()) << tier.status().ToString();
      ssd_tier = std::move(tier).value();
    }
    FilesystemOptions options;
    options.ram_cache_bytes = ram;
    // Sample members on; access patterns never fire here, as every read is of stream 0
    // (unknown), so no prefetch worker reads at its own time and blurs the counts.
    options.readahead = true;
    options.extents = std::move(extents);
    auto io = std::make_unique<CountingOrigin>(**ds);
    io_ = io.get();
    auto tiers = std::make_unique<cache::TierStack>(ram, (*ds)->manifest().files,
                                                    std::move(ssd_tier), nullptr);
    fs_ = std::make_unique<Filesystem>(std::move(ds).value(), options, std::move(tiers),
                                       std::move(io));
    auto d = fs_->Lookup(kRootIno, "d");
    ASSERT_TRUE(d.ok());
    dir_ino_ = d->ino;
  }
  // Reads file i whole and checks its bytes.
  void ReadFile(int i) {
    auto a = fs_->Lookup(dir_ino_, Name(i));
    ASSERT_TRUE(a.ok()) << Name(i);
    auto r = fs_->Read(a->ino, 0, 1 << 20);
    ASSERT_TRUE(r.ok()) << Name(i) << ": " << r.status().ToString();
    ASSERT_EQ(std::string(r->data, r->size), ExtentContents(i)) << Name(i);
  }
  ExtentCounters Extents() { return fs_->Stats().extents; }

  static TempDir* dir_;
  std::unique_ptr<Filesystem> fs_;
  CountingOrigin* io_ = nullptr;
  uint64_t dir_ino_ = 0;
};

TempDir* ExtentReaderTest::dir_ = nullptr;

ExtentOptions Fixed(uint64_t bytes) {
  ExtentOptions o;
  o.mode = ExtentMode::kFixed;
  o.fixed_bytes = bytes;
  return o;
}

ExtentOptions Auto(OriginCostEstimate cost) {
  ExtentOptions o;
  o.cost = [cost] { return cost; };
  return o;
}

TEST_F(ExtentReaderTest, AMissReadsItsExtentAndItsNeighboursNeedNoOtherRead) {
  Make(Fixed(256 << 10), 64 << 20);
  ReadFile(300);
  EXPECT_EQ(io_->reads.load(), 1);
  EXPECT_GE(io_->bytes.load(), 128u << 10);  // far more than the file
  EXPECT_LE(io_->bytes.load(), 256u << 10);
  ExtentCounters c = Extents();
  EXPECT_EQ(c.extents, 1u);
  // About 256 KiB of 3 KB files (LMDB pads them to pages: at least 30 in the window).
  EXPECT_GE(c.kept_files, 30u);
  EXPECT_EQ(c.kept_ssd_files, 0u);
  EXPECT_EQ(c.mode, "256 KiB");
  // The neighbours wait in the area, not in the RAM tier: they count for its admission only
  // once a reader asks (the tier's residency, user.mmfs.resident, says "none" until then).
  EXPECT_EQ(fs_->Stats().tiers.at(0).counters.entries, 1u);
  // The neighbours on both sides come from the area, checked, without an origin read.
  // However the window falls around file 300, at least 10 of the 20 files beside it are in it.
  int served = 0;
  for (int i = 290; i <= 310; ++i) {
    if (i == 300) continue;
    const int before = io_->reads.load();
    ReadFile(i);
    if (io_->reads.load() == before) ++served;
  }
  EXPECT_GE(served, 10);
  c = Extents();
  EXPECT_EQ(c.used_files, static_cast<uint64_t>(served));
  // The 21 files read are in the tier now, and no neighbour that was not read.
  EXPECT_EQ(fs_->Stats().tiers.at(0).counters.entries, 21u);
  EXPECT_EQ(c.wasted_files, 0u);
  EXPECT_LE(c.area_bytes, c.area_budget);
}

TEST_F(ExtentReaderTest, OffAndAnUnknownOriginReadSampleSized) {
  ExtentOptions off;
  off.mode = ExtentMode::kOff;
  Make(off, 64 << 20);
  ReadFile(100);
  ReadFile(101);
  EXPECT_EQ(io_->reads.load(), 2);
  EXPECT_EQ(Extents().extents, 0u);
  EXPECT_EQ(Extents().mode, "off");

  ExtentOptions unknown = Auto(OriginCostEstimate{});  // not known
  unknown.explore_every = 8;
  Make(std::move(unknown), 64 << 20);
  for (int i = 0; i < 7; ++i) ReadFile(i * 50);
  EXPECT_EQ(io_->reads.load(), 7);
  EXPECT_EQ(Extents().extents, 0u);
  EXPECT_EQ(Extents().skipped_unknown, 7u);
  // The eighth is a probe: an extent of at least 256 KiB, so the model sees another read size.
  ReadFile(400);
  EXPECT_EQ(Extents().extents, 1u);
  EXPECT_EQ(Extents().probes, 1u);
  EXPECT_GE(Extents().last_extent_bytes, 200u << 10);

  // A fast origin: its extent is no larger than a few samples, nothing to gain.
  OriginCostEstimate fast = ReaderHardDisk();
  fast.latency_seconds = 50e-6;
  fast.extent_bytes = 8 << 10;
  Make(Auto(fast), 64 << 20);
  ReadFile(100);
  EXPECT_EQ(Extents().extents, 0u);
  EXPECT_EQ(Extents().skipped_small, 1u);
}

TEST_F(ExtentReaderTest, AHardDiskGetsExtentsAndAShuffledPassReadsFarFewerTimesThanFiles) {
  Make(Auto(ReaderHardDisk()), 64 << 20);
  std::vector<int> order(kExtentFiles);
  for (int i = 0; i < kExtentFiles; ++i) order[i] = (i * 97) % kExtentFiles;  // a fixed permutation
  for (int i : order) ReadFile(i);
  const ExtentCounters c = Extents();
  // 600 files of ~4 KiB in the shard make ~2.3 MiB: a handful of 960 KiB extents hold them.
  EXPECT_LE(io_->reads.load(), 12) << "extent reads " << c.extents;
  EXPECT_GE(c.used_files, static_cast<uint64_t>(kExtentFiles - 12));
  EXPECT_EQ(c.wasted_files, 0u);
  EXPECT_GE(c.used_share, 0.99);
}

TEST_F(ExtentReaderTest, ExtentsOfChangingSizesNeverReadAFileTwice) {
  // The estimate moves as the model learns: windows of 64 KiB and 960 KiB, in turn, overlap. An
  // extent stops at the files earlier ones brought, so no file is fetched twice.
  auto calls = std::make_shared<int>(0);
  ExtentOptions o;
  o.cost = [calls] {
    OriginCostEstimate e = ReaderHardDisk();
    e.extent_bytes = (++*calls % 2 == 0) ? 64 << 10 : 15 * (64 << 10);
    return e;
  };
  Make(std::move(o), 64 << 20);
  std::vector<int> order(kExtentFiles);
  for (int i = 0; i < kExtentFiles; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), std::mt19937(11));
  for (int i : order) ReadFile(i);
  const StatsSnapshot s = fs_->Stats();
  EXPECT_EQ(s.origin.rereads.files, 0u);
  EXPECT_GT(s.extents.extents, 1u);
  // Every file once, plus the LMDB pages between them: about 4 KiB a file.
  EXPECT_LE(io_->bytes.load(), static_cast<uint64_t>(kExtentFiles) * 4200) << io_->reads.load();
}

TEST_F(ExtentReaderTest, RoomTooSmallForTheUnheldDataMakesNoExtent) {
  // 256 KiB of room beside 1.8 MB that no tier holds (h = 14%), extents of ~20 files: in
  // shuffled order under 1% of the neighbours would be read before the area pushed them out.
  // With 50 us a request that does not pay (it takes 23%): no extent is read, foretold rather
  // than learnt from waste.
  Make(Auto(SixteenFileExtents(50e-6)), 256 << 10);
  for (int i = 0; i < kExtentFiles; i += 37) ReadFile(i);
  EXPECT_EQ(Extents().extents, 0u);
  EXPECT_EQ(Extents().wasted_files, 0u);
  EXPECT_EQ(Extents().skipped_no_room, static_cast<uint64_t>((kExtentFiles + 36) / 37));
  // With the same room, a hard disk's 5 ms requests pay from 0.3%: extents are read.
  Make(Auto(SixteenFileExtents(ReaderHardDisk().latency_seconds)), 256 << 10);
  ReadFile(100);
  EXPECT_EQ(Extents().extents, 1u);
}

TEST_F(ExtentReaderTest, ProbesOverruleTheForesightForAReaderInShardOrder) {
  // Requests of 0.5 us at 200 MB/s: an extent pays only while 97% of its neighbours are used,
  // and 1.7 MiB of room beside the 1.8 MB no tier holds foretells less: the foresight says no.
  // Read in index order (shard order), every neighbour a probe brings is read next: the
  // probes' measured share overrules the foresight and extents come back.
  ExtentOptions o = Auto(SixteenFileExtents(0.5e-6));
  o.probe_every = 1;  // foresight probes one miss in 8
  Make(std::move(o), 1700 << 10);
  for (int i = 0; i < kExtentFiles; ++i) ReadFile(i);
  const ExtentCounters c = Extents();
  EXPECT_GT(c.skipped_no_room, 0u) << "the foresight held at first";
  EXPECT_GE(c.used_files, 64u) << "the probes' neighbours were read";
  EXPECT_GT(c.extents, c.probes) << "and extents came back beyond the probes";
  EXPECT_LT(io_->reads.load(), kExtentFiles / 2);
}

TEST_F(ExtentReaderTest, WithoutRoomInTheRamTierMissesAreSampleSized) {
  // A RAM tier smaller than one extent: the neighbours would have nowhere to wait.
  Make(Auto(ReaderHardDisk()), 256 << 10);
  ReadFile(10);
  ReadFile(400);
  EXPECT_EQ(io_->reads.load(), 2);
  EXPECT_EQ(Extents().extents, 0u);
  EXPECT_EQ(Extents().skipped_no_room, 2u);
}

TEST_F(ExtentReaderTest, UnusedNeighboursTurnExtentsOffButProbesGoOn) {
  // Extents of 64 KiB (about 16 files) in a RAM tier with room for ~4 of them at once, read
  // with a stride of 37 files: every extent's neighbours are pushed out unread.
  // A request of 500 us and 200 MB/s: an extent pays while over 3% of its neighbours are used.
  // The room's foresight is off: only the used share, learnt from the neighbours pushed out,
  // can turn the extents off here.
  ExtentOptions o = Auto(SixteenFileExtents(500e-6));
  o.foresee_use = false;
  o.probe_every = 8;
  Make(std::move(o), 256 << 10);
  for (int pass = 0; pass < 4; ++pass) {
    for (int i = pass; i < kExtentFiles; i += 37) ReadFile(i);
  }
  const ExtentCounters c = Extents();
  EXPECT_GT(c.wasted_files, 64u) << "the area must have pushed neighbours out";
  EXPECT_LT(c.used_share, 0.03);
  EXPECT_GT(c.skipped_unused, 0u) << "fell back to sample reads";
  EXPECT_GT(c.probes, 0u) << "and went on probing";
  EXPECT_LT(c.extents, static_cast<uint64_t>(io_->reads.load()));
}

TEST_F(ExtentReaderTest, WithAnSsdTierNeighboursAreWrittenThroughAndSurviveARemount) {
  std::filesystem::remove_all(*dir_ / "ssd");
  Make(Fixed(256 << 10), 64 << 20, /*ssd=*/true);
  ReadFile(200);
  ExtentCounters c = Extents();
  EXPECT_EQ(c.extents, 1u);
  EXPECT_GE(c.kept_ssd_files, 30u);
  EXPECT_EQ(c.kept_files, 0u);  // none in the RAM area: the SSD tier keeps them
  // Served from the SSD tier in this mount, counted used.
  std::vector<int> served;
  for (int i = 190; i <= 210; ++i) {
    if (i == 200) continue;
    const int before = io_->reads.load();
    ReadFile(i);
    if (io_->reads.load() == before) served.push_back(i);
  }
  EXPECT_GE(served.size(), 10u);
  EXPECT_EQ(Extents().used_files, served.size());
  // A remount: the neighbours are still on the SSD tier, not read from the origin.
  Make(Fixed(256 << 10), 64 << 20, /*ssd=*/true);
  for (int i : served) ReadFile(i);
  EXPECT_EQ(io_->reads.load(), 0);
}

TEST(ExtentOptionTest, ParsesAutoOffAndSizesAndRefusesTheRest) {
  EXPECT_EQ(ParseExtentOption("auto")->mode, ExtentMode::kAuto);
  EXPECT_EQ(ParseExtentOption("off")->mode, ExtentMode::kOff);
  auto one = ParseExtentOption("1M");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->mode, ExtentMode::kFixed);
  EXPECT_EQ(one->fixed_bytes, 1u << 20);
  for (const char* bad : {"", "on", "4K", "1G", "-1M", "12Q"}) {
    auto r = ParseExtentOption(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_NE(r.status().message().find("extents must be"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace mmfs::fs
