// The origin's error path, through a fake origin (fs/origin/origin.h) around the real one: a
// shard read that fails or comes back short is an error for the reader that asked (EIO at the
// FUSE layer), counted in errors.io, never served, never cached; readahead's failed reads are
// nobody's error.
#include "fs/read/origin_reader.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <nlohmann/json.hpp>

#include "cache/tier_stack.h"
#include "fs/core/filesystem.h"
#include "fs/fuse/errno_map.h"
#include "tests/origin_helper.h"
#include "tests/pack_helper.h"
#include "tests/test_util.h"

namespace mmfs::fs {
namespace {

using testing::TempDir;
using testing::WriteFile;

// Passes reads through to the dataset's shards until told to fail them or cut them short.
class FaultyOrigin final : public origin::OriginWrapper {
 public:
  enum class Mode { kPass, kEio, kShort };
  explicit FaultyOrigin(const format::Dataset& dataset)
      : OriginWrapper(testing::LocalOrigin(dataset)) {}
  Result<OriginBytes> ReadSpan(ShardRef ref, uint64_t offset, size_t len) override {
    ++calls;
    switch (mode.load()) {
      case Mode::kPass: return OriginWrapper::ReadSpan(ref, offset, len);
      case Mode::kEio: return Status::FromErrno(EIO, "pread shard-00000.mdb");
      case Mode::kShort: {
        MMFS_ASSIGN_OR_RETURN(OriginBytes all, OriginWrapper::ReadSpan(ref, offset, len));
        return OriginBytes(std::string(all.data(), all.size() / 2));
      }
    }
    return Status::IoError("unreachable");
  }
  std::atomic<Mode> mode{Mode::kPass};
  std::atomic<int> calls{0};
};

class OriginReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 8; ++i) {
      WriteFile(tmp_ / ("src/d/" + std::to_string(100 + i) + ".txt"), std::string(100 + i, 'a' + i));
    }
    ASSERT_TRUE(testing::PackFolder(tmp_ / "src", tmp_ / "ds").ok());
    auto ds = format::Dataset::Open(tmp_ / "ds");
    ASSERT_TRUE(ds.ok());
    dataset_ = std::move(ds).value();
    faults_ = std::make_unique<FaultyOrigin>(*dataset_);
  }
  format::Entry File(int i) {
    auto d = dataset_->LookupChild(*dataset_->GetEntry(0), "d");
    return *dataset_->LookupChild(*d, std::to_string(100 + i) + ".txt");
  }
  TempDir tmp_;
  std::unique_ptr<format::Dataset> dataset_;
  std::unique_ptr<FaultyOrigin> faults_;  // the shards, as the tests' OriginReaders read them
  Metrics metrics_;
};

TEST_F(OriginReaderTest, FailedAndShortReadsAreIoErrorsCountedAndNeverServed) {
  FaultyOrigin* faults = faults_.get();
  OriginReader origin(*dataset_, *faults_, metrics_, OriginReaderOptions{});
  auto noop = [](const format::Entry&, cache::Blob) {};
  const format::Entry e = File(0);

  faults->mode = FaultyOrigin::Mode::kEio;
  auto r = origin.LoadSample(e, {e}, noop);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kIoError);
  EXPECT_EQ(ToErrno(r.status()), EIO);
  EXPECT_EQ(metrics_.io_errors.load(), 1u);

  faults->mode = FaultyOrigin::Mode::kShort;
  r = origin.LoadSample(e, {e}, noop);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kIoError);
  EXPECT_NE(r.status().message().find("short read"), std::string::npos) << r.status().message();
  EXPECT_EQ(metrics_.io_errors.load(), 2u);
  EXPECT_EQ(metrics_.checksum_failures.load(), 0u);
  EXPECT_EQ(origin.Counters(ReadCause::kDemand).reads, 0u) << "failed reads are not counted as reads";

  // Readahead's failures are not a reader's: no file found, nothing counted.
  int found = 0;
  origin.ReadCoalesced({File(1), File(2)}, ReadCause::kPrefetch,
                       [&](const format::Entry&, cache::Blob) { ++found; });
  EXPECT_EQ(found, 0);
  EXPECT_EQ(metrics_.io_errors.load(), 2u);

  faults->mode = FaultyOrigin::Mode::kPass;
  r = origin.LoadSample(e, {e}, noop);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(**r, std::string(100, 'a'));
  EXPECT_EQ(origin.Counters(ReadCause::kDemand).reads, 1u);
  EXPECT_EQ(origin.Counters(ReadCause::kDemand).bytes, 100u);
}

