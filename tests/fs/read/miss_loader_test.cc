// The miss loader (fs/read/miss_loader.h) alone, over an origin in memory that fails, shortens or
// damages reads on request (tests/fakes/memory_origin.h): what a miss reads besides its file (the
// sample's members, the extent around it), what it does when the read goes wrong (an error, a
// retry as the sample alone, a damaged member left out), where a view's files come from and under
// which keys, and the prefetch and warm-up batches. A fake prefetch buffer records what a load
// leaves there. The cluster tier's multi-get needs memcached: its own tests are in
// tests/cache/cluster_tier_test.cc and tests/fs/readahead/fill_share_test.cc, not here.
#include "fs/read/miss_loader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cache/tier_stack.h"
#include "fs/format/dataset.h"
#include "fs/format/view_set.h"
#include "fs/metrics/metrics.h"
#include "fs/origin/local_file_origin.h"
#include "fs/read/extent_reader.h"
#include "fs/read/origin_reader.h"
#include "fs/read/view_files.h"
#include "tests/fakes/memory_origin.h"
#include "tests/origin_helper.h"
#include "tests/pack_helper.h"
#include "tests/test_util.h"
#include "tools/view/view_builder.h"

namespace mmfs::fs {
namespace {

using testing::MemoryOrigin;
using testing::TempDir;
using testing::WriteFile;

// d/: files of their own sample each, for extents and batches. s/: samples k.jpg + k.txt, every
// image larger than the view's side, so each is resized in the view.
constexpr int kLoaderFiles = 200;
constexpr size_t kLoaderFileBytes = 3000;
constexpr int kLoaderSamples = 8;
constexpr uint32_t kLoaderSide = 32;
constexpr uint64_t kLoaderExtentBytes = 256 << 10;

std::string LoaderFilePath(int i) { return "d/" + std::to_string(10000 + i) + ".txt"; }
// Distinct bytes per file, so that a file served from the wrong place shows.
std::string LoaderFileContents(int i) {
  std::string s = "file " + std::to_string(i) + " ";
  for (size_t k = s.size(); k < kLoaderFileBytes; ++k) {
    s.push_back(static_cast<char>('a' + (static_cast<size_t>(i) * 7 + k) % 26));
  }
  return s;
}
std::string LoaderImagePath(int i) { return "s/" + std::to_string(100 + i) + ".jpg"; }
std::string LoaderCaptionPath(int i) { return "s/" + std::to_string(100 + i) + ".txt"; }
std::string LoaderCaption(int i) { return "caption " + std::to_string(i); }

ExtentOptions LoaderNoExtents() {
  ExtentOptions o;
  o.mode = ExtentMode::kOff;
  return o;
}
// Extents of a fixed size: the plan reads one on every miss while the RAM tier has room.
ExtentOptions LoaderFixedExtents() {
  ExtentOptions o;
  o.mode = ExtentMode::kFixed;
  o.fixed_bytes = kLoaderExtentBytes;
  return o;
}
MissLoaderOptions LoaderMembers(bool on) {
  MissLoaderOptions o;
  o.sample_members = on;
  return o;
}

std::string LoaderBytes(const cache::Blob& b) { return b != nullptr ? *b : "<null>"; }

// The prefetcher's buffer as the loader sees it: copies a test puts there first (`held`), keys
// still loading (`loading`), and what a load leaves there (`put`). Single-threaded tests only.
class LoaderTestBuffer final : public MemberBuffer {
 public:
  cache::Blob Take(uint64_t key) override {
    asked.push_back(key);
    return TakeHeldCopy(key);
  }
  cache::Blob TakeHeld(uint64_t key, bool* is_loading) override {
    asked.push_back(key);
    if (loading.count(key) > 0) {
      *is_loading = true;
      return nullptr;
    }
    return TakeHeldCopy(key);
  }
  void PutMember(uint64_t key, cache::Blob blob) override { put[key] = std::move(blob); }
  uint64_t FileLimit() const override { return limit; }

  std::map<uint64_t, cache::Blob> held;
  std::set<uint64_t> loading;
  std::map<uint64_t, cache::Blob> put;
  std::vector<uint64_t> asked;  // every key Take or TakeHeld was asked for, in order
  uint64_t limit = 8 << 20;

