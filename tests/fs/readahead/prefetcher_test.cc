// The Prefetcher (fs/readahead/prefetcher.h) alone, over the real miss loader and an origin in
// memory that fails or slows reads on request (tests/fakes/memory_origin.h): what in-order and
// strided readers and the hint have loaded ahead (and in how many origin reads), what they leave
// alone (no stream, shuffled reads, files the RAM tier or the buffer hold already, files over
// the buffer's limit), that a failed read costs only its own files, the members a demand load
// leaves there, the push's claim and its outcomes, and that destroying it waits for the job that
// runs and drops the queued ones. Waits on the workers with Drain or a polled deadline.
#include "fs/readahead/prefetcher.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cache/tier_stack.h"
#include "fs/format/dataset.h"
#include "fs/format/view_set.h"
#include "fs/metrics/metrics.h"
#include "fs/read/extent_reader.h"
#include "fs/read/miss_loader.h"
#include "fs/read/origin_reader.h"
#include "fs/read/view_files.h"
#include "tests/fakes/memory_origin.h"
#include "tests/origin_helper.h"
#include "tests/pack_helper.h"
#include "tests/test_util.h"

namespace mmfs::fs {
namespace {

using testing::MemoryOrigin;

// d/: files of their own sample each, in sample order. s/: samples of two members.
constexpr int kPrefetcherFiles = 160;
constexpr size_t kPrefetcherFileBytes = 3000;
constexpr int kPrefetcherSamples = 4;

std::string PrefetcherPath(int i) { return "d/" + std::to_string(2000 + i) + ".txt"; }
std::string PrefetcherContents(int i) {
  std::string s = "prefetched " + std::to_string(i) + " ";
  for (size_t k = s.size(); k < kPrefetcherFileBytes; ++k) {
    s.push_back(static_cast<char>('A' + (static_cast<size_t>(i) * 5 + k) % 26));
  }
  return s;
}
std::string PrefetcherClassPath(int i) { return "s/" + std::to_string(700 + i) + ".cls"; }
std::string PrefetcherCaptionPath(int i) { return "s/" + std::to_string(700 + i) + ".txt"; }

PrefetcherOptions PrefetcherDefaults() {
  PrefetcherOptions p;
  p.threads = 1;
  p.buffer_bytes = 8 << 20;
  return p;
}

class PrefetcherTest : public ::testing::Test {
 protected:
  struct Suite {
    testing::TempDir tmp;
    std::string error;
  };
  static void SetUpTestSuite() {
    suite_ = new Suite;
    Suite& s = *suite_;
    for (int i = 0; i < kPrefetcherFiles; ++i) {
      testing::WriteFile(s.tmp / ("src/" + PrefetcherPath(i)), PrefetcherContents(i));
    }
    for (int i = 0; i < kPrefetcherSamples; ++i) {
      testing::WriteFile(s.tmp / ("src/" + PrefetcherClassPath(i)), "class " + std::to_string(i));
      testing::WriteFile(s.tmp / ("src/" + PrefetcherCaptionPath(i)),
                         "caption " + std::to_string(i));
    }
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
  // The prefetcher over the suite's dataset, read through a fresh MemoryOrigin: a RAM tier of
  // 64 MiB and no other tier, no extents.
  void Make(PrefetcherOptions options = PrefetcherDefaults()) {
    auto ds = format::Dataset::Open(suite_->tmp / "ds");
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    dataset_ = std::move(ds).value();
    origin_ = MemoryOrigin::FromDataset(*dataset_);
    reader_ = std::make_unique<OriginReader>(*dataset_, *origin_, metrics_, OriginReaderOptions{});
    tiers_ =
        std::make_unique<cache::TierStack>(64 << 20, dataset_->manifest().files, nullptr, nullptr);
    views_ = std::make_unique<ViewFiles>(*dataset_, format::ViewSet::Open(*dataset_, *origin_), 0,
                                         *reader_);
    ExtentOptions extents;
    extents.mode = ExtentMode::kOff;
    extents_ = std::make_unique<ExtentReader>(*dataset_, *tiers_, std::move(extents));
    loader_ = std::make_unique<MissLoader>(*dataset_, *reader_, *views_, *tiers_, *extents_,
                                           MissLoaderOptions{});
    prefetcher_ =
        std::make_unique<Prefetcher>(*dataset_, *views_, *tiers_, *loader_, std::move(options));
    origin_->ResetCounters();
  }

  TreeFile File(const std::string& path) {
    auto e = testing::EntryAtPath(*dataset_, path);
    EXPECT_TRUE(e.ok()) << path;
    if (!e.ok()) return TreeFile{};
    auto f = views_->Resolve(0, *e);
    EXPECT_TRUE(f.ok()) << path;
    return f.ok() ? *f : TreeFile{};
  }
  TreeFile Nth(int i) { return File(PrefetcherPath(i)); }
  // Reads of files `first`, `first + step`, ... (`count` of them) by `stream`, as READs at 0.
  void ReadRun(int first, int step, int count, uint64_t stream) {
    for (int k = 0; k < count; ++k) prefetcher_->OnRead(Nth(first + k * step), 0, stream);
  }
  // Which of d/'s files the buffer holds (or loads), by number.
  std::vector<int> Held() {
    std::vector<int> out;
    for (int i = 0; i < kPrefetcherFiles; ++i) {
      if (prefetcher_->MayPush(Nth(i))) out.push_back(i);
    }
    return out;
  }
  cache::PrefetchCounters Counted(cache::PrefetchPattern pattern) {
    ReadaheadStats s;
    prefetcher_->Stats(true, &s);
    return s.patterns.at(static_cast<size_t>(pattern)).second;
  }
  ReadaheadStats Stats() {
    ReadaheadStats s;
    prefetcher_->Stats(true, &s);
    return s;
  }
  uint64_t PrefetchReads() const { return reader_->Counters(ReadCause::kPrefetch).reads; }
  void Hint(const std::vector<std::string>& lines) {
    prefetcher_->BeginHint();
    prefetcher_->AddHintLines(lines);
    prefetcher_->EndHint();
  }
  static std::vector<int> Range(int first, int last) {
    std::vector<int> out;
    for (int i = first; i <= last; ++i) out.push_back(i);
    return out;
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
};

PrefetcherTest::Suite* PrefetcherTest::suite_ = nullptr;

// --- Patterns ---

TEST_F(PrefetcherTest, InOrderReadsLoadTheNextSamplesAheadInOneRead) {
  Make();
  ReadRun(10, 1, 3, /*stream=*/7);
  prefetcher_->Drain();
  // Two steps of one make a run: the next four samples (the detector's first window).
  EXPECT_EQ(Held(), Range(13, 16));
  EXPECT_EQ(PrefetchReads(), 1u);  // neighbours in the shard: one coalesced read
  EXPECT_EQ(origin_->reads(), 1);
  EXPECT_EQ(Stats().runs_detected, 1u);
  EXPECT_EQ(Counted(cache::PrefetchPattern::kSequential).issued, 4u);
  // What is held is the file's bytes, taken once and counted used.
  cache::Blob b = prefetcher_->Take(Nth(13).key);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(*b, PrefetcherContents(13));
  EXPECT_EQ(prefetcher_->Take(Nth(13).key), nullptr);
  EXPECT_EQ(Counted(cache::PrefetchPattern::kSequential).used, 1u);
}

TEST_F(PrefetcherTest, StridedReadsLoadAlongTheStride) {
  Make();
  ReadRun(20, 3, 3, /*stream=*/9);  // 20, 23, 26
  prefetcher_->Drain();
  EXPECT_EQ(Held(), (std::vector<int>{29, 32, 35, 38}));
  EXPECT_EQ(Counted(cache::PrefetchPattern::kStrided).issued, 4u);
  EXPECT_EQ(Counted(cache::PrefetchPattern::kSequential).issued, 0u);
}

TEST_F(PrefetcherTest, ReadsOfNoStreamOrInNoOrderLoadNothing) {
  Make();
  ReadRun(10, 1, 6, /*stream=*/0);  // in order, but nobody's
  for (int i : {40, 3, 27, 11, 90, 55}) prefetcher_->OnRead(Nth(i), 0, /*stream=*/5);
  prefetcher_->Drain();
  EXPECT_TRUE(Held().empty());
  EXPECT_EQ(origin_->reads(), 0);
  EXPECT_EQ(Stats().runs_detected, 0u);
}

TEST_F(PrefetcherTest, WithReadaheadOffNeitherRunsNorTheHintLoadAnything) {
  PrefetcherOptions off = PrefetcherDefaults();
  off.enabled = false;
  Make(off);
  ReadRun(10, 1, 6, /*stream=*/7);
  Hint({PrefetcherPath(50), PrefetcherPath(51)});
  prefetcher_->Drain();
  EXPECT_TRUE(Held().empty());
  EXPECT_EQ(origin_->reads(), 0);
  EXPECT_FALSE(Stats().enabled);
  // A demand load's members are still held for their readers.
  prefetcher_->PutMember(Nth(60).key, std::make_shared<const std::string>(PrefetcherContents(60)));
  EXPECT_EQ(Held(), std::vector<int>{60});
}

// --- The hint ---

TEST_F(PrefetcherTest, AHintLoadsTheFilesItNamesAndCountsLinesThatNameNone) {
  Make();
  Hint({PrefetcherPath(50), "d/no-such-file.txt", PrefetcherPath(41), "", "d",
        "/" + PrefetcherPath(33) + "\r"});
  prefetcher_->Drain();
  EXPECT_EQ(Held(), (std::vector<int>{33, 41, 50}));
  ReadaheadStats s = Stats();
  EXPECT_EQ(s.hint.positions, 3u);
  EXPECT_EQ(s.hint.unknown, 2u);  // the missing file and the directory; the empty line is none
  EXPECT_EQ(s.patterns.at(static_cast<size_t>(cache::PrefetchPattern::kHint)).second.issued, 3u);
  EXPECT_EQ(PrefetchReads(), static_cast<uint64_t>(origin_->reads()));
  EXPECT_EQ(reader_->Counters(ReadCause::kDemand).reads, 0u);
}

TEST_F(PrefetcherTest, AHintedSampleBringsItsOtherMembers) {
  Make();
  Hint({PrefetcherCaptionPath(2)});
  prefetcher_->Drain();
  EXPECT_TRUE(prefetcher_->MayPush(File(PrefetcherCaptionPath(2))));
  EXPECT_TRUE(prefetcher_->MayPush(File(PrefetcherClassPath(2))));
  EXPECT_FALSE(prefetcher_->MayPush(File(PrefetcherClassPath(1))));
  EXPECT_EQ(origin_->reads(), 1);
}

// --- Never twice ---

TEST_F(PrefetcherTest, AFileHeldAlreadyIsNotReadAgainByAnotherPrediction) {
  Make();
  Hint({PrefetcherPath(13), PrefetcherPath(14), PrefetcherPath(15), PrefetcherPath(16)});
  prefetcher_->Drain();
  ASSERT_EQ(Held(), Range(13, 16));
  const int reads = origin_->reads();
  // A run predicts the same four, and the same order comes again.
  ReadRun(10, 1, 3, /*stream=*/7);
  Hint({PrefetcherPath(16), PrefetcherPath(15), PrefetcherPath(13), PrefetcherPath(14),
        PrefetcherPath(13)});
  prefetcher_->Drain();
  EXPECT_EQ(origin_->reads(), reads);
  EXPECT_EQ(Held(), Range(13, 16));
  EXPECT_EQ(Counted(cache::PrefetchPattern::kSequential).issued, 0u);
  EXPECT_EQ(Counted(cache::PrefetchPattern::kHint).issued, 4u);
}

TEST_F(PrefetcherTest, FilesTheRamTierHoldsAreNotLoadedAhead) {
  Make();
  for (int i : {70, 72}) {
    tiers_->ram().Insert(Nth(i).key, std::make_shared<const std::string>(PrefetcherContents(i)));
    ASSERT_TRUE(tiers_->ram().Contains(Nth(i).key));
  }
  Hint({PrefetcherPath(70), PrefetcherPath(71), PrefetcherPath(72)});
  prefetcher_->Drain();
  EXPECT_EQ(Held(), std::vector<int>{71});
  const auto log = origin_->read_log();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].len, Nth(71).size());  // file 71 alone
  // A member the RAM tier holds is not held twice either.
  prefetcher_->PutMember(Nth(70).key, std::make_shared<const std::string>(PrefetcherContents(70)));
  EXPECT_FALSE(prefetcher_->MayPush(Nth(70)));
}

TEST_F(PrefetcherTest, FilesOverTheBuffersLimitAreLeftToTheirReaders) {
  PrefetcherOptions small = PrefetcherDefaults();
  small.buffer_bytes = 4000;  // holds one file, so none is worth loading ahead
  Make(small);
  EXPECT_EQ(prefetcher_->FileLimit(), 2000u);
  ASSERT_GT(Nth(80).size(), prefetcher_->FileLimit());
  Hint({PrefetcherPath(80), PrefetcherPath(81)});
  ReadRun(90, 1, 3, /*stream=*/3);
  prefetcher_->Drain();
  EXPECT_EQ(origin_->reads(), 0);
  EXPECT_TRUE(Held().empty());
}

// --- A failing origin ---

TEST_F(PrefetcherTest, AFailedReadLosesOnlyItsFilesAndLaterPredictionsLoad) {
  Make();
  origin_->FailNextReads(1);
  Hint({PrefetcherPath(100), PrefetcherPath(101), PrefetcherPath(102)});
  prefetcher_->Drain();
  EXPECT_EQ(origin_->pending_faults(), 0);
  EXPECT_TRUE(Held().empty());
  // Nobody asked for them: not a reader's error.
  EXPECT_EQ(metrics_.io_errors.load(), 0u);
  // The prefetcher goes on: the next order and a run load.
  Hint({PrefetcherPath(110), PrefetcherPath(111)});
  ReadRun(120, 1, 3, /*stream=*/4);
  prefetcher_->Drain();
  std::vector<int> want = {110, 111};
  for (int i : Range(123, 126)) want.push_back(i);
  EXPECT_EQ(Held(), want);
  // The failed files were given up, not left loading: a reader's take does not wait for them.
  bool loading = true;
  EXPECT_EQ(prefetcher_->TakeHeld(Nth(100).key, &loading), nullptr);
  EXPECT_FALSE(loading);
}

TEST_F(PrefetcherTest, ADamagedFileIsNotHeldAndItsNeighboursAre) {
  Make();
  const TreeFile bad = Nth(131);
  origin_->CorruptNextReadsAt(1, {origin::kDatasetTree, bad.entry.record.shard},
                              bad.entry.record.data_offset + 10);
  Hint({PrefetcherPath(130), PrefetcherPath(131), PrefetcherPath(132)});
  prefetcher_->Drain();
  EXPECT_EQ(origin_->pending_faults(), 0);
  EXPECT_EQ(Held(), (std::vector<int>{130, 132}));
  EXPECT_EQ(metrics_.checksum_failures.load(), 0u);  // its own read reports it
}

// --- Members and the push ---

TEST_F(PrefetcherTest, AMemberIsHeldForItsReaderAndTakenOnce) {
  Make();
  const TreeFile f = Nth(140);
  prefetcher_->PutMember(f.key, std::make_shared<const std::string>(PrefetcherContents(140)));
  EXPECT_EQ(Counted(cache::PrefetchPattern::kSampleMembers).issued, 1u);
  bool loading = true;
  cache::Blob b = prefetcher_->TakeHeld(f.key, &loading);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(*b, PrefetcherContents(140));
  EXPECT_EQ(prefetcher_->Take(f.key), nullptr);
  EXPECT_EQ(Counted(cache::PrefetchPattern::kSampleMembers).used, 1u);
}

TEST_F(PrefetcherTest, APushStoresTheHeldFileOnceAndAFailedStoreKeepsItForItsReader) {
  Make();
  const TreeFile f = Nth(150);
  prefetcher_->PutMember(f.key, std::make_shared<const std::string>(PrefetcherContents(150)));
  std::string stored;
  auto store_ok = [&](const char* data, size_t size) {
    stored.assign(data, size);
    return 0;
  };
  auto store_eio = [](const char*, size_t) { return -EIO; };
  auto store_no_inode = [](const char*, size_t) { return -ENOENT; };
  // Too large for the caller: nothing claimed, nothing stored.
  EXPECT_EQ(prefetcher_->Push(f, 100, false, store_ok), nullptr);
  EXPECT_TRUE(stored.empty());
  // The kernel has no inode yet: not a failure, the file stays.
  EXPECT_EQ(prefetcher_->Push(f, 1 << 20, false, store_no_inode), nullptr);
  EXPECT_EQ(Stats().pushed.failed, 0u);
  // The store fails: counted, the file stays for its reader.
  EXPECT_EQ(prefetcher_->Push(f, 1 << 20, false, store_eio), nullptr);
  EXPECT_EQ(Stats().pushed.failed, 1u);
  EXPECT_TRUE(prefetcher_->MayPush(f));
  // Stored: the blob to count as read, out of the buffer.
  cache::Blob pushed = prefetcher_->Push(f, 1 << 20, false, store_ok);
  ASSERT_NE(pushed, nullptr);
  EXPECT_EQ(stored, PrefetcherContents(150));
  EXPECT_FALSE(prefetcher_->MayPush(f));
  EXPECT_EQ(prefetcher_->Push(f, 1 << 20, false, store_ok), nullptr);  // not twice
  ReadaheadStats s = Stats();
  EXPECT_EQ(s.pushed.files, 1u);
  EXPECT_EQ(s.pushed.bytes, f.size());
}

TEST_F(PrefetcherTest, WhilePushIsOffHeldFilesAreSkippedAndCounted) {
  Make();
  const TreeFile f = Nth(151);
  prefetcher_->PutMember(f.key, std::make_shared<const std::string>(PrefetcherContents(151)));
  prefetcher_->SetBudget(8 << 20, /*push=*/false);
  EXPECT_FALSE(prefetcher_->MayPush(f));
  EXPECT_EQ(prefetcher_->Push(f, 1 << 20, false, [](const char*, size_t) { return 0; }), nullptr);
  EXPECT_EQ(Stats().pushed.skipped, 2u);
  EXPECT_EQ(Stats().pushed.files, 0u);
  // Still there for its reader.
  EXPECT_NE(prefetcher_->Take(f.key), nullptr);
}

// --- Shutting down ---

TEST_F(PrefetcherTest, DestroyingWaitsForTheRunningJobAndDropsTheQueuedOnes) {
  Make();
  // A slow store (slow enough that the test reaches the destructor while the first read waits,
  // even on a loaded machine under a sanitizer), and two jobs: the hint's files go in jobs of 64.
  origin_->SetReadDelay(std::chrono::milliseconds(3000));
  std::vector<std::string> lines;
  for (int i = 0; i < 100; ++i) lines.push_back(PrefetcherPath(i));
  Hint(lines);
  // The one worker is in the first job's read.
  ASSERT_TRUE(testing::WaitFor([&] { return origin_->reads() >= 1; }, 30));
  prefetcher_.reset();
  // The running read finished before the destructor returned (its bytes were handed back), and
  // the queued job never started.
  EXPECT_GT(origin_->bytes(), 0u);
  EXPECT_EQ(origin_->reads(), 1);
}

}  // namespace
}  // namespace mmfs::fs
