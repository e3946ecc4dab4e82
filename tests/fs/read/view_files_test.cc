// ViewFiles (fs/read/view_files.h) over a dataset with two views (sides 32 and 48) read through
// an origin in memory that fails, shortens or damages reads on request
// (tests/fakes/memory_origin.h): how trees are numbered, what a base entry is in each tree (the
// entry itself, a resized image under its own key, the original under the original's key, or
// nothing), view keys and the files they name, control-channel paths, and the loads of resized
// files: exact bytes, checked, counted by cause, coalesced, and an error Status (counted for a
// reader's load, not for a batch's) when the read fails or the bytes are damaged.
#include "fs/read/view_files.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fs/format/dataset.h"
#include "fs/format/view_set.h"
#include "fs/metrics/metrics.h"
#include "fs/origin/local_file_origin.h"
#include "fs/read/origin_reader.h"
#include "tests/fakes/memory_origin.h"
#include "tests/origin_helper.h"
#include "tests/pack_helper.h"
#include "tests/test_util.h"
#include "tools/view/view_builder.h"

namespace mmfs::fs {
namespace {

using testing::MemoryOrigin;

// s/: samples k.jpg + k.txt, each image larger than both sides. u/: an image smaller than both
// (the original serves in the views). b/: a damaged image (kept by the pack, left out of the
// views) and its caption.
constexpr int kViewFilesSamples = 6;
constexpr uint32_t kViewFilesSmallSide = 32;
constexpr uint32_t kViewFilesLargeSide = 48;
constexpr char kViewFilesTiny[] = "u/tiny.jpg";
constexpr char kViewFilesBroken[] = "b/300.jpg";
constexpr char kViewFilesBrokenCaption[] = "b/300.txt";

std::string ViewFilesImage(int i) { return "s/" + std::to_string(100 + i) + ".jpg"; }
std::string ViewFilesCaption(int i) { return "s/" + std::to_string(100 + i) + ".txt"; }

std::string ViewFilesBytes(const cache::Blob& b) { return b != nullptr ? *b : "<null>"; }

class ViewFilesTest : public ::testing::Test {
 protected:
  struct Suite {
    testing::TempDir tmp;
    std::string error;  // why building failed; empty when it worked
  };
  static void SetUpTestSuite() {
#if !defined(__SANITIZE_THREAD__)
    suite_ = new Suite;
    suite_->error = BuildSuite(*suite_);
#endif
  }
  static void TearDownTestSuite() {
    delete suite_;
    suite_ = nullptr;
  }
  static std::string BuildSuite(Suite& s) {
    for (int i = 0; i < kViewFilesSamples; ++i) {
      testing::WriteFile(s.tmp / ("src/" + ViewFilesImage(i)),
                         testing::MakeJpeg(96, 72, static_cast<unsigned>(i + 1)));
      testing::WriteFile(s.tmp / ("src/" + ViewFilesCaption(i)), "caption " + std::to_string(i));
    }
    testing::WriteFile(s.tmp / (std::string("src/") + kViewFilesTiny),
                       testing::MakeJpeg(24, 20, 9));
    const std::string whole = testing::MakeJpeg(96, 72, 11);
    testing::WriteFile(s.tmp / (std::string("src/") + kViewFilesBroken),
                       whole.substr(0, whole.size() / 2));
    testing::WriteFile(s.tmp / (std::string("src/") + kViewFilesBrokenCaption), "broken's caption");
    testing::CollectingReporter packing;
    auto packed =
        testing::PackFolder(s.tmp / "src", s.tmp / "ds", &packing, pack::OnBadImage::kKeep);
    if (!packed.ok()) return "pack: " + packed.status().ToString();
    for (uint32_t side : {kViewFilesLargeSide, kViewFilesSmallSide}) {
      view::ViewOptions o;
      o.dataset = s.tmp / "ds";
      o.side = side;
      o.on_bad = pack::OnBadImage::kSkip;
      testing::CollectingReporter reporter;
      auto built = view::BuildView(o, reporter);
      if (!built.ok()) return "view: " + built.status().ToString();
      if (built->resized != static_cast<uint64_t>(kViewFilesSamples))
        return "not every image resized";
      if (built->unchanged_images != 1 || built->omitted != 1)
        return "tiny or broken image not as meant";
    }
    return "";
  }