 private:
  cache::Blob TakeHeldCopy(uint64_t key) {
    auto it = held.find(key);
    if (it == held.end()) return nullptr;
    cache::Blob b = std::move(it->second);
    held.erase(it);
    return b;
  }
};

class MissLoaderTest : public ::testing::Test {
 protected:
  // The dataset and its view, built once per process; each test reads them through its own
  // origin in memory.
  struct Suite {
    TempDir tmp;
    std::string error;                            // why building failed; empty when it worked
    std::map<std::string, std::string> contents;  // by path: what each original holds
  };
  static void SetUpTestSuite() {
    suite_ = new Suite;
    suite_->error = BuildSuite(*suite_);
  }
  static void TearDownTestSuite() {
    delete suite_;
    suite_ = nullptr;
  }
  static std::string BuildSuite(Suite& s) {
    for (int i = 0; i < kLoaderFiles; ++i) s.contents[LoaderFilePath(i)] = LoaderFileContents(i);
    for (int i = 0; i < kLoaderSamples; ++i) {
      s.contents[LoaderImagePath(i)] = testing::MakeJpeg(96, 72, static_cast<unsigned>(i + 1));
      s.contents[LoaderCaptionPath(i)] = LoaderCaption(i);
    }
    for (const auto& [path, bytes] : s.contents) WriteFile(s.tmp / ("src/" + path), bytes);
    auto packed = testing::PackFolder(s.tmp / "src", s.tmp / "ds");
    if (!packed.ok()) return "pack: " + packed.status().ToString();
    view::ViewOptions o;
    o.dataset = s.tmp / "ds";
    o.side = kLoaderSide;
    testing::CollectingReporter reporter;
    auto built = view::BuildView(o, reporter);
    if (!built.ok()) return "view: " + built.status().ToString();
    if (built->resized != static_cast<uint64_t>(kLoaderSamples)) return "not every image resized";
    return "";
  }

  void SetUp() override {
    ASSERT_NE(suite_, nullptr);
    ASSERT_EQ(suite_->error, "");
  }
  // The loader over the suite's dataset and view, read through a fresh MemoryOrigin, with a
  // RAM tier of 64 MiB and no other tier.
  void Make(MissLoaderOptions loader, ExtentOptions extents) {
    auto ds = format::Dataset::Open(suite_->tmp / "ds");
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    dataset_ = std::move(ds).value();
    origin_ = MemoryOrigin::FromDataset(*dataset_);
    reader_ = std::make_unique<OriginReader>(*dataset_, *origin_, metrics_, OriginReaderOptions{});
    tiers_ =
        std::make_unique<cache::TierStack>(64 << 20, dataset_->manifest().files, nullptr, nullptr);
    format::ViewSet views = format::ViewSet::Open(*dataset_, *origin_);
    ASSERT_EQ(views.views().size(), 1u);
    views_ = std::make_unique<ViewFiles>(*dataset_, std::move(views), 0, *reader_);
    extents_ = std::make_unique<ExtentReader>(*dataset_, *tiers_, std::move(extents));
    loader_ =
        std::make_unique<MissLoader>(*dataset_, *reader_, *views_, *tiers_, *extents_, loader);
    origin_->ResetCounters();
  }

  format::Entry At(const std::string& path) {
    auto e = testing::EntryAtPath(*dataset_, path);
    EXPECT_TRUE(e.ok()) << path;
    return e.ok() ? *e : format::Entry{};
  }
  // `path` as a file of the original tree, or of the view.
  TreeFile Original(const std::string& path) {
    auto f = views_->Resolve(0, At(path));
    EXPECT_TRUE(f.ok()) << path;
    return f.ok() ? *f : TreeFile{};
  }
  size_t ViewTree() const { return views_->TreeOfSide(kLoaderSide).value_or(0); }
  TreeFile InView(const std::string& path) {
    auto f = views_->Resolve(ViewTree(), At(path));
    EXPECT_TRUE(f.ok()) << path;
    return f.ok() ? *f : TreeFile{};
  }
  // The resized bytes of view file `f` as the view shard holds them, read through an origin of
  // the test's own.
  std::string ResizedBytes(const TreeFile& f) {
    origin::LocalFileOrigin shards(dataset_->dir());
    format::ViewSet set = format::ViewSet::Open(*dataset_, shards);
    const format::View* v = set.Find(kLoaderSide);
    EXPECT_NE(v, nullptr);
    EXPECT_TRUE(f.resized());
    return v != nullptr ? testing::ReadChecked(shards, *v, f.file) : std::string();
  }
  const std::string& Contents(const std::string& path) { return suite_->contents.at(path); }
  origin::ShardRef BaseShard(const format::Entry& e) const {
    return {origin::kDatasetTree, e.record.shard};
  }

