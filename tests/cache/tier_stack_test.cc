#include "cache/tier_stack.h"

#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <filesystem>

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
  EXPECT_EQ((*stack)->ssd(), nullptr);
  EXPECT_EQ((*stack)->cluster(), nullptr);
  EXPECT_EQ((*stack)->Find("ram"), &(*stack)->ram());
  EXPECT_EQ((*stack)->Find("ssd"), nullptr);
  EXPECT_EQ((*stack)->cache().tiers().size(), 1u);
  EXPECT_EQ((*stack)->ram().Counters().bytes_budget, 1u << 20);
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
  ASSERT_NE(s.ssd(), nullptr);
  EXPECT_EQ(s.Find("ssd"), s.ssd());
  ASSERT_EQ(s.all().size(), 2u);
  EXPECT_EQ(s.all()[0]->name(), "ram");
  EXPECT_EQ(s.all()[1]->name(), "ssd");
  EXPECT_EQ(s.ssd()->Counters().bytes_budget, 8u << 20);
  auto blob = std::make_shared<const std::string>("bytes");
  auto got = s.cache().Get(7, [&]() -> Result<Blob> { return blob; });
  ASSERT_TRUE(got.ok());
  s.ssd()->Flush();
  EXPECT_TRUE(s.ram().Contains(7));
  EXPECT_TRUE(s.ssd()->Contains(7));
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
    CacheTier* ssd = (*stack)->ssd();
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
  TierCounters c = (*stack)->ssd()->Counters();
  EXPECT_EQ(c.entries, held);
  EXPECT_GE(c.bytes_budget + (1 << 20), first_budget);  // about the same as before
}

}  // namespace
}  // namespace mmfs::cache
