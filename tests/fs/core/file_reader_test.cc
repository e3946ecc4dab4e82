// FileReader (fs/core/file_reader.h) over the real read path (origin reader, tier stack, miss
// loader, prefetcher) and an origin in memory that fails, shortens or damages reads on request
// (tests/fakes/memory_origin.h): where each READ's bytes come from (the origin, the RAM tier, the
// read buffer, a sample member the prefetcher holds, bytes already at hand), how a READ is
// clipped to its file, that a failed, short or damaged origin read is an error Status, counted and
// never cached, after which the next READ succeeds, and that a file too large to load whole is
// checked before any of its bytes is served. No mount, no threads of the test's own.
#include "fs/core/file_reader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "cache/tier_stack.h"
#include "fs/format/dataset.h"
#include "fs/format/view_set.h"
#include "fs/metrics/metrics.h"
#include "fs/read/extent_reader.h"
#include "fs/read/miss_loader.h"
#include "fs/read/origin_reader.h"
#include "fs/read/view_files.h"
#include "fs/readahead/prefetcher.h"
#include "tests/fakes/memory_origin.h"
#include "tests/origin_helper.h"
#include "tests/pack_helper.h"
#include "tests/test_util.h"

namespace mmfs::fs {
namespace {

using testing::MemoryOrigin;

// d/: files of their own sample each. s/: samples of two members (k.cls + k.txt). big/: one file
// larger than the reader loads whole in these tests.
constexpr int kFileReaderFiles = 20;
constexpr size_t kFileReaderFileBytes = 3000;
constexpr int kFileReaderSamples = 4;
constexpr size_t kFileReaderBigBytes = 300000;
constexpr uint64_t kFileReaderMaxWhole = 64 << 10;  // below the big file

std::string FileReaderPath(int i) { return "d/" + std::to_string(1000 + i) + ".txt"; }
// Distinct bytes per file, so a file served from the wrong place shows.
std::string FileReaderContents(int i, size_t bytes = kFileReaderFileBytes) {
  std::string s = "file " + std::to_string(i) + " ";
  for (size_t k = s.size(); k < bytes; ++k) {
    s.push_back(static_cast<char>('a' + (static_cast<size_t>(i) * 11 + k * 3) % 26));
  }
  return s;
}
std::string FileReaderClassPath(int i) { return "s/" + std::to_string(500 + i) + ".cls"; }
std::string FileReaderCaptionPath(int i) { return "s/" + std::to_string(500 + i) + ".txt"; }
std::string FileReaderCaption(int i) { return "caption of sample " + std::to_string(i); }
constexpr char kFileReaderBigPath[] = "big/huge.bin";

std::string FileReaderBytes(const ReadData& d) {
  return d.data != nullptr ? std::string(d.data, d.size) : std::string();
}

class FileReaderTest : public ::testing::Test {
 protected:
  struct Suite {
    testing::TempDir tmp;
    std::string error;  // why packing failed; empty when it worked
    std::map<std::string, std::string> contents;
  };
  static void SetUpTestSuite() {
    suite_ = new Suite;
    Suite& s = *suite_;
    for (int i = 0; i < kFileReaderFiles; ++i) {
      s.contents[FileReaderPath(i)] = FileReaderContents(i);
    }
    for (int i = 0; i < kFileReaderSamples; ++i) {
      s.contents[FileReaderClassPath(i)] = "class " + std::to_string(i % 2);
      s.contents[FileReaderCaptionPath(i)] = FileReaderCaption(i);
    }
    s.contents[kFileReaderBigPath] = FileReaderContents(99, kFileReaderBigBytes);
    for (const auto& [path, bytes] : s.contents) testing::WriteFile(s.tmp / ("src/" + path), bytes);
    auto packed = testing::PackFolder(s.tmp / "src", s.tmp / "ds");
    if (!packed.ok()) s.error = "pack: " + packed.status().ToString();
  }
  static void TearDownTestSuite() {
    delete suite_;
    suite_ = nullptr;
  }