  static Suite* suite_;
  Metrics metrics_;
  std::unique_ptr<format::Dataset> dataset_;
  std::unique_ptr<MemoryOrigin> origin_;
  std::unique_ptr<OriginReader> reader_;
  std::unique_ptr<cache::TierStack> tiers_;
  std::unique_ptr<ViewFiles> views_;
  std::unique_ptr<ExtentReader> extents_;
  std::unique_ptr<MissLoader> loader_;
};

MissLoaderTest::Suite* MissLoaderTest::suite_ = nullptr;

// --- The sample's members ---

TEST_F(MissLoaderTest, AMissReadsTheSamplesOtherMembersInTheSameReadAndLeavesThemInTheBuffer) {
  Make(LoaderMembers(true), LoaderNoExtents());
  const TreeFile image = Original(LoaderImagePath(3));
  const format::Entry caption = At(LoaderCaptionPath(3));
  ASSERT_EQ(image.entry.record.data_offset + image.size(), caption.record.data_offset);
  LoaderTestBuffer buffer;
  auto got = loader_->Load(image, buffer);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(LoaderBytes(*got), Contents(LoaderImagePath(3)));
  // One read, of the span of both members.
  ASSERT_EQ(origin_->reads(), 1);
  const auto log = origin_->read_log();
  EXPECT_EQ(log[0].offset, image.entry.record.data_offset);
  EXPECT_EQ(log[0].len, image.size() + caption.size());
  // The caption waits in the buffer for its reader, under its own key; the image is the caller's.
  ASSERT_EQ(buffer.put.size(), 1u);
  ASSERT_EQ(buffer.put.count(caption.index), 1u);
  EXPECT_EQ(LoaderBytes(buffer.put[caption.index]), LoaderCaption(3));
}

TEST_F(MissLoaderTest, WithSampleMembersOffAMissReadsItsFileAlone) {
  Make(LoaderMembers(false), LoaderNoExtents());
  const TreeFile image = Original(LoaderImagePath(3));
  EXPECT_EQ(loader_->SampleMembers(image.entry, 8 << 20).size(), 1u);
  LoaderTestBuffer buffer;
  auto got = loader_->Load(image, buffer);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(LoaderBytes(*got), Contents(LoaderImagePath(3)));
  ASSERT_EQ(origin_->reads(), 1);
  EXPECT_EQ(origin_->read_log()[0].len, image.size());
  EXPECT_TRUE(buffer.put.empty());
}

TEST_F(MissLoaderTest, OtherMembersLargerThanTheBuffersFileLimitAreNotRead) {
  Make(LoaderMembers(true), LoaderNoExtents());
  const TreeFile image = Original(LoaderImagePath(2));
  const TreeFile caption = Original(LoaderCaptionPath(2));
  LoaderTestBuffer buffer;
  buffer.limit = 100;  // the caption fits, the image does not
  ASSERT_GT(image.size(), buffer.limit);
  ASSERT_LE(caption.size(), buffer.limit);
  // The caption's miss leaves the image to its own reader: the caption alone is read.
  auto got = loader_->Load(caption, buffer);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(LoaderBytes(*got), LoaderCaption(2));
  ASSERT_EQ(origin_->reads(), 1);
  EXPECT_EQ(origin_->read_log()[0].len, caption.size());
  EXPECT_TRUE(buffer.put.empty());
  // The image's miss still brings the small caption.
  got = loader_->Load(image, buffer);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(origin_->reads(), 2);
  EXPECT_EQ(buffer.put.count(caption.key), 1u);
}

TEST_F(MissLoaderTest, MembersTheRamTierHoldsAreNotReadAgain) {
  Make(LoaderMembers(true), LoaderNoExtents());
  const TreeFile image = Original(LoaderImagePath(4));
  const format::Entry caption = At(LoaderCaptionPath(4));
  tiers_->ram().Insert(caption.index, std::make_shared<const std::string>(LoaderCaption(4)));
  ASSERT_TRUE(tiers_->ram().Contains(caption.index));
  LoaderTestBuffer buffer;
  auto got = loader_->Load(image, buffer);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(LoaderBytes(*got), Contents(LoaderImagePath(4)));
  ASSERT_EQ(origin_->reads(), 1);
  EXPECT_EQ(origin_->read_log()[0].len, image.size());  // the image's bytes, not the caption's
  EXPECT_TRUE(buffer.put.empty());
}

// --- Copies at hand ---

TEST_F(MissLoaderTest, APrefetchedCopyIsServedWithoutAnOriginRead) {
  Make(LoaderMembers(true), LoaderNoExtents());
  const TreeFile image = Original(LoaderImagePath(1));
  LoaderTestBuffer buffer;
  cache::Blob prefetched = std::make_shared<const std::string>(Contents(LoaderImagePath(1)));
  buffer.held[image.key] = prefetched;
  auto got = loader_->Load(image, buffer);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->get(), prefetched.get());  // the buffer's copy itself
  EXPECT_EQ(origin_->reads(), 0);
  EXPECT_TRUE(buffer.held.empty());  // taken
  EXPECT_TRUE(buffer.put.empty());
}

TEST_F(MissLoaderTest, TakeAtHandNeverWaitsAndNeverReadsTheOrigin) {
  Make(LoaderMembers(true), LoaderNoExtents());
  const TreeFile image = Original(LoaderImagePath(1));
  LoaderTestBuffer buffer;
  // Nothing at hand: null, and no read.
  EXPECT_EQ(loader_->TakeAtHand(image, buffer), nullptr);
  // A prefetch still loading: null at once (Load is the one that waits for it).
  buffer.loading.insert(image.key);
  buffer.held[image.key] = std::make_shared<const std::string>(Contents(LoaderImagePath(1)));
  EXPECT_EQ(loader_->TakeAtHand(image, buffer), nullptr);
  EXPECT_EQ(buffer.held.count(image.key), 1u);
  // Landed: the copy.
  buffer.loading.clear();
  EXPECT_EQ(LoaderBytes(loader_->TakeAtHand(image, buffer)), Contents(LoaderImagePath(1)));
  EXPECT_EQ(origin_->reads(), 0);
}

// --- Extents ---

TEST_F(MissLoaderTest, AnExtentReadKeepsTheNeighboursAndTheirMissesNeedNoRead) {
  Make(LoaderMembers(true), LoaderFixedExtents());
  const TreeFile f = Original(LoaderFilePath(100));
  LoaderTestBuffer buffer;
  auto got = loader_->Load(f, buffer);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(LoaderBytes(*got), LoaderFileContents(100));
  ASSERT_EQ(origin_->reads(), 1);
  EXPECT_GE(origin_->read_log()[0].len, size_t{128} << 10);  // the extent, not the file
  EXPECT_LE(origin_->read_log()[0].len, kLoaderExtentBytes);
  ExtentCounters c = extents_->Counters();
  EXPECT_EQ(c.extents, 1u);
  EXPECT_GE(c.kept_files, 30u);  // 3 KB files in 4 KiB pages
  // Neighbours go to the extent reader, not to the prefetch buffer (they are no sample's).
  EXPECT_TRUE(buffer.put.empty());
  // However the aligned window falls around file 100, at least 10 of the 20 files beside it
  // are in it: their misses are served from what the extent kept.
  int served = 0;
  for (int i = 90; i <= 110; ++i) {
    if (i == 100) continue;
    const int before = origin_->reads();
    auto n = loader_->Load(Original(LoaderFilePath(i)), buffer);
    ASSERT_TRUE(n.ok()) << LoaderFilePath(i) << ": " << n.status().ToString();
    EXPECT_EQ(LoaderBytes(*n), LoaderFileContents(i)) << LoaderFilePath(i);
    if (origin_->reads() == before) ++served;
  }
  EXPECT_GE(served, 10);
  EXPECT_EQ(extents_->Counters().used_files, static_cast<uint64_t>(served));
}

// A neighbour of `f` (next to it in the index) that lies wholly in the aligned extent window
// around f: the window of a fixed extent read for f's miss (extent_plan.h).
format::Entry NeighbourInLoaderWindow(const format::Dataset& dataset, const format::Entry& f) {
  const uint64_t start = f.record.data_offset - f.record.data_offset % kLoaderExtentBytes;
  const uint64_t end = start + kLoaderExtentBytes;
  for (uint64_t index : {uint64_t{f.index} + 1, uint64_t{f.index} - 1}) {
    auto n = dataset.GetEntry(index);
    if (n.ok() && n->is_regular() && n->record.data_offset >= start &&
        n->record.data_offset + n->size() <= end) {
      return *n;
    }
  }
  ADD_FAILURE() << "no neighbour of entry " << f.index << " in its window";
  return f;
}

TEST_F(MissLoaderTest, AFailedExtentReadIsReadAgainAsTheSampleAlone) {
  Make(LoaderMembers(true), LoaderFixedExtents());
  const TreeFile f = Original(LoaderFilePath(100));
  origin_->FailNextReads(1);
  LoaderTestBuffer buffer;
  auto got = loader_->Load(f, buffer);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(LoaderBytes(*got), LoaderFileContents(100));
  ASSERT_EQ(origin_->reads(), 2);
  const auto log = origin_->read_log();
  EXPECT_GT(log[0].len, f.size());                       // the extent, failed
  EXPECT_EQ(log[1].offset, f.entry.record.data_offset);  // then the file alone
  EXPECT_EQ(log[1].len, f.size());
  // Nothing of the failed extent was kept: a neighbour's miss reads the origin.
  EXPECT_EQ(extents_->Counters().kept_files, 0u);
  const format::Entry n = NeighbourInLoaderWindow(*dataset_, f.entry);
  auto neighbour = loader_->Load(Original(dataset_->PathOf(n.index)), buffer);
  ASSERT_TRUE(neighbour.ok()) << neighbour.status().ToString();
  EXPECT_EQ(origin_->reads(), 3);
}

TEST_F(MissLoaderTest, AShortExtentReadIsReadAgainAsTheSampleAlone) {
  Make(LoaderMembers(true), LoaderFixedExtents());
  const TreeFile f = Original(LoaderFilePath(100));
  origin_->ShortenNextReads(1);
  LoaderTestBuffer buffer;
  auto got = loader_->Load(f, buffer);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(LoaderBytes(*got), LoaderFileContents(100));  // whole, never the short bytes
  ASSERT_EQ(origin_->reads(), 2);
  const auto log = origin_->read_log();
  EXPECT_GT(log[0].len, f.size());
  EXPECT_EQ(log[1].len, f.size());
  EXPECT_EQ(extents_->Counters().kept_files, 0u);
}

TEST_F(MissLoaderTest, AnExtentWhoseFileIsDamagedIsAnErrorNotReadAgain) {
  Make(LoaderMembers(true), LoaderFixedExtents());
  const TreeFile f = Original(LoaderFilePath(100));
  origin_->CorruptNextReadsAt(1, BaseShard(f.entry), f.entry.record.data_offset + f.size() / 2);
  LoaderTestBuffer buffer;
  auto got = loader_->Load(f, buffer);
  EXPECT_EQ(got.status().code(), StatusCode::kCorruption) << got.status().ToString();
  // Only an I/O error is read again as the sample alone: damaged bytes are the shard's.
  EXPECT_EQ(origin_->reads(), 1);
  EXPECT_EQ(origin_->pending_faults(), 0);
  EXPECT_EQ(metrics_.checksum_failures.load(), 1u);
  EXPECT_TRUE(buffer.put.empty());
}

TEST_F(MissLoaderTest, ADamagedNeighbourInAnExtentIsNotKeptAndItsOwnMissReadsIt) {
  Make(LoaderMembers(true), LoaderFixedExtents());
  const TreeFile f = Original(LoaderFilePath(100));
  const format::Entry n = NeighbourInLoaderWindow(*dataset_, f.entry);
  origin_->CorruptNextReadsAt(1, BaseShard(n), n.record.data_offset);
  LoaderTestBuffer buffer;
  auto got = loader_->Load(f, buffer);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(LoaderBytes(*got), LoaderFileContents(100));
  ASSERT_EQ(origin_->reads(), 1);
  ASSERT_EQ(origin_->pending_faults(), 0);         // the extent covered the neighbour
  EXPECT_GE(extents_->Counters().kept_files, 1u);  // the intact ones
  // Nobody asked for the neighbour yet: its damage is not a reader's error.
  EXPECT_EQ(metrics_.checksum_failures.load(), 0u);
  // Its own miss reads it again, intact now, and serves its true bytes.
  auto neighbour = loader_->Load(Original(dataset_->PathOf(n.index)), buffer);
  ASSERT_TRUE(neighbour.ok()) << neighbour.status().ToString();
  EXPECT_EQ(LoaderBytes(*neighbour), Contents(dataset_->PathOf(n.index)));
  EXPECT_EQ(origin_->reads(), 2);
}

// --- Failed, short and damaged sample reads ---

TEST_F(MissLoaderTest, AFailedReadIsAnErrorAndLeavesNothingBehind) {
  Make(LoaderMembers(true), LoaderNoExtents());
  const TreeFile image = Original(LoaderImagePath(5));
  origin_->FailNextReads(1);
  LoaderTestBuffer buffer;
  auto got = loader_->Load(image, buffer);
  EXPECT_EQ(got.status().code(), StatusCode::kIoError) << got.status().ToString();
  EXPECT_EQ(origin_->reads(), 1);
  EXPECT_EQ(metrics_.io_errors.load(), 1u);  // counted as the reader's error
  EXPECT_TRUE(buffer.put.empty());           // no member
  EXPECT_EQ(tiers_->ram().Counters().entries, 0u);
  EXPECT_EQ(extents_->Counters().kept_files, 0u);
  // The failure was the read's: the next miss reads the sample.
  got = loader_->Load(image, buffer);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(LoaderBytes(*got), Contents(LoaderImagePath(5)));
  EXPECT_EQ(buffer.put.size(), 1u);
}

TEST_F(MissLoaderTest, AShortReadIsAnErrorNeverShortBytes) {
  Make(LoaderMembers(true), LoaderNoExtents());
  const TreeFile image = Original(LoaderImagePath(5));
  origin_->ShortenNextReads(1);
  LoaderTestBuffer buffer;
  auto got = loader_->Load(image, buffer);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kIoError);
  EXPECT_NE(got.status().message().find("short read"), std::string::npos)
      << got.status().ToString();
  EXPECT_EQ(origin_->reads(), 1);
  EXPECT_EQ(metrics_.io_errors.load(), 1u);
  EXPECT_TRUE(buffer.put.empty());  // not the caption's half either
}

