#include "cache/tier_stack.h"

#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <filesystem>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "cache/ssd_tier.h"
#include "tests/test_util.h"

namespace mmfs::cache {
namespace {

TEST(TierStackTest, RamAloneByDefault) {
  TierStackOptions o;
  o.ram_bytes = 1 << 20;
  o.expected_keys = 100;
  auto stack = BuildTierStack(o);
  ASSERT_TRUE(stack.ok()) << stack.status().ToString();
  EXPECT_EQ((*stack)->all().size(), 1u);
  EXPECT_EQ((*stack)->local_disk(), nullptr);
  EXPECT_EQ((*stack)->cluster(), nullptr);
  EXPECT_EQ((*stack)->Find("ram"), &(*stack)->ram());
  EXPECT_EQ((*stack)->Find("ssd"), nullptr);
  EXPECT_EQ((*stack)->cache().tiers().size(), 1u);
  EXPECT_EQ((*stack)->ram().Counters().bytes_budget, 1u << 20);
  EXPECT_EQ((*stack)->First(TierRole::kMemory), &(*stack)->ram());
  EXPECT_EQ((*stack)->First(TierRole::kShared), nullptr);
  EXPECT_EQ((*stack)->RoleOf(0), TierRole::kMemory);
  EXPECT_FALSE((*stack)->RoleOf(1).has_value());  // the loader
}

TEST(TierStackTest, SsdBelowRamFoundByNameAndFilledByTheCache) {
  testing::TempDir tmp;
  TierStackOptions o;
  o.ram_bytes = 1 << 20;
  o.expected_keys = 100;
  o.name_space = "ds-test";
  o.ssd_dir = tmp / "ssd";
  o.ssd_bytes = 8 << 20;
  auto stack = BuildTierStack(o);
  ASSERT_TRUE(stack.ok()) << stack.status().ToString();
  TierStack& s = **stack;
  ASSERT_NE(s.local_disk(), nullptr);
  EXPECT_EQ(s.Find("ssd"), s.local_disk());
  ASSERT_EQ(s.all().size(), 2u);
  EXPECT_EQ(s.all()[0]->name(), "ram");
  EXPECT_EQ(s.all()[1]->name(), "ssd");
  EXPECT_EQ(s.First(TierRole::kLocalDisk), s.local_disk());
  EXPECT_EQ(s.RoleOf(1), TierRole::kLocalDisk);
  EXPECT_EQ(s.local_disk()->Counters().bytes_budget, 8u << 20);
  auto blob = std::make_shared<const std::string>("bytes");
  auto got = s.cache().Get(7, [&]() -> Result<Blob> { return blob; });
  ASSERT_TRUE(got.ok());
  s.local_disk()->Flush();
  EXPECT_TRUE(s.ram().Contains(7));
  EXPECT_TRUE(s.local_disk()->Contains(7));
}

// A tier of a kind the stack was not written for: adding one is its class and the line that
// hands it to the stack, and the callers find it by its role.
class OtherDiskTier final : public CacheTier {
 public:
  std::string_view name() const override { return "other"; }
  TierRole role() const override { return TierRole::kLocalDisk; }
  Blob Lookup(CacheKey key) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = blobs_.find(key);
    return it == blobs_.end() ? nullptr : it->second;
  }
  void Insert(CacheKey key, Blob blob) override {
    std::lock_guard<std::mutex> lock(mu_);
    blobs_[key] = std::move(blob);
  }
  TierCounters Counters() const override { return {}; }

