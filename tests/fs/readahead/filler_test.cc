// The fill (fs/readahead/filler.h) without a mount: a dataset fetched whole into a tier in a few
// large reads, once; nothing fetched for a look, everything once a training job is seen; what
// is held already skipped; a share kept when the dataset does not fit; a failing origin's files
// left to their readers and fetched on the next pass.
#include "fs/readahead/filler.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "cache/ram_tier.h"
#include "cache/tier_stack.h"
#include "fs/format/dataset.h"
#include "fs/metrics/metrics.h"
#include "fs/read/origin_reader.h"
#include "tests/origin_helper.h"
#include "tests/pack_helper.h"
#include "tests/test_util.h"

namespace mmfs::fs {
namespace {

using namespace std::chrono_literals;
using testing::TempDir;

constexpr int kFillerFiles = 400;
constexpr size_t kFillerFileBytes = 5000;

std::string FillerContents(int i) {
  std::string s(kFillerFileBytes, '\0');
  for (size_t k = 0; k < s.size(); ++k) s[k] = static_cast<char>('a' + (i * 11 + k) % 26);
  return s;
}

using testing::CountingOrigin;

class FillerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    for (int i = 0; i < kFillerFiles; ++i) {
      testing::WriteFile(*dir_ / ("src/d/" + std::to_string(10000 + i) + ".txt"), FillerContents(i));
    }
    ASSERT_TRUE(testing::PackFolder(*dir_ / "src", *dir_ / "ds").ok());
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  // The dataset, its origin and a RAM tier of `ram` bytes (no SSD tier: the fill's target).
  void Make(uint64_t ram) {
    auto ds = format::Dataset::Open(*dir_ / "ds");
    ASSERT_TRUE(ds.ok());
    dataset_ = std::move(ds).value();
    auto counting = std::make_unique<CountingOrigin>(*dataset_);
    io_ = counting.get();
    origin_ = std::move(counting);
    reader_ = std::make_unique<OriginReader>(*dataset_, *origin_, metrics_, OriginReaderOptions{});
    tiers_ = std::make_unique<cache::TierStack>(ram, dataset_->manifest().files, nullptr, nullptr);
  }
  std::unique_ptr<Filler> Start(FillOptions o) {
    o.window = 50ms;
    return std::make_unique<Filler>(*dataset_, *reader_, *tiers_, o, [] { return uint64_t{0}; });
  }
  // Regular files the RAM tier holds.
  int Held() const {
    int n = 0;
    for (uint64_t i = 0; i < dataset_->entry_count(); ++i) {
      auto e = dataset_->GetEntry(i);
      if (e.ok() && e->is_regular() && tiers_->ram().Contains(i)) ++n;
    }
    return n;
  }
  uint64_t DatasetBytes() const { return dataset_->manifest().total_bytes; }
  // The packed dataset's shards: what a fill reads at best (LMDB pads values to pages).
  uint64_t ShardBytes() const {
    uint64_t n = 0;
    for (const auto& shard : dataset_->manifest().shards) n += shard.size;
    return n;
  }