TEST_F(MissLoaderTest, ADamagedReadIsAnErrorAndTheNextMissReadsTheFileAgain) {
  Make(LoaderMembers(false), LoaderNoExtents());
  const TreeFile image = Original(LoaderImagePath(6));
  origin_->CorruptNextReads(1);  // the middle byte of the read: the image's
  LoaderTestBuffer buffer;
  auto got = loader_->Load(image, buffer);
  EXPECT_EQ(got.status().code(), StatusCode::kCorruption) << got.status().ToString();
  EXPECT_EQ(origin_->reads(), 1);  // not read again within the miss
  EXPECT_EQ(metrics_.checksum_failures.load(), 1u);
  got = loader_->Load(image, buffer);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(LoaderBytes(*got), Contents(LoaderImagePath(6)));
  EXPECT_EQ(origin_->reads(), 2);
}

TEST_F(MissLoaderTest, ADamagedMemberIsLeftOutAndTheFileIsServed) {
  Make(LoaderMembers(true), LoaderNoExtents());
  const TreeFile image = Original(LoaderImagePath(7));
  const format::Entry caption = At(LoaderCaptionPath(7));
  origin_->CorruptNextReadsAt(1, BaseShard(caption), caption.record.data_offset);
  LoaderTestBuffer buffer;
  auto got = loader_->Load(image, buffer);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(LoaderBytes(*got), Contents(LoaderImagePath(7)));
  ASSERT_EQ(origin_->pending_faults(), 0);  // the read covered the caption
  EXPECT_TRUE(buffer.put.empty());          // its damaged bytes are not held for its reader
  EXPECT_EQ(metrics_.checksum_failures.load(), 0u);  // its own read reports it, if it fails
}