  void SetUp() override {
    ASSERT_NE(suite_, nullptr);
    ASSERT_EQ(suite_->error, "");
  }
  // The read path over the suite's dataset through a fresh MemoryOrigin: a RAM tier of
  // `ram_bytes`, a read buffer of `read_buffer_bytes`, no SSD or cluster tier, no extents, sample
  // members on.
  void Make(uint64_t ram_bytes = 64 << 20, uint64_t read_buffer_bytes = 64 << 20) {
    auto ds = format::Dataset::Open(suite_->tmp / "ds");
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    dataset_ = std::move(ds).value();
    origin_ = MemoryOrigin::FromDataset(*dataset_);
    OriginReaderOptions reading;
    reading.read_buffer_bytes = read_buffer_bytes;
    reader_ = std::make_unique<OriginReader>(*dataset_, *origin_, metrics_, reading);
    tiers_ =
        std::make_unique<cache::TierStack>(ram_bytes, dataset_->manifest().files, nullptr, nullptr);
    views_ = std::make_unique<ViewFiles>(*dataset_, format::ViewSet::Open(*dataset_, *origin_), 0,
                                         *reader_);
    ExtentOptions extents;
    extents.mode = ExtentMode::kOff;
    extents_ = std::make_unique<ExtentReader>(*dataset_, *tiers_, std::move(extents));
    loader_ = std::make_unique<MissLoader>(*dataset_, *reader_, *views_, *tiers_, *extents_,
                                           MissLoaderOptions{});
    PrefetcherOptions p;
    p.threads = 1;
    p.buffer_bytes = 8 << 20;
    p.max_cached_file_bytes = kFileReaderMaxWhole;
    prefetcher_ = std::make_unique<Prefetcher>(*dataset_, *views_, *tiers_, *loader_, p);
    file_reader_ = std::make_unique<FileReader>(*dataset_, *tiers_, *reader_, *prefetcher_,
                                                *extents_, *loader_, kFileReaderMaxWhole);
    origin_->ResetCounters();
  }