  static TempDir* dir_;
  Metrics metrics_;
  std::unique_ptr<format::Dataset> dataset_;
  std::unique_ptr<origin::Origin> origin_;
  CountingOrigin* io_ = nullptr;
  std::unique_ptr<OriginReader> reader_;
  std::unique_ptr<cache::TierStack> tiers_;
};

TempDir* FillerTest::dir_ = nullptr;

TEST_F(FillerTest, OnFetchesTheWholeDatasetOnceInLargeReads) {
  Make(64 << 20);
  FillOptions o;
  o.mode = FillMode::kOn;
  o.chunk_bytes = 256 << 10;
  auto filler = Start(o);
  ASSERT_TRUE(filler->WaitDone(30s));
  EXPECT_EQ(Held(), kFillerFiles);
  const FillStats s = filler->Stats();
  EXPECT_EQ(s.state, "done");
  EXPECT_EQ(s.trigger, "-o fill=on");
  EXPECT_FALSE(s.share);
  EXPECT_EQ(s.target_files, static_cast<uint64_t>(kFillerFiles));
  EXPECT_EQ(s.fetched_files, static_cast<uint64_t>(kFillerFiles));
  EXPECT_EQ(s.fetched_bytes, DatasetBytes());
  EXPECT_EQ(s.failed_files, 0u);
  // About one read per 256 KiB, each byte once: no more than the shards hold (the reads span
  // the pages LMDB pads values to).
  EXPECT_LE(io_->reads.load(), static_cast<int>(ShardBytes() / (200 << 10)) + 2);
  EXPECT_LE(io_->bytes.load(), ShardBytes());
  EXPECT_EQ(s.requests, static_cast<uint64_t>(io_->reads.load()));
  EXPECT_EQ(reader_->Counters(ReadCause::kFill).bytes, io_->bytes.load());
  for (int i : {0, 199, 399}) {  // the bytes stored are the files'
    auto e = dataset_->GetEntry(static_cast<uint64_t>(i) + 2);  // the root and d/ come first
    ASSERT_TRUE(e.ok());
    auto blob = tiers_->ram().Lookup(e->index);
    ASSERT_NE(blob, nullptr);
    EXPECT_EQ(*blob, FillerContents(i));
  }
}

// A look into the mount (a handful of files read, some twice) fetches nothing; a training job
// (as many distinct files as the trigger asks) starts the fill.
TEST_F(FillerTest, AutoWaitsForATrainingJobNotALook) {
  Make(64 << 20);
  FillOptions o;
  o.mode = FillMode::kAuto;
  o.trigger_files = 20;
  auto filler = Start(o);
  for (int round = 0; round < 5; ++round) {
    for (uint64_t i = 2; i < 12; ++i) filler->NoteRead(i);
  }
  EXPECT_FALSE(filler->WaitDone(200ms));
  EXPECT_EQ(filler->Stats().state, "waiting");
  EXPECT_EQ(io_->reads.load(), 0);
  for (uint64_t i = 12; i < 22; ++i) filler->NoteRead(i);
  ASSERT_TRUE(filler->WaitDone(30s));
  EXPECT_EQ(filler->Stats().trigger, "20 files read");
  EXPECT_EQ(Held(), kFillerFiles);
}

TEST_F(FillerTest, WhatTheTierHoldsIsNotFetchedAgain) {
  Make(64 << 20);
  // Every other file is held already (a remount, the readers' own misses).
  uint64_t held_bytes = 0;
  for (int i = 0; i < kFillerFiles; i += 2) {
    auto e = dataset_->GetEntry(static_cast<uint64_t>(i) + 2);
    ASSERT_TRUE(e.ok() && e->is_regular());
    tiers_->ram().Insert(e->index, std::make_shared<const std::string>(FillerContents(i)));
    held_bytes += kFillerFileBytes;
  }
  FillOptions o;
  o.mode = FillMode::kOn;
  auto filler = Start(o);
  ASSERT_TRUE(filler->WaitDone(30s));
  const FillStats s = filler->Stats();
  EXPECT_EQ(s.present_files, static_cast<uint64_t>(kFillerFiles / 2));
  EXPECT_EQ(s.present_bytes, held_bytes);
  EXPECT_EQ(s.fetched_files, static_cast<uint64_t>(kFillerFiles / 2));
  EXPECT_EQ(Held(), kFillerFiles);
  EXPECT_LE(static_cast<double>(io_->bytes.load()), 0.55 * static_cast<double>(ShardBytes()));
}

// The dataset is twice the tier: the fill fetches a share of it, and from then on the tier
// admits only that share, so that the files read each epoch do not push it out.
TEST_F(FillerTest, ADatasetLargerThanTheTierKeepsAShare) {
  Make(64 << 20);
  const uint64_t whole = DatasetBytes();
  Make(whole / 2 + 64 * cache::RamTier::kEntryOverhead);
  // A file past the share, held from before (an earlier epoch): it makes room for the share.
  auto last = dataset_->GetEntry(dataset_->entry_count() - 1);
  ASSERT_TRUE(last.ok());
  tiers_->ram().Insert(last->index, std::make_shared<const std::string>(FillerContents(kFillerFiles - 1)));
  ASSERT_TRUE(tiers_->ram().Contains(last->index));
  FillOptions o;
  o.mode = FillMode::kOn;
  auto filler = Start(o);
  ASSERT_TRUE(filler->WaitDone(30s));
  const FillStats s = filler->Stats();
  EXPECT_TRUE(s.share);
  EXPECT_GT(s.target_files, static_cast<uint64_t>(kFillerFiles / 4));
  EXPECT_LT(s.target_files, static_cast<uint64_t>(kFillerFiles / 2));
  EXPECT_EQ(s.fetched_files, s.target_files);
  EXPECT_EQ(static_cast<uint64_t>(Held()), s.target_files);
  EXPECT_LE(static_cast<double>(io_->bytes.load()), 0.55 * static_cast<double>(ShardBytes()));
  // A file past the share is gone and not admitted again, whoever reads it.
  EXPECT_FALSE(tiers_->ram().Contains(last->index));
  tiers_->ram().Insert(last->index, std::make_shared<const std::string>("x"));
  EXPECT_FALSE(tiers_->ram().Contains(last->index));
}

// Reads that fail leave their files to their readers; the next pass fetches them.
TEST_F(FillerTest, FilesOfAFailedReadAreFetchedOnTheNextPass) {
  Make(64 << 20);
  io_->fail_next = 2;
  FillOptions o;
  o.mode = FillMode::kOn;
  o.first_in_flight = 1;
  o.max_in_flight = 1;
  o.chunk_bytes = 64 << 10;
  auto filler = Start(o);
  ASSERT_TRUE(filler->WaitDone(60s));
  const FillStats s = filler->Stats();
  EXPECT_GT(s.failed_files, 0u);
  EXPECT_EQ(Held(), kFillerFiles) << "the second pass fetched what the first could not";
}

TEST_F(FillerTest, OffStartsNothingAndAStopMidFillEndsIt) {
  Make(64 << 20);
  FillOptions off;
  auto idle = Start(off);
  for (uint64_t i = 0; i < dataset_->entry_count(); ++i) idle->NoteRead(i);
  EXPECT_EQ(idle->Stats().state, "off");
  EXPECT_EQ(io_->reads.load(), 0);
  idle.reset();

  FillOptions on;
  on.mode = FillMode::kOn;
  on.chunk_bytes = 16 << 10;  // about 200 reads for the dataset, 5 ms each
  on.max_in_flight = 1;
  io_->delay_ms = 5;
  auto filler = Start(on);
  ASSERT_TRUE(testing::WaitFor([&] { return io_->reads.load() > 0; }, 10));
  const auto start = std::chrono::steady_clock::now();
  filler.reset();  // stops and joins its threads
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
  const int reads = io_->reads.load();
  EXPECT_LT(reads, 100) << "stopped mid-fill";
  EXPECT_LT(Held(), kFillerFiles);
}

TEST(FillModeTest, ParsesTheThreeModes) {
  EXPECT_EQ(*ParseFillMode("auto"), FillMode::kAuto);
  EXPECT_EQ(*ParseFillMode("on"), FillMode::kOn);
  EXPECT_EQ(*ParseFillMode("off"), FillMode::kOff);
  EXPECT_EQ(ParseFillMode("yes").status().code(), StatusCode::kInvalidArgument);
  EXPECT_STREQ(FillModeName(FillMode::kAuto), "auto");
}

}  // namespace
}  // namespace mmfs::fs