// --- A view's files ---

TEST_F(MissLoaderTest, AResizedFileIsTheViewShardsBytesUnderItsViewKey) {
  Make(LoaderMembers(true), LoaderNoExtents());
  const TreeFile f = InView(LoaderImagePath(2));
  ASSERT_TRUE(f.resized());
  EXPECT_EQ(f.key, ViewKey(kLoaderSide, f.entry.index));
  const std::string resized = ResizedBytes(f);
  ASSERT_NE(resized, Contents(LoaderImagePath(2)));
  // A prefetched copy of the original image is in the buffer: the view's file is not it.
  LoaderTestBuffer buffer;
  buffer.held[f.entry.index] = std::make_shared<const std::string>(Contents(LoaderImagePath(2)));
  auto got = loader_->Load(f, buffer);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(LoaderBytes(*got), resized);
  EXPECT_EQ(buffer.asked, std::vector<uint64_t>{f.key});
  EXPECT_EQ(buffer.held.count(f.entry.index), 1u);  // the original's copy was not taken
  // The resized image from the view's shard, the caption from the base shard.
  EXPECT_EQ(origin_->reads_of({static_cast<uint32_t>(ViewTree()), f.file.shard}), 1);
  bool read_resized = false;
  for (const auto& r : origin_->read_log()) {
    if (r.ref.tree != origin::kDatasetTree) {
      read_resized = r.offset == f.file.data_offset && r.len == f.size();
    }
  }
  EXPECT_TRUE(read_resized);
  // The caption (the same bytes in the view as in the original tree) waits under its entry's
  // key; nothing under the original image's.
  const format::Entry caption = At(LoaderCaptionPath(2));
  ASSERT_EQ(buffer.put.count(caption.index), 1u);
  EXPECT_EQ(LoaderBytes(buffer.put[caption.index]), LoaderCaption(2));
  EXPECT_EQ(buffer.put.count(f.entry.index), 0u);
  EXPECT_EQ(buffer.put.size(), 1u);
}