 private:
  std::mutex mu_;
  std::unordered_map<CacheKey, Blob> blobs_;
};

TEST(TierStackTest, TiersAreFoundByRoleNotBySlot) {
  std::vector<std::unique_ptr<CacheTier>> keyed;
  keyed.push_back(nullptr);  // an absent tier: skipped
  auto other = std::make_unique<OtherDiskTier>();
  OtherDiskTier* o = other.get();
  keyed.push_back(std::move(other));
  TierStack s(1 << 20, 100, std::move(keyed), nullptr);
  EXPECT_EQ(s.local_disk(), o);
  EXPECT_EQ(s.Find("other"), o);
  EXPECT_EQ(s.First(TierRole::kShared), nullptr);
  ASSERT_EQ(s.all().size(), 2u);
  ASSERT_EQ(s.cache().tiers().size(), 2u);
  o->Insert(3, std::make_shared<const std::string>("three"));
  size_t served_by = 9;
  auto got = s.cache().Get(
      3, []() -> Result<Blob> { return Status::IoError("not loaded"); }, &served_by);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(**got, "three");
  EXPECT_EQ(s.RoleOf(served_by), TierRole::kLocalDisk);
}

TEST(TierStackTest, ErrorsNameTheTier) {
  TierStackOptions o;
  o.ssd_dir = "/proc/mmfs-cannot-be-here";
  o.ssd_bytes = 1 << 20;
  auto stack = BuildTierStack(o);
  ASSERT_FALSE(stack.ok());
  EXPECT_NE(stack.status().message().find("SSD cache"), std::string::npos)
      << stack.status().ToString();
  TierStackOptions c;
  c.cluster_servers = {"not a server"};
  auto cluster = BuildTierStack(c);
  ASSERT_FALSE(cluster.ok()) << "a server without a port was taken";
  EXPECT_NE(cluster.status().message().find("cluster cache"), std::string::npos)
      << cluster.status().ToString();
  EXPECT_NE(cluster.status().message().find("'not a server' is not HOST:PORT"), std::string::npos)
      << cluster.status().ToString();
  for (const char* bad :
       {"host:", ":11211", "host:0", "host:70000", "host:12x", "host: 80", "host:+80"}) {
    TierStackOptions b;
    b.cluster_servers = {bad};
    EXPECT_FALSE(BuildTierStack(b).ok()) << bad;
  }
}

// The default SSD budget is half of what the disk could give the tier; the tier's own files are
// part of that, so a remount keeps what a warm-up stored instead of dropping half of it.
TEST(TierStackTest, DefaultSsdBudgetCountsTheTiersOwnFiles) {
  if (::geteuid() != 0) GTEST_SKIP() << "mounting a tmpfs needs root";
  testing::TempDir tmp;
  std::string disk = tmp / "disk";
  std::filesystem::create_directories(disk);
  ASSERT_EQ(::mount("tmpfs", disk.c_str(), "tmpfs", 0, "size=20m"), 0);
  struct Unmount {
    std::string dir;
    ~Unmount() { ::umount2(dir.c_str(), MNT_DETACH); }
  } unmount{disk};
  TierStackOptions o;
  o.ram_bytes = 1 << 20;
  o.expected_keys = 1000;
  o.name_space = "ds-test";
  o.ssd_dir = disk;  // ssd_bytes 0: the default
  uint64_t first_budget = 0, held = 0;
  {
    auto stack = BuildTierStack(o);
    ASSERT_TRUE(stack.ok()) << stack.status().ToString();
    CacheTier* ssd = (*stack)->local_disk();
    first_budget = ssd->Counters().bytes_budget;
    EXPECT_GT(first_budget, 8u << 20);
    EXPECT_LE(first_budget, 10u << 20);
    // Warm it to 90% of its budget.
    for (CacheKey k = 0; (k + 1) * (100 << 10) < first_budget * 9 / 10; ++k) {
      ssd->Lookup(k);
      ssd->Insert(k, std::make_shared<const std::string>(100 << 10, 'w'));
      if (ssd->pending_bytes() > (4 << 20)) ssd->Flush();
    }
    ssd->Flush();
    held = ssd->Counters().entries;
    EXPECT_GT(held, 60u);
  }
  auto stack = BuildTierStack(o);
  ASSERT_TRUE(stack.ok()) << stack.status().ToString();
  TierCounters c = (*stack)->local_disk()->Counters();
  EXPECT_EQ(c.entries, held);
  EXPECT_GE(c.bytes_budget + (1 << 20), first_budget);  // about the same as before
}

}  // namespace
}  // namespace mmfs::cache
