#include "cache/tier_stack.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace mmfs::cache