TEST_F(MissLoaderTest, AViewsCaptionBringsTheResizedImageUnderItsViewKey) {
  Make(LoaderMembers(true), LoaderNoExtents());
  const TreeFile caption = InView(LoaderCaptionPath(4));
  ASSERT_FALSE(caption.resized());
  EXPECT_EQ(caption.key, caption.entry.index);  // an original: the original tree's key
  const TreeFile image = InView(LoaderImagePath(4));
  LoaderTestBuffer buffer;
  auto got = loader_->Load(caption, buffer);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(LoaderBytes(*got), LoaderCaption(4));
  ASSERT_EQ(buffer.put.count(image.key), 1u);
  EXPECT_EQ(LoaderBytes(buffer.put[image.key]), ResizedBytes(image));
  EXPECT_EQ(buffer.put.count(image.entry.index), 0u);  // never under the original's key
  EXPECT_EQ(origin_->reads(), 2);  // the caption from the base shard, the image from the view's
  EXPECT_EQ(origin_->reads_of({static_cast<uint32_t>(ViewTree()), image.file.shard}), 1);
}

TEST_F(MissLoaderTest, AFailedReadOfAResizedFileIsAnErrorAndLoadsNoMember) {
  Make(LoaderMembers(true), LoaderNoExtents());
  const TreeFile f = InView(LoaderImagePath(3));
  ASSERT_TRUE(f.resized());
  origin_->FailNextReads(1);
  LoaderTestBuffer buffer;
  auto got = loader_->Load(f, buffer);
  EXPECT_EQ(got.status().code(), StatusCode::kIoError) << got.status().ToString();
  EXPECT_EQ(origin_->reads(), 1);  // the caption is not read after the image failed
  EXPECT_TRUE(buffer.put.empty());
  EXPECT_EQ(metrics_.io_errors.load(), 1u);
}