  // `path` as a file of the original tree.
  TreeFile File(const std::string& path) {
    auto e = testing::EntryAtPath(*dataset_, path);
    EXPECT_TRUE(e.ok()) << path;
    if (!e.ok()) return TreeFile{};
    auto f = views_->Resolve(0, *e);
    EXPECT_TRUE(f.ok()) << path;
    return f.ok() ? *f : TreeFile{};
  }
  const std::string& Contents(const std::string& path) { return suite_->contents.at(path); }
  uint64_t LoadErrors() {
    StatsSnapshot s;
    file_reader_->CacheStats(&s);
    return s.origin.errors;
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
  std::unique_ptr<Prefetcher> prefetcher_;
  std::unique_ptr<FileReader> file_reader_;
};

FileReaderTest::Suite* FileReaderTest::suite_ = nullptr;

// --- Where the bytes come from ---

TEST_F(FileReaderTest, AColdReadIsServedFromTheOriginWithTheFilesExactBytes) {
  Make();
  const TreeFile f = File(FileReaderPath(3));
  EXPECT_EQ(file_reader_->Residency(f.key), "none");
  auto got = file_reader_->Read(f, 0, 1 << 20);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(FileReaderBytes(*got), Contents(FileReaderPath(3)));
  EXPECT_TRUE(got->at_end);
  EXPECT_TRUE(got->tier_holds);  // the RAM tier kept it: the page cache's copy is a second one
  ASSERT_EQ(origin_->reads(), 1);
  EXPECT_EQ(origin_->read_log()[0].offset, f.entry.record.data_offset);
  EXPECT_EQ(origin_->read_log()[0].len, f.size());
  EXPECT_EQ(reader_->Counters(ReadCause::kDemand).reads, 1u);
  EXPECT_EQ(file_reader_->Residency(f.key), "ram");
}

TEST_F(FileReaderTest, ASecondReadIsServedFromTheRamTierWithoutAnOriginRead) {
  Make();
  const TreeFile f = File(FileReaderPath(4));
  ASSERT_TRUE(file_reader_->Read(f, 0, 1 << 20).ok());
  ASSERT_EQ(origin_->reads(), 1);
  const uint64_t hits_before = tiers_->ram().Counters().hits;
  auto again = file_reader_->Read(f, 0, 1 << 20);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(FileReaderBytes(*again), Contents(FileReaderPath(4)));
  EXPECT_EQ(origin_->reads(), 1);
  EXPECT_EQ(tiers_->ram().Counters().hits, hits_before + 1);
  // A thread that must not wait is served the same from the tier.
  bool looked_up = false;
  std::optional<Result<ReadData>> tried = file_reader_->TryRead(f, 0, 1 << 20, &looked_up);
  ASSERT_TRUE(tried.has_value());
  ASSERT_TRUE(tried->ok()) << tried->status().ToString();
  EXPECT_EQ(FileReaderBytes(**tried), Contents(FileReaderPath(4)));
  EXPECT_TRUE(looked_up);
  EXPECT_EQ(origin_->reads(), 1);
}

TEST_F(FileReaderTest, TryReadOfAColdFileNeverReadsTheOriginAndLeavesItToRead) {
  Make();
  const TreeFile f = File(FileReaderPath(5));
  bool looked_up = false;
  EXPECT_FALSE(file_reader_->TryRead(f, 0, 4096, &looked_up).has_value());
  EXPECT_TRUE(looked_up);  // the tiers were asked: Read must not count their miss again
  EXPECT_EQ(origin_->reads(), 0);
  const uint64_t lookups = tiers_->ram().Counters().lookups;
  auto got = file_reader_->Read(f, 0, 4096, nullptr, /*tried=*/looked_up);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(FileReaderBytes(*got), Contents(FileReaderPath(5)));
  EXPECT_EQ(origin_->reads(), 1);
  EXPECT_EQ(tiers_->ram().Counters().lookups, lookups);  // one READ, one lookup
}

TEST_F(FileReaderTest, ReadsAreClippedToTheFileAndNothingPastItsEndIsRead) {
  Make();
  const TreeFile f = File(FileReaderPath(6));
  const std::string& want = Contents(FileReaderPath(6));
  // From the middle, asking for more than is left: the rest of the file.
  auto tail = file_reader_->Read(f, 1000, 1 << 20);
  ASSERT_TRUE(tail.ok()) << tail.status().ToString();
  EXPECT_EQ(FileReaderBytes(*tail), want.substr(1000));
  EXPECT_TRUE(tail->at_end);
  // A range inside the file, from the tier now.
  auto middle = file_reader_->Read(f, 100, 50);
  ASSERT_TRUE(middle.ok()) << middle.status().ToString();
  EXPECT_EQ(FileReaderBytes(*middle), want.substr(100, 50));
  EXPECT_FALSE(middle->at_end);
  EXPECT_EQ(origin_->reads(), 1);
  // At or past the end, or of no bytes: empty, without a load.
  const TreeFile cold = File(FileReaderPath(7));
  for (uint64_t offset : {cold.size(), cold.size() + 1, uint64_t{1} << 40}) {
    auto past = file_reader_->Read(cold, offset, 4096);
    ASSERT_TRUE(past.ok()) << past.status().ToString();
    EXPECT_EQ(past->size, 0u) << offset;
  }
  auto none = file_reader_->Read(cold, 0, 0);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->size, 0u);
  bool looked_up = true;
  auto tried = file_reader_->TryRead(cold, cold.size(), 4096, &looked_up);
  ASSERT_TRUE(tried.has_value());
  EXPECT_EQ((*tried)->size, 0u);
  EXPECT_FALSE(looked_up);
  EXPECT_EQ(origin_->reads(), 1);
  EXPECT_EQ(file_reader_->Residency(cold.key), "none");
}

TEST_F(FileReaderTest, AMissLeavesTheSamplesOtherMemberForItsOwnReadWithoutAnOriginRead) {
  Make();
  const TreeFile cls = File(FileReaderClassPath(1));
  const TreeFile caption = File(FileReaderCaptionPath(1));
  auto got = file_reader_->Read(cls, 0, 4096);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(FileReaderBytes(*got), Contents(FileReaderClassPath(1)));
  ASSERT_EQ(origin_->reads(), 1);
  EXPECT_EQ(origin_->read_log()[0].len, cls.size() + caption.size());  // both, in one read
  // The caption landed in the prefetch buffer: even a thread that must not wait gets it.
  bool looked_up = false;
  auto tried = file_reader_->TryRead(caption, 0, 4096, &looked_up);
  ASSERT_TRUE(tried.has_value());
  ASSERT_TRUE(tried->ok()) << tried->status().ToString();
  EXPECT_EQ(FileReaderBytes(**tried), FileReaderCaption(1));
  EXPECT_EQ(origin_->reads(), 1);
  ReadaheadStats stats;
  prefetcher_->Stats(false, &stats);
  ASSERT_FALSE(stats.patterns.empty());
  EXPECT_EQ(stats.patterns[static_cast<size_t>(cache::PrefetchPattern::kSampleMembers)].second.used,
            1u);
}

TEST_F(FileReaderTest, BytesAlreadyAtHandAreServedInsteadOfLoading) {
  Make();
  const TreeFile f = File(FileReaderPath(8));
  auto known = std::make_shared<const std::string>(Contents(FileReaderPath(8)));
  auto got = file_reader_->Read(f, 0, 1 << 20, known);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->owner.get(), known.get());  // that copy itself
  EXPECT_EQ(origin_->reads(), 0);
  EXPECT_EQ(file_reader_->Residency(f.key), "ram");  // filled into the tier as a load is
}

// Never served and never cached: the file is loaded afresh, and later reads find the right copy.
TEST_F(FileReaderTest, ACopyAtHandOfTheWrongSizeIsIgnoredAndTheFileLoaded) {
  Make();
  const TreeFile f = File(FileReaderPath(9));
  const std::string& want = Contents(FileReaderPath(9));
  auto known = std::make_shared<const std::string>(want.substr(0, 100));
  auto got = file_reader_->Read(f, 0, 1 << 20, known);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(FileReaderBytes(*got), want);
  EXPECT_EQ(origin_->reads(), 1);
  auto again = file_reader_->Read(f, 0, 1 << 20);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(FileReaderBytes(*again), want);
  EXPECT_EQ(origin_->reads(), 1);  // from the tier
}

TEST_F(FileReaderTest, AFileTheRamTierCannotKeepIsLoadedOnceForItsSeveralReads) {
  Make(/*ram_bytes=*/16 << 10);  // a shard's share is below one file
  const TreeFile f = File(FileReaderPath(10));
  ASSERT_GT(f.size(), tiers_->ram().MaxEntryBytes());
  const std::string& want = Contents(FileReaderPath(10));
  auto first = file_reader_->Read(f, 0, 1000);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(FileReaderBytes(*first), want.substr(0, 1000));
  EXPECT_FALSE(first->tier_holds);  // the page cache's copy is the only one: keep it
  for (uint64_t offset = 1000; offset < f.size(); offset += 1000) {
    auto next = file_reader_->Read(f, offset, 1000);
    ASSERT_TRUE(next.ok()) << next.status().ToString();
    EXPECT_EQ(FileReaderBytes(*next), want.substr(offset, 1000)) << offset;
  }
  EXPECT_EQ(origin_->reads(), 1);  // the read buffer held it between READs
  EXPECT_EQ(file_reader_->Residency(f.key), "none");
}

// --- Errors ---

TEST_F(FileReaderTest, AFailedOriginReadIsAnIoErrorNotCachedAndTheNextReadSucceeds) {
  Make();
  const TreeFile f = File(FileReaderPath(11));
  origin_->FailNextReads(1);
  auto got = file_reader_->Read(f, 0, 4096);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kIoError) << got.status().ToString();
  EXPECT_EQ(metrics_.io_errors.load(), 1u);
  EXPECT_EQ(LoadErrors(), 1u);
  EXPECT_EQ(file_reader_->Residency(f.key), "none");
  got = file_reader_->Read(f, 0, 4096);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(FileReaderBytes(*got), Contents(FileReaderPath(11)));
  EXPECT_EQ(origin_->reads(), 2);
  EXPECT_EQ(LoadErrors(), 1u);
}

