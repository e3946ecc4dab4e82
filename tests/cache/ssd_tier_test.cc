#include "cache/ssd_tier.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "tests/test_util.h"

namespace mmfs::cache {
namespace {

using testing::TempDir;

class SsdTierTest : public ::testing::Test {
 protected:
  std::unique_ptr<SsdTier> Open(uint64_t budget = 1 << 20, std::string ns = "ds-test",
                                double min_free = 0.0) {
    SsdTierOptions o;
    o.dir = tmp_ / "cache";
    o.name_space = std::move(ns);
    o.budget_bytes = budget;
    o.expected_keys = 1000;
    o.min_free_fraction = min_free;
    auto t = SsdTier::Open(o);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return t.ok() ? std::move(t).value() : nullptr;
  }
  static Blob B(const std::string& s) { return std::make_shared<const std::string>(s); }
  // Looks the key up first, as the tiered cache does, so the policy counts the access.
  static void Put(SsdTier& t, CacheKey k, const std::string& s) {
    t.Lookup(k);
    t.Insert(k, B(s));
  }
  TempDir tmp_;
};

TEST_F(SsdTierTest, WriteThenReadBack) {
  auto t = Open();
  Put(*t, 1, "hello");
  Put(*t, 2, std::string(100000, 'q'));
  t->Flush();
  EXPECT_EQ(*t->Lookup(1), "hello");
  EXPECT_EQ(*t->Lookup(2), std::string(100000, 'q'));
  EXPECT_EQ(t->Lookup(3), nullptr);
  TierCounters c = t->Counters();
  EXPECT_EQ(c.inserts, 2u);
  EXPECT_EQ(c.entries, 2u);
  EXPECT_EQ(c.bytes_used, 5 + 100000 + 2 * SsdTier::kHeaderBytes);
  EXPECT_TRUE(std::filesystem::exists(t->PathFor(1)));
}

TEST_F(SsdTierTest, SurvivesRestart) {
  {
    auto t = Open();
    Put(*t, 7, "persisted");
  }  // the destructor flushes
  auto t = Open();
  EXPECT_EQ(t->Counters().entries, 1u);
  ASSERT_NE(t->Lookup(7), nullptr);
  EXPECT_EQ(*t->Lookup(7), "persisted");
  auto other = Open(1 << 20, "ds-other");
  EXPECT_EQ(other->Lookup(7), nullptr);  // another dataset never sees it
}

TEST_F(SsdTierTest, DamagedEntriesAreMissesNeverServed) {
  auto t = Open();
  Put(*t, 1, "good bytes here");
  Put(*t, 2, "more good bytes");
  Put(*t, 3, "and some more");
  t->Flush();
  // Flip a payload byte of 1, truncate 2, overwrite 3's header.
  int fd = ::open(t->PathFor(1).c_str(), O_WRONLY);
  ASSERT_EQ(::pwrite(fd, "X", 1, SsdTier::kHeaderBytes + 3), 1);
  ::close(fd);
  std::filesystem::resize_file(t->PathFor(2), SsdTier::kHeaderBytes + 4);
  fd = ::open(t->PathFor(3).c_str(), O_WRONLY);
  ASSERT_EQ(::pwrite(fd, "garbage!", 8, 0), 8);
  ::close(fd);
  EXPECT_EQ(t->Lookup(1), nullptr);
  EXPECT_EQ(t->Lookup(2), nullptr);
  EXPECT_EQ(t->Lookup(3), nullptr);
  EXPECT_EQ(t->Counters().corrupt, 3u);
  EXPECT_EQ(t->Counters().entries, 0u);
  EXPECT_FALSE(std::filesystem::exists(t->PathFor(1)));
}

TEST_F(SsdTierTest, BudgetHoldsAcrossRestartsAndScanCleansUp) {
  {
    auto t = Open(64 * 1024);
    for (CacheKey k = 0; k < 100; ++k) Put(*t, k, std::string(4000, 'a'));
    t->Flush();
    EXPECT_LE(t->Counters().bytes_used, 64u * 1024);
    EXPECT_GT(t->Counters().entries, 10u);
  }
  testing::WriteFile(tmp_ / "cache/mmfs-cache-v1/ds-test/00/0000000000000000.tmp", "torn");
  testing::WriteFile(tmp_ / "cache/mmfs-cache-v1/ds-test/00/not-a-key", "foreign");
  auto small = Open(16 * 1024);
  EXPECT_LE(small->Counters().bytes_used, 16u * 1024);
  uint64_t files = 0, bytes = 0;
  for (auto& e : std::filesystem::recursive_directory_iterator(tmp_ / "cache")) {
    if (e.is_regular_file()) {
      ++files;
      bytes += e.file_size();
    }
  }
  EXPECT_EQ(files, small->Counters().entries);
  EXPECT_LE(bytes, 16u * 1024);
}

TEST_F(SsdTierTest, FullDiskStopsAdmissionButKeepsServing) {
  {
    auto t = Open();
    Put(*t, 1, "kept");
  }
  auto t = Open(1 << 20, "ds-test", /*min_free=*/1.01);  // never enough free space
  Put(*t, 2, "refused");
  t->Flush();
  EXPECT_EQ(t->Lookup(2), nullptr);
  EXPECT_TRUE(t->Counters().admission_paused);
  EXPECT_EQ(*t->Lookup(1), "kept");
  Put(*t, 3, "also refused");
  t->Flush();
  EXPECT_EQ(t->Lookup(3), nullptr);
}

TEST_F(SsdTierTest, EvictingUnwrittenEntriesKeepsTheQueueAccountingRight) {
  auto t = Open(40 * 1024);
  for (CacheKey k = 0; k < 10; ++k) Put(*t, k, std::string(4000, 'o'));
  // Popular newcomers push out entries, some of which may still be waiting to be written.
  for (CacheKey k = 100; k < 200; ++k) {
    for (int i = 0; i < 4; ++i) t->Lookup(k);
    t->Insert(k, B(std::string(4000, 'n')));
  }
  t->Flush();
  EXPECT_EQ(t->pending_bytes(), 0u);
  EXPECT_GT(t->Counters().evictions, 0u);
  EXPECT_LE(t->Counters().bytes_used, 40u * 1024);
  EXPECT_EQ(t->Counters().dropped, 0u);
}

TEST_F(SsdTierTest, RejectsBadNamespace) {
  SsdTierOptions o;
  o.dir = tmp_ / "cache";
  o.name_space = "../escape";
  o.budget_bytes = 1000;
  EXPECT_FALSE(SsdTier::Open(o).ok());
}

}  // namespace
}  // namespace mmfs::cache