// --- Prefetch and warm-up batches ---

TEST_F(MissLoaderTest, LoadAheadReadsNeighboursTogetherAndLeavesLargeFilesToTheirReaders) {
  Make(LoaderMembers(true), LoaderNoExtents());
  const format::Entry image = At(LoaderImagePath(5));
  ASSERT_GT(image.size(), kLoaderFileBytes);
  std::vector<cache::CacheKey> keys;
  for (int i = 10; i < 13; ++i) keys.push_back(At(LoaderFilePath(i)).index);
  keys.push_back(image.index);
  std::map<cache::CacheKey, std::string> found;
  loader_->LoadAhead(keys, kLoaderFileBytes, [&](cache::CacheKey key, cache::Blob blob) {
    found[key] = LoaderBytes(blob);
  });
  ASSERT_EQ(found.size(), 3u);
  for (int i = 10; i < 13; ++i) {
    EXPECT_EQ(found[At(LoaderFilePath(i)).index], LoaderFileContents(i));
  }
  EXPECT_EQ(found.count(image.index), 0u);  // over the limit: not read
  EXPECT_EQ(origin_->reads(), 1);           // the three neighbours in one read
  EXPECT_EQ(reader_->Counters(ReadCause::kPrefetch).reads, 1u);
  EXPECT_EQ(reader_->Counters(ReadCause::kDemand).reads, 0u);
}

