// The SSD tier (cache/ssd_tier.h) on a disk that is full or failing, through a fake disk
// (tests/fakes/fake_ssd_disk.h) that sets the room the tier sees and fails its writes and reads
// on request: the default budget follows the disk's size; a full disk or a failed write stores
// nothing, leaves no file, is counted and named, and stops admission while the entries already
// held are still served; a failed read is a miss that drops the entry; and behind the tier
// stack a failing SSD never fails a read: the origin's loader serves it. Tests that need a real
// small filesystem (root, tmpfs) are in ssd_tier_test.cc.
#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>

#include "cache/ssd_tier.h"
#include "cache/tier_stack.h"
#include "tests/fakes/fake_ssd_disk.h"
#include "tests/test_util.h"

namespace mmfs::cache {
namespace {

using testing::FakeSsdDisk;

constexpr uint64_t kSsdFaultGiB = 1ull << 30;

Blob SsdFaultBlob(const std::string& s) { return std::make_shared<const std::string>(s); }

class SsdDiskFaultTest : public ::testing::Test {
 protected:
  // A roomy disk, whatever the machine's own has free, unless a test says otherwise.
  void SetUp() override { disk_->SetSpace(kSsdFaultGiB, kSsdFaultGiB); }
  // A tier in the test's directory whose disk is the fake; a budget of 0 is the default one.
  std::unique_ptr<SsdTier> Open(uint64_t budget = 1 << 20, double min_free = 0.05) {
    SsdTierOptions o;
    o.dir = tmp_ / "cache";
    o.name_space = "ds-fault";
    o.budget_bytes = budget;
    o.expected_keys = 1000;
    o.min_free_fraction = min_free;
    o.disk = disk_;
    auto t = SsdTier::Open(o);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return t.ok() ? std::move(t).value() : nullptr;
  }
  // Looked up first, as the tiered cache does, so the policy counts the access.
  static void Put(SsdTier& t, CacheKey k, const std::string& s) {
    t.Lookup(k);
    t.Insert(k, SsdFaultBlob(s));
  }
  static bool Exists(const std::string& path) { return std::filesystem::exists(path); }

  testing::TempDir tmp_;
  std::shared_ptr<FakeSsdDisk> disk_ = std::make_shared<FakeSsdDisk>();
};

TEST_F(SsdDiskFaultTest, TheDefaultBudgetIsHalfTheFreeSpaceTheDiskReportsAtMostOneTiB) {
  disk_->SetSpace(10 * kSsdFaultGiB, 4 * kSsdFaultGiB);
  {
    auto t = Open(/*budget=*/0);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->Counters().bytes_budget, 2 * kSsdFaultGiB);
  }
  disk_->SetSpace(8192 * kSsdFaultGiB, 4096 * kSsdFaultGiB);
  auto t = Open(/*budget=*/0);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->Counters().bytes_budget, 1024 * kSsdFaultGiB);
}

TEST_F(SsdDiskFaultTest, AFullDiskWritesNothingMoreAndKeepsServingWhatItHolds) {
  disk_->SetSpace(kSsdFaultGiB, kSsdFaultGiB);
  auto t = Open();
  ASSERT_NE(t, nullptr);
  Put(*t, 1, "kept");
  t->Flush();
  ASSERT_TRUE(t->Contains(1));
  const uint64_t writes = disk_->writes();
  EXPECT_EQ(writes, 2u);  // the entry's header and its payload
  // 1% free, below the 5% guard.
  disk_->SetSpace(kSsdFaultGiB, kSsdFaultGiB / 100);
  Put(*t, 2, "refused by the guard");
  t->Flush();
  EXPECT_FALSE(t->Contains(2));
  EXPECT_FALSE(Exists(t->PathFor(2)));
  EXPECT_EQ(disk_->writes(), writes);
  TierCounters c = t->Counters();
  EXPECT_TRUE(c.admission_paused);
  EXPECT_EQ(c.write_errors, 0u);  // a full disk is not a failing one
  EXPECT_NE(t->AdmissionProblem().find("free-space guard"), std::string::npos)
      << t->AdmissionProblem();
  EXPECT_EQ(c.problem, t->AdmissionProblem());
  // Admission stays stopped: the next entry is not even queued.
  Put(*t, 3, "not admitted");
  t->Flush();
  EXPECT_FALSE(t->Contains(3));
  EXPECT_EQ(t->Counters().inserts, c.inserts);
  // What it holds is served as before.
  Blob kept = t->Lookup(1);
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(*kept, "kept");
  EXPECT_EQ(t->Counters().entries, 1u);
}