  void SetUp() override {
    MMFS_SKIP_UNDER_TSAN();
    ASSERT_NE(suite_, nullptr);
    ASSERT_EQ(suite_->error, "");
    Make(0);
  }
  // ViewFiles over the suite's dataset and both views, read through a fresh MemoryOrigin;
  // `root_side` as mmfs mount --view gives it.
  void Make(uint32_t root_side) {
    views_.reset();
    reader_.reset();
    auto ds = format::Dataset::Open(suite_->tmp / "ds");
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    dataset_ = std::move(ds).value();
    origin_ = MemoryOrigin::FromDataset(*dataset_);
    reader_ = std::make_unique<OriginReader>(*dataset_, *origin_, metrics_, OriginReaderOptions{});
    format::ViewSet set = format::ViewSet::Open(*dataset_, *origin_);
    ASSERT_EQ(set.views().size(), 2u);
    views_ = std::make_unique<ViewFiles>(*dataset_, std::move(set), root_side, *reader_);
    origin_->ResetCounters();
  }

  format::Entry At(const std::string& path) {
    auto e = testing::EntryAtPath(*dataset_, path);
    EXPECT_TRUE(e.ok()) << path;
    return e.ok() ? *e : format::Entry{};
  }
  size_t Tree(uint32_t side) const { return views_->TreeOfSide(side).value_or(0); }
  TreeFile In(uint32_t side, const std::string& path) {
    auto f = views_->Resolve(Tree(side), At(path));
    EXPECT_TRUE(f.ok()) << path << ": " << f.status().ToString();
    return f.ok() ? *f : TreeFile{};
  }
  // The resized bytes of `f` as its view's shard holds them, read through an origin of the
  // test's own.
  std::string ResizedBytes(uint32_t side, const TreeFile& f) {
    origin::LocalFileOrigin shards(dataset_->dir());
    format::ViewSet set = format::ViewSet::Open(*dataset_, shards);
    const format::View* v = set.Find(side);
    EXPECT_NE(v, nullptr);
    return v != nullptr ? testing::ReadChecked(shards, *v, f.file) : std::string();
  }
  origin::ShardRef ViewShard(uint32_t side, const TreeFile& f) {
    return {views_->views().Find(side)->tree(), f.file.shard};
  }
  ViewStats StatsOf(uint32_t side) {
    std::vector<ViewStats> all;
    views_->Stats(&all);
    for (const ViewStats& v : all) {
      if (v.side == side) return v;
    }
    ADD_FAILURE() << "no stats for view " << side;
    return {};
  }