TEST_F(MissLoaderTest, LoadAheadReadsAViewKeyFromTheViewShard) {
  Make(LoaderMembers(true), LoaderNoExtents());
  const TreeFile f = InView(LoaderImagePath(6));
  std::map<cache::CacheKey, std::string> found;
  loader_->LoadAhead({f.key}, 8 << 20, [&](cache::CacheKey key, cache::Blob blob) {
    found[key] = LoaderBytes(blob);
  });
  ASSERT_EQ(found.size(), 1u);
  ASSERT_EQ(found.count(f.key), 1u);
  EXPECT_EQ(found[f.key], ResizedBytes(f));
  EXPECT_EQ(origin_->reads(), 1);
  EXPECT_EQ(origin_->reads_of({static_cast<uint32_t>(ViewTree()), f.file.shard}), 1);
}

TEST_F(MissLoaderTest, LoadAheadLeavesFilesOfAFailedReadUnfoundAndUncounted) {
  Make(LoaderMembers(true), LoaderNoExtents());
  std::vector<cache::CacheKey> keys;
  for (int i = 20; i < 23; ++i) keys.push_back(At(LoaderFilePath(i)).index);
  origin_->FailNextReads(1);
  int found = 0;
  loader_->LoadAhead(keys, 8 << 20, [&](cache::CacheKey, cache::Blob) { ++found; });
  EXPECT_EQ(found, 0);
  EXPECT_EQ(origin_->reads(), 1);
  // Nobody asked for them yet: their own reads report a failure, not the prefetch.
  EXPECT_EQ(metrics_.io_errors.load(), 0u);
}

TEST_F(MissLoaderTest, WarmUpReadsOriginalsTogetherCountedAsWarmUp) {
  Make(LoaderMembers(true), LoaderNoExtents());
  std::vector<format::Entry> entries;
  for (int i = 30; i < 40; ++i) entries.push_back(At(LoaderFilePath(i)));
  std::map<cache::CacheKey, std::string> found;
  loader_->LoadWarm(entries,
                    [&](cache::CacheKey key, cache::Blob blob) { found[key] = LoaderBytes(blob); });
  ASSERT_EQ(found.size(), 10u);
  for (int i = 30; i < 40; ++i) {
    EXPECT_EQ(found[At(LoaderFilePath(i)).index], LoaderFileContents(i));
  }
  EXPECT_EQ(origin_->reads(), 1);
  EXPECT_EQ(reader_->Counters(ReadCause::kWarmup).reads, 1u);
  EXPECT_EQ(reader_->Counters(ReadCause::kDemand).reads, 0u);
}

}  // namespace
}  // namespace mmfs::fs