TEST_F(FileReaderTest, AShortOriginReadIsAnIoErrorNeverShortBytes) {
  Make();
  const TreeFile f = File(FileReaderPath(12));
  origin_->ShortenNextReads(1);
  auto got = file_reader_->Read(f, 0, 4096);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kIoError) << got.status().ToString();
  EXPECT_EQ(file_reader_->Residency(f.key), "none");
  got = file_reader_->Read(f, 0, 4096);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(FileReaderBytes(*got), Contents(FileReaderPath(12)));
}

TEST_F(FileReaderTest, ADamagedByteFailsTheChecksumAndIsNeverServedOrCached) {
  Make();
  const TreeFile f = File(FileReaderPath(13));
  origin_->CorruptNextReads(1);
  auto got = file_reader_->Read(f, 0, 4096);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kCorruption) << got.status().ToString();
  EXPECT_EQ(origin_->pending_faults(), 0);
  EXPECT_EQ(metrics_.checksum_failures.load(), 1u);
  EXPECT_EQ(file_reader_->Residency(f.key), "none");
  // The damage was the read's: the next READ reads the file again, intact.
  got = file_reader_->Read(f, 0, 4096);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(FileReaderBytes(*got), Contents(FileReaderPath(13)));
  EXPECT_EQ(origin_->reads(), 2);
}