TEST_F(SsdDiskFaultTest, AFailedWriteIsCountedNamedLeavesNoFileAndPausesAdmission) {
  auto t = Open();
  ASSERT_NE(t, nullptr);
  disk_->FailNextWrites(1, EIO);
  Put(*t, 1, "lost");
  t->Flush();
  EXPECT_EQ(disk_->failed_writes(), 1u);
  EXPECT_FALSE(t->Contains(1));  // never claimed as held
  EXPECT_FALSE(Exists(t->PathFor(1)));
  EXPECT_FALSE(Exists(t->PathFor(1) + ".tmp"));  // the half-written file is removed
  TierCounters c = t->Counters();
  EXPECT_EQ(c.write_errors, 1u);
  EXPECT_TRUE(c.admission_paused);
  EXPECT_EQ(c.entries, 0u);
  EXPECT_NE(c.problem.find("Input/output error"), std::string::npos) << c.problem;
  // Paused: the next entry is not written, even though the disk would take it now.
  Put(*t, 2, "while paused");
  t->Flush();
  EXPECT_FALSE(t->Contains(2));
  EXPECT_EQ(disk_->writes(), 0u);
  EXPECT_EQ(t->Lookup(1), nullptr);
}

TEST_F(SsdDiskFaultTest, AWriteThatRunsOutOfSpaceStopsAdmissionAsAFullDiskDoes) {
  auto t = Open(1 << 20, /*min_free=*/0.0);  // the guard passes; the write itself finds no room
  ASSERT_NE(t, nullptr);
  disk_->FailNextWrites(1, ENOSPC);
  Put(*t, 1, "no room");
  t->Flush();
  EXPECT_FALSE(t->Contains(1));
  EXPECT_FALSE(Exists(t->PathFor(1) + ".tmp"));
  TierCounters c = t->Counters();
  EXPECT_EQ(c.write_errors, 0u);  // full, not failing
  EXPECT_TRUE(c.admission_paused);
  EXPECT_NE(c.problem.find("No space left on device"), std::string::npos) << c.problem;
}

TEST_F(SsdDiskFaultTest, AFailedReadIsAMissThatDropsTheEntry) {
  auto t = Open();
  ASSERT_NE(t, nullptr);
  Put(*t, 1, "written fine");
  Put(*t, 2, "read fine");
  t->Flush();
  ASSERT_TRUE(Exists(t->PathFor(1)));
  disk_->FailNextReads(1);
  EXPECT_EQ(t->Lookup(1), nullptr);
  EXPECT_EQ(disk_->failed_reads(), 1u);
  EXPECT_EQ(t->Counters().read_errors, 1u);  // never served; a failing disk, not a damaged file
  EXPECT_EQ(t->Counters().corrupt, 0u);
  EXPECT_FALSE(t->Contains(1));
  t->Flush();
  EXPECT_FALSE(Exists(t->PathFor(1)));  // deleted by the writer
  // Gone for good: the next lookup does not touch the disk.
  const uint64_t reads = disk_->reads();
  EXPECT_EQ(t->Lookup(1), nullptr);
  EXPECT_EQ(disk_->reads(), reads);
  // The other entry is unaffected.
  Blob other = t->Lookup(2);
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(*other, "read fine");
}

// The tier stack as the daemon builds it, with the SSD tier on the fake disk: whatever the disk
// does, a read gets its bytes, from the loader when the tier cannot give them.
TEST_F(SsdDiskFaultTest, BehindTheTierStackAFailingDiskNeverFailsARead) {
  auto ssd = Open();
  ASSERT_NE(ssd, nullptr);
  SsdTier* tier = ssd.get();
  TierStack tiers(1 << 20, 1000, std::move(ssd), nullptr);
  int loads = 0;
  auto loader = [&](const std::string& bytes) {
    return [&loads, bytes]() -> Result<Blob> {
      ++loads;
      return SsdFaultBlob(bytes);
    };
  };
  // Loaded once, filled into both tiers.
  size_t served_by = 99;
  auto got = tiers.cache().Get(5, loader("five"), &served_by);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(**got, "five");
  EXPECT_EQ(served_by, tiers.cache().tiers().size());  // the loader
  tier->Flush();
  ASSERT_TRUE(tier->Contains(5));
  // Out of RAM, and the SSD read fails: the loader serves it again.
  tiers.ram().Erase(5);
  disk_->FailNextReads(1);
  got = tiers.cache().Get(5, loader("five"), &served_by);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(**got, "five");
  EXPECT_EQ(served_by, tiers.cache().tiers().size());
  EXPECT_EQ(loads, 2);
  EXPECT_EQ(tier->Counters().read_errors, 1u);
  tier->Flush();  // its write again, done before the next write is made to fail
  // A write that fails: the read is served all the same, and RAM keeps the file.
  disk_->FailNextWrites(1);
  got = tiers.cache().Get(6, loader("six"), &served_by);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(**got, "six");
  tier->Flush();
  EXPECT_FALSE(tier->Contains(6));
  EXPECT_TRUE(tiers.ram().Contains(6));
  EXPECT_EQ(tier->Counters().write_errors, 1u);
  EXPECT_EQ(tiers.cache().origin_counters().errors, 0u);  // no read failed
}

}  // namespace
}  // namespace mmfs::cache