  static Suite* suite_;
  Metrics metrics_;
  std::unique_ptr<format::Dataset> dataset_;
  std::unique_ptr<MemoryOrigin> origin_;
  std::unique_ptr<OriginReader> reader_;
  std::unique_ptr<ViewFiles> views_;
};

ViewFilesTest::Suite* ViewFilesTest::suite_ = nullptr;

// --- Trees and what a file is in each ---

TEST_F(ViewFilesTest, TreesAreTheOriginalsThenTheViewsByAscendingSide) {
  EXPECT_EQ(views_->tree_count(), 3u);
  EXPECT_EQ(views_->root_tree(), 0u);
  EXPECT_EQ(views_->side(0), 0u);
  EXPECT_EQ(views_->side(1), kViewFilesSmallSide);
  EXPECT_EQ(views_->side(2), kViewFilesLargeSide);
  EXPECT_EQ(views_->TreeOfSide(kViewFilesSmallSide).value_or(99), 1u);
  EXPECT_EQ(views_->TreeOfSide(kViewFilesLargeSide).value_or(99), 2u);
  EXPECT_FALSE(views_->TreeOfSide(64).has_value());
  Make(kViewFilesLargeSide);  // mounted with --view 48
  EXPECT_EQ(views_->root_tree(), 2u);
}

TEST_F(ViewFilesTest, InTheOriginalTreeAFileIsItsEntryUnderItsIndex) {
  const format::Entry e = At(ViewFilesImage(2));
  auto f = views_->Resolve(0, e);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_FALSE(f->resized());
  EXPECT_EQ(f->key, e.index);
  EXPECT_EQ(f->size(), e.size());
  EXPECT_EQ(f->file.shard, e.record.shard);
  EXPECT_EQ(f->file.data_offset, e.record.data_offset);
  EXPECT_EQ(f->file.checksum, e.record.checksum);
  // Even a file the views leave out.
  EXPECT_TRUE(views_->Resolve(0, At(kViewFilesBroken)).ok());
}

TEST_F(ViewFilesTest, AResizedImageHasAViewKeyOfItsSideNeverAnOriginalsKey) {
  const format::Entry e = At(ViewFilesImage(2));
  const TreeFile small = In(kViewFilesSmallSide, ViewFilesImage(2));
  const TreeFile large = In(kViewFilesLargeSide, ViewFilesImage(2));
  ASSERT_TRUE(small.resized());
  ASSERT_TRUE(large.resized());
  EXPECT_EQ(small.key, ViewKey(kViewFilesSmallSide, e.index));
  EXPECT_TRUE(IsViewKey(small.key));
  EXPECT_EQ(ViewKeySide(small.key), kViewFilesSmallSide);
  EXPECT_EQ(ViewKeyIndex(small.key), e.index);
  EXPECT_NE(small.key, large.key);
  EXPECT_NE(small.key, e.index);
  EXPECT_LT(small.size(), e.size());  // a smaller image
  EXPECT_LT(small.size(), large.size());
  EXPECT_EQ(small.entry.index, e.index);
}

TEST_F(ViewFilesTest, CaptionsAndSmallImagesAreTheOriginalsUnderTheOriginalsKeys) {
  for (const std::string& path :
       {ViewFilesCaption(1), std::string(kViewFilesTiny), std::string(kViewFilesBrokenCaption)}) {
    const format::Entry e = At(path);
    const TreeFile f = In(kViewFilesSmallSide, path);
    EXPECT_FALSE(f.resized()) << path;
    EXPECT_EQ(f.key, e.index) << path;  // the same cache entry as the original tree's
    EXPECT_EQ(f.size(), e.size()) << path;
    EXPECT_EQ(f.file.data_offset, e.record.data_offset) << path;
  }
}

TEST_F(ViewFilesTest, AnImageLeftOutOfAViewIsNotFoundThereAndDroppedFromItsMembers) {
  const format::Entry broken = At(kViewFilesBroken);
  const format::Entry caption = At(kViewFilesBrokenCaption);
  auto f = views_->Resolve(Tree(kViewFilesSmallSide), broken);
  EXPECT_EQ(f.status().code(), StatusCode::kNotFound) << f.status().ToString();
  EXPECT_EQ(metrics_.checksum_failures.load() + metrics_.io_errors.load(), 0u);  // no damage
  const std::vector<TreeFile> members =
      views_->Members(Tree(kViewFilesSmallSide), {broken, caption});
  ASSERT_EQ(members.size(), 1u);
  EXPECT_EQ(members[0].entry.index, caption.index);
  EXPECT_EQ(views_->Members(0, {broken, caption}).size(), 2u);
}

// --- Keys and paths ---

TEST_F(ViewFilesTest, AViewKeyNamesItsResizedFileAndNothingElseNamesOne) {
  const TreeFile f = In(kViewFilesLargeSide, ViewFilesImage(4));
  auto back = views_->FileOfKey(f.key);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->tree, Tree(kViewFilesLargeSide));
  EXPECT_EQ(back->entry.index, f.entry.index);
  EXPECT_EQ(back->file.data_offset, f.file.data_offset);
  const uint64_t tiny = At(kViewFilesTiny).index;
  for (cache::CacheKey key : {
           cache::CacheKey{f.entry.index},                        // an original's key
           ViewKey(64, f.entry.index),                            // a view this mount lacks
           ViewKey(kViewFilesSmallSide, tiny),                    // a file the view does not resize
           ViewKey(kViewFilesSmallSide, dataset_->entry_count())  // no such entry
       }) {
    EXPECT_EQ(views_->FileOfKey(key).status().code(), StatusCode::kNotFound) << key;
  }
}

TEST_F(ViewFilesTest, ControlPathsNameATreeAndAnEntry) {
  const format::Entry e = At(ViewFilesImage(0));
  auto plain = views_->ResolvePath("", ViewFilesImage(0));
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(plain->first, 0u);
  EXPECT_EQ(plain->second.index, e.index);
  auto in_view = views_->ResolvePath("", "@32/" + ViewFilesImage(0));
  ASSERT_TRUE(in_view.ok()) << in_view.status().ToString();
  EXPECT_EQ(in_view->first, Tree(kViewFilesSmallSide));
  EXPECT_EQ(in_view->second.index, e.index);
  // Absolute under the mount point, with "." steps and doubled slashes.
  auto absolute = views_->ResolvePath("/mnt/data", "/mnt/data/@48//s/./100.jpg");
  ASSERT_TRUE(absolute.ok()) << absolute.status().ToString();
  EXPECT_EQ(absolute->first, Tree(kViewFilesLargeSide));
  EXPECT_EQ(absolute->second.index, e.index);
  EXPECT_EQ(views_->ResolvePath("", "@64/" + ViewFilesImage(0)).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(views_->ResolvePath("", "s/no-such.jpg").status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(views_->ResolvePath("", ViewFilesImage(0) + "/below").ok());
  // With a view at the root, every path is that view's, and @N names no tree.
  Make(kViewFilesSmallSide);
  auto rooted = views_->ResolvePath("", ViewFilesImage(0));
  ASSERT_TRUE(rooted.ok()) << rooted.status().ToString();
  EXPECT_EQ(rooted->first, Tree(kViewFilesSmallSide));
  EXPECT_FALSE(views_->ResolvePath("", "@48/" + ViewFilesImage(0)).ok());
}

// --- Loading resized files ---

TEST_F(ViewFilesTest, LoadReadsTheResizedBytesFromTheViewsShardAndCountsThem) {
  const TreeFile f = In(kViewFilesSmallSide, ViewFilesImage(3));
  const std::string want = ResizedBytes(kViewFilesSmallSide, f);
  ASSERT_FALSE(want.empty());
  auto got = views_->Load(f, ReadCause::kDemand);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(ViewFilesBytes(*got), want);
  ASSERT_EQ(origin_->reads(), 1);
  const auto log = origin_->read_log();
  EXPECT_EQ(log[0].ref.tree, ViewShard(kViewFilesSmallSide, f).tree);
  EXPECT_EQ(log[0].offset, f.file.data_offset);
  EXPECT_EQ(log[0].len, f.size());
  EXPECT_EQ(reader_->Counters(ReadCause::kDemand).reads, 1u);
  ViewStats s = StatsOf(kViewFilesSmallSide);
  EXPECT_EQ(s.resized_loads, 1u);
  EXPECT_EQ(s.resized_load_bytes, f.size());
  EXPECT_EQ(s.readahead_loads, 0u);
  EXPECT_EQ(StatsOf(kViewFilesLargeSide).resized_loads, 0u);
  // Loaded ahead: counted as readahead.
  ASSERT_TRUE(views_->Load(f, ReadCause::kPrefetch).ok());
  EXPECT_EQ(StatsOf(kViewFilesSmallSide).readahead_loads, 1u);
  EXPECT_EQ(reader_->Counters(ReadCause::kPrefetch).reads, 1u);
}

TEST_F(ViewFilesTest, LoadRefusesAFileThatIsNotResizedWithoutReading) {
  for (const TreeFile& f :
       {In(kViewFilesSmallSide, ViewFilesCaption(0)), In(kViewFilesSmallSide, kViewFilesTiny)}) {
    EXPECT_EQ(views_->Load(f, ReadCause::kDemand).status().code(), StatusCode::kInvalidArgument);
  }
  auto original = views_->Resolve(0, At(ViewFilesImage(0)));
  ASSERT_TRUE(original.ok());
  EXPECT_EQ(views_->Load(*original, ReadCause::kDemand).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(origin_->reads(), 0);
}

TEST_F(ViewFilesTest, AFailedOrShortReadIsACountedIoErrorAndTheNextLoadSucceeds) {
  const TreeFile f = In(kViewFilesLargeSide, ViewFilesImage(1));
  origin_->FailNextReads(1);
  auto got = views_->Load(f, ReadCause::kDemand);
  EXPECT_EQ(got.status().code(), StatusCode::kIoError) << got.status().ToString();
  origin_->ShortenNextReads(1);
  got = views_->Load(f, ReadCause::kDemand);
  EXPECT_EQ(got.status().code(), StatusCode::kIoError) << got.status().ToString();
  EXPECT_EQ(metrics_.io_errors.load(), 2u);
  EXPECT_EQ(StatsOf(kViewFilesLargeSide).resized_loads, 0u);  // only loads that checked
  got = views_->Load(f, ReadCause::kDemand);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(ViewFilesBytes(*got), ResizedBytes(kViewFilesLargeSide, f));
  EXPECT_EQ(origin_->reads(), 3);
}

TEST_F(ViewFilesTest, ADamagedResizedFileFailsItsCheckAndIsNeverHandedOut) {
  const TreeFile f = In(kViewFilesSmallSide, ViewFilesImage(5));
  origin_->CorruptNextReads(1);
  auto got = views_->Load(f, ReadCause::kDemand);
  EXPECT_EQ(got.status().code(), StatusCode::kCorruption) << got.status().ToString();
  EXPECT_EQ(origin_->pending_faults(), 0);
  EXPECT_EQ(metrics_.checksum_failures.load(), 1u);
  EXPECT_EQ(StatsOf(kViewFilesSmallSide).resized_loads, 0u);
}

TEST_F(ViewFilesTest, LoadManyCoalescesNeighboursPerViewAndSkipsOriginals) {
  std::vector<TreeFile> files;
  for (int i = 1; i <= 3; ++i) files.push_back(In(kViewFilesSmallSide, ViewFilesImage(i)));
  files.push_back(In(kViewFilesLargeSide, ViewFilesImage(2)));
  files.push_back(In(kViewFilesSmallSide, ViewFilesCaption(1)));  // not resized: not loaded here
  std::map<cache::CacheKey, std::string> found;
  views_->LoadMany(files, ReadCause::kPrefetch,
                   [&](const TreeFile& f, cache::Blob b) { found[f.key] = ViewFilesBytes(b); });
  ASSERT_EQ(found.size(), 4u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(found[files[i].key], ResizedBytes(kViewFilesSmallSide, files[i])) << i;
  }
  EXPECT_EQ(found[files[3].key], ResizedBytes(kViewFilesLargeSide, files[3]));
  EXPECT_EQ(found.count(files[4].key), 0u);
  // One read of each view's shard; none of the base shards.
  EXPECT_EQ(origin_->reads(), 2);
  EXPECT_EQ(origin_->reads_of(ViewShard(kViewFilesSmallSide, files[0])), 1);
  EXPECT_EQ(origin_->reads_of(ViewShard(kViewFilesLargeSide, files[3])), 1);
  EXPECT_EQ(StatsOf(kViewFilesSmallSide).readahead_loads, 3u);
  EXPECT_EQ(StatsOf(kViewFilesLargeSide).readahead_loads, 1u);
}

TEST_F(ViewFilesTest, LoadManyLeavesFailedAndDamagedFilesUnfoundAndUncounted) {
  std::vector<TreeFile> files;
  for (int i = 0; i < 3; ++i) files.push_back(In(kViewFilesSmallSide, ViewFilesImage(i)));
  // A failed read: none of them.
  origin_->FailNextReads(1);
  int found = 0;
  views_->LoadMany(files, ReadCause::kPrefetch, [&](const TreeFile&, cache::Blob) { ++found; });
  EXPECT_EQ(found, 0);
  // A damaged one: the others.
  const TreeFile& bad = files[1];
  origin_->CorruptNextReadsAt(1, ViewShard(kViewFilesSmallSide, bad), bad.file.data_offset + 1);
  std::vector<cache::CacheKey> keys;
  views_->LoadMany(files, ReadCause::kPrefetch,
                   [&](const TreeFile& f, cache::Blob) { keys.push_back(f.key); });
  EXPECT_EQ(origin_->pending_faults(), 0);
  std::sort(keys.begin(), keys.end());
  std::vector<cache::CacheKey> want = {files[0].key, files[2].key};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(keys, want);
  // Nobody asked for them yet: their own loads report what is wrong.
  EXPECT_EQ(metrics_.io_errors.load(), 0u);
  EXPECT_EQ(metrics_.checksum_failures.load(), 0u);
  EXPECT_EQ(StatsOf(kViewFilesSmallSide).readahead_loads, 2u);
}

TEST_F(ViewFilesTest, ServedBytesAreCountedPerViewAndFilesAtTheirStart) {
  views_->CountServed(Tree(kViewFilesSmallSide), 0, 100);
  views_->CountServed(Tree(kViewFilesSmallSide), 100, 50);
  views_->CountServed(Tree(kViewFilesLargeSide), 4096, 10);
  views_->CountServed(0, 0, 1000);  // the original tree: not a view's
  ViewStats small = StatsOf(kViewFilesSmallSide);
  EXPECT_EQ(small.files_served, 1u);
  EXPECT_EQ(small.bytes_served, 150u);
  ViewStats large = StatsOf(kViewFilesLargeSide);
  EXPECT_EQ(large.files_served, 0u);
  EXPECT_EQ(large.bytes_served, 10u);
}

}  // namespace
}  // namespace mmfs::fs