// --- Files too large to load whole ---

TEST_F(FileReaderTest, ALargeFileIsCheckedWholeOnceThenReadByRanges) {
  Make(64 << 20, /*read_buffer_bytes=*/32 << 10);  // keeps the file's head, not all of it
  const TreeFile f = File(kFileReaderBigPath);
  ASSERT_GT(f.size(), kFileReaderMaxWhole);
  const std::string& want = Contents(kFileReaderBigPath);
  auto got = file_reader_->Read(f, 100000, 4096);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(FileReaderBytes(*got), want.substr(100000, 4096));
  RangedCounters c = reader_->StreamedCounters();
  EXPECT_EQ(c.verified_files, 1u);
  EXPECT_EQ(c.verify_bytes, f.size());  // streamed whole through the hash first
  EXPECT_EQ(c.range_reads, 1u);         // then the range asked for, past the kept head
  const auto log = origin_->read_log();
  ASSERT_FALSE(log.empty());
  EXPECT_EQ(log.back().offset, f.entry.record.data_offset + 100000);
  EXPECT_EQ(log.back().len, 4096u);
  EXPECT_EQ(file_reader_->Residency(f.key), "none");  // never loaded whole
  // The head the check kept serves the start without the origin.
  const int reads = origin_->reads();
  auto head = file_reader_->Read(f, 0, 4096);
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  EXPECT_EQ(FileReaderBytes(*head), want.substr(0, 4096));
  EXPECT_EQ(origin_->reads(), reads);
  // The end: a range of its own, clipped, and the file is not checked again.
  auto end = file_reader_->Read(f, f.size() - 10, 4096);
  ASSERT_TRUE(end.ok()) << end.status().ToString();
  EXPECT_EQ(FileReaderBytes(*end), want.substr(want.size() - 10));
  EXPECT_EQ(origin_->reads(), reads + 1);
  EXPECT_EQ(reader_->StreamedCounters().verified_files, 1u);
}

TEST_F(FileReaderTest, ADamagedLargeFileServesNoByteOfIt) {
  Make();
  const TreeFile f = File(kFileReaderBigPath);
  origin_->CorruptNextReadsAt(1, {origin::kDatasetTree, f.entry.record.shard},
                              f.entry.record.data_offset + f.size() - 1);
  auto got = file_reader_->Read(f, 0, 4096);  // its first bytes are intact; the last is not
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kCorruption) << got.status().ToString();
  EXPECT_EQ(origin_->pending_faults(), 0);
  EXPECT_EQ(metrics_.checksum_failures.load(), 1u);
  EXPECT_EQ(reader_->StreamedCounters().verified_files, 0u);
}

}  // namespace
}  // namespace mmfs::fs