TEST_F(OriginReaderTest, CoalescedReadsCountByCauseAndCheckEveryFile) {
  OriginReader origin(*dataset_, *faults_, metrics_, OriginReaderOptions{});
  std::vector<format::Entry> all;
  for (int i = 0; i < 8; ++i) all.push_back(File(i));
  int found = 0;
  origin.ReadCoalesced(all, ReadCause::kWarmup, [&](const format::Entry& e, cache::Blob b) {
    EXPECT_EQ(b->size(), e.size());
    ++found;
  });
  EXPECT_EQ(found, 8);
  EXPECT_EQ(origin.Counters(ReadCause::kWarmup).reads, 1u) << "neighbours in one read";
  EXPECT_EQ(origin.Counters(ReadCause::kPrefetch).reads, 0u);
  EXPECT_EQ(origin.Counters(ReadCause::kDemand).reads, 0u);
}

// A demand read's bytes are split by what they are: the file asked for, its sample's other
// members, and the rest (an extent's neighbours and the padding between files).
TEST_F(OriginReaderTest, DemandBytesAreSplitIntoAskedMembersAndNeighbours) {
  OriginReader origin(*dataset_, *faults_, metrics_, OriginReaderOptions{});
  const std::vector<format::Entry> extent = {File(0), File(1), File(2), File(3)};
  const format::Entry asked = File(1);
  int others = 0;
  auto r = origin.LoadSample(asked, extent, [&](const format::Entry&, cache::Blob) { ++others; },
                             MemberRange{File(1).index, File(2).index});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(others, 3);
  OriginStats s;
  origin.Report(&s);
  EXPECT_EQ(s.demand_reads, 1u);
  EXPECT_EQ(s.member_bytes, File(2).size());
  EXPECT_EQ(s.asked_bytes(), asked.size());
  EXPECT_GE(s.neighbour_bytes, File(0).size() + File(3).size());
  EXPECT_EQ(s.asked_bytes() + s.member_bytes + s.neighbour_bytes, s.demand_bytes);
  // Without a range every other file is a member: a sample read alone.
  auto none = [](const format::Entry&, cache::Blob) {};
  ASSERT_TRUE(origin.LoadSample(File(5), {File(5), File(6)}, none).ok());
  OriginStats t;
  origin.Report(&t);
  EXPECT_EQ(t.member_bytes - s.member_bytes, File(6).size());
}

// Every successful origin read, of any cause, is an observation of the cost model; a
// failed one is not (its time says nothing about a read).
TEST_F(OriginReaderTest, EveryOriginReadIsTimedIntoTheCostModel) {
  FaultyOrigin* faults = faults_.get();
  OriginReader origin(*dataset_, *faults_, metrics_, OriginReaderOptions{});
  EXPECT_EQ(origin.CostEstimate().reads, 0u);
  std::vector<format::Entry> all;
  for (int i = 0; i < 8; ++i) all.push_back(File(i));
  origin.ReadCoalesced(all, ReadCause::kPrefetch, [](const format::Entry&, cache::Blob) {});
  ASSERT_TRUE(origin.LoadSample(File(1), {File(1)}, {}).ok());
  EXPECT_EQ(origin.CostEstimate().reads, 2u);
  faults->mode = FaultyOrigin::Mode::kEio;
  EXPECT_FALSE(origin.LoadSample(File(2), {File(2)}, {}).ok());
  const OriginCostEstimate e = origin.CostEstimate();
  EXPECT_EQ(e.reads, 2u);
  EXPECT_FALSE(e.known) << "two reads tell nothing yet";
  EXPECT_EQ(e.extent_bytes, 64u << 10);
}

TEST_F(OriginReaderTest, AReadThatFailsAtTheOriginIsEioInStatsAndNotCached) {
  FaultyOrigin* faults = faults_.get();
  FilesystemOptions options;
  options.readahead = false;
  auto tiers = std::make_unique<cache::TierStack>(options.ram_cache_bytes, 16, nullptr, nullptr);
  Filesystem fs(std::move(dataset_), options, std::move(tiers), std::move(faults_));
  auto dir = fs.Lookup(kRootIno, "d");
  ASSERT_TRUE(dir.ok());
  auto file = fs.Lookup(dir->ino, "103.txt");
  ASSERT_TRUE(file.ok());
  faults->mode = FaultyOrigin::Mode::kEio;
  auto r = fs.Read(file->ino, 0, 4096);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(ToErrno(r.status()), EIO);
  auto j = nlohmann::json::parse(fs.StatsJson());
  EXPECT_EQ(j["errors"]["io"], 1) << j.dump(2);
  EXPECT_EQ(j["requests"]["read"]["errors"], 1);
  EXPECT_EQ(j["origin"]["errors"], 1);
  EXPECT_EQ(fs.Stats().tiers[0].counters.entries, 0u) << "a failed load is not cached";
  // The origin recovers: the same file reads right, from the origin.
  faults->mode = FaultyOrigin::Mode::kPass;
  r = fs.Read(file->ino, 0, 4096);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(std::string(r->data, r->size), std::string(103, 'd'));
  EXPECT_EQ(fs.Stats().origin.demand_reads, 1u);
}

}  // namespace
}  // namespace mmfs::fs
