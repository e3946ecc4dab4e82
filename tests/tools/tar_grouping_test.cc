// Tars whose members are not grouped by sample lose nothing; non-ASCII member
// names read without locale warnings and sample names in warnings have no stray '/'.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/test_util.h"
#include "tests/tools/pack_fixture.h"
#include "tools/pack/tar_grouping.h"

namespace mmfs::pack {
namespace {

using testing::MakeJpeg;

TEST(TarGroupingTest, MemberKeys) {
  EXPECT_EQ(MemberKey("1.jpg"), "1");
  EXPECT_EQ(MemberKey("a/b/000123.tar.txt"), "a/b/000123");
  EXPECT_EQ(MemberKey("a/.hidden"), "a/.hidden");
}

// What `tar -C dir -cf x.tar .` writes: directory order, a sample's members apart.
std::vector<Member> Ungrouped(int samples) {
  std::vector<Member> m;
  for (int i = 0; i < samples; ++i) m.push_back({"./k" + std::to_string(i) + ".txt", "caption " + std::to_string(i)});
  for (int i = samples - 1; i >= 0; --i) {
    m.push_back({"./k" + std::to_string(i) + ".jpg", MakeJpeg(8, 8, static_cast<unsigned>(i))});
  }
  m.push_back({"./k0.json", "{}"});
  return m;
}

TEST(TarGroupingTest, PlanCountsMembersAndSeesWhetherTheyAreGrouped) {
  testing::TempDir tmp;
  WriteTar(tmp / "g.tar", {{"1.jpg", "x"}, {"1.txt", "y"}, {"2.jpg", "z"}, {"d/1.jpg", "w"}});
  auto plan = PlanTarSamples(tmp / "g.tar", 1 << 20);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_TRUE(plan->grouped);
  EXPECT_EQ(plan->members, 4u);
  EXPECT_EQ(plan->members_of.at("1"), 2u);
  EXPECT_EQ(plan->members_of.at("d/1"), 1u);
  WriteTar(tmp / "u.tar", Ungrouped(3));
  plan = PlanTarSamples(tmp / "u.tar", 1 << 20);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_FALSE(plan->grouped);
  EXPECT_EQ(plan->members_of.at("k0"), 3u);
}

TEST(TarGroupingTest, GrouperHandsOverWholeSamplesAndSpillsPastItsLimit) {
  testing::TempDir tmp;
  TarSamplePlan plan;
  plan.members_of = {{"a", 2}, {"b", 3}, {"c", 1}};
  plan.grouped = false;
  TarGrouper grouper(plan, tmp.path(), /*memory_limit=*/10);
  std::vector<SourceNode> nodes(6);
  TarSample done;
  const std::pair<const char*, std::string> order[] = {
      {"a.txt", "aaaaaaaa"}, {"b.txt", "bbbbbbbb"}, {"c.jpg", "c"},
      {"b.json", "BB"},      {"a.jpg", "AAAA"},     {"b.jpg", "bjpg"}};
  std::vector<std::string> handed;
  for (size_t i = 0; i < 6; ++i) {
    auto r = grouper.Add(order[i].first, &nodes[i], order[i].second, &done);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    if (!*r) continue;
    std::string all = done.key + ":";
    for (const std::string& c : done.contents) all += c + ",";
    handed.push_back(all);
    EXPECT_EQ(done.nodes.size(), done.contents.size());
  }
  // Samples come out when complete, members in archive order, bytes intact after the spill.
  EXPECT_EQ(handed, (std::vector<std::string>{"c:c,", "a:aaaaaaaa,AAAA,", "b:bbbbbbbb,BB,bjpg,"}));
  EXPECT_GT(grouper.spilled_bytes(), 0u);
  EXPECT_TRUE(grouper.Incomplete().empty());
  // A member the plan did not count: the archive changed between the passes.
  auto extra = grouper.Add("a.png", &nodes[0], "x", &done);
  ASSERT_FALSE(extra.ok());
  EXPECT_NE(extra.status().message().find("changed while packing"), std::string::npos);
}

TEST(TarGroupingTest, NeighboursGrouperHandsOverEachRunOfAKeyAndRefusesAKeyThatComesBack) {
  testing::TempDir spill;
  // A limit of 2 bytes: "at" and "bj"/"bt" wait in the spill file and come back intact.
  TarGrouper grouper = TarGrouper::Neighbours(spill.path(), /*memory_limit=*/2);
  std::vector<SourceNode> nodes(7);
  TarSample done;
  const std::pair<const char*, std::string> order[] = {
      {"a.jpg", "A"}, {"a.txt", "at"}, {"b.jpg", "B"}, {"b.json", "bj"}, {"b.txt", "bt"},
      {"d/c.jpg", "C"}};
  std::vector<std::string> handed;
  auto note = [&] {
    std::string all = done.key + ":";
    for (const std::string& c : done.contents) all += c + ",";
    handed.push_back(all);
    EXPECT_EQ(done.nodes.size(), done.contents.size());
  };
  for (size_t i = 0; i < 6; ++i) {
    auto r = grouper.Add(order[i].first, &nodes[i], order[i].second, &done);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    if (*r) note();
  }
  EXPECT_EQ(handed, (std::vector<std::string>{"a:A,at,", "b:B,bj,bt,"}));
  auto last = grouper.Finish(&done);
  ASSERT_TRUE(last.ok() && *last);
  note();
  EXPECT_EQ(handed.back(), "d/c:C,");
  EXPECT_GT(grouper.spilled_bytes(), 0u);
  // A key that comes back after another cannot be made whole in one pass: refused, named.
  auto back = grouper.Add("a.cls", &nodes[6], "1", &done);
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(back.status().message().find("'a'"), std::string::npos) << back.status().ToString();
  // A planned grouper has nothing left to finish.
  TarSamplePlan plan;
  TarGrouper planned(plan, "/tmp", 10);
  auto none = planned.Finish(&done);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(*none);
}

TEST_F(InputsTest, UngroupedTarLosesNoSample) {
  WriteTar(tmp_ / "u.tar", Ungrouped(40));
  auto s = Pack({tmp_ / "u.tar"});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->files, 81u);
  EXPECT_EQ(s->samples_without_image, 0u);
  EXPECT_TRUE(reporter_.warnings.empty()) << reporter_.warnings.front();
  for (int i = 0; i < 40; ++i) {
    std::string k = "u/k" + std::to_string(i);
    EXPECT_EQ(Read(k + ".txt"), "caption " + std::to_string(i));
    EXPECT_EQ(Read(k + ".jpg"), MakeJpeg(8, 8, static_cast<unsigned>(i)));
    EXPECT_EQ(SampleOf(k + ".txt"), SampleOf(k + ".jpg")) << k;  // one record per sample
  }
  EXPECT_EQ(SampleOf("u/k0.json"), SampleOf("u/k0.jpg"));
  // The same tar gzip-compressed, packed on two threads: the same samples.
  WriteTar(tmp_ / "v.tar.gz", Ungrouped(40), /*gzip=*/true);
  PackOptions o;
  o.force = true;
  o.jobs = 2;
  ds_.reset();
  s = Pack({tmp_ / "v.tar.gz"}, o);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->files, 81u);
  EXPECT_EQ(Read("v/k39.txt"), "caption 39");
}

TEST_F(InputsTest, NonAsciiMemberNamesNeedNoLocale) {
  // Python's tarfile (pax format) writes these names as UTF-8 pax headers.
  testing::WriteFile(tmp_ / "n/ünï.jpg", MakeJpeg(8, 8));
  testing::WriteFile(tmp_ / "n/ünï.txt", "umlauts");
  testing::WriteFile(tmp_ / "n/日本.jpg", MakeJpeg(8, 8, 2));
  testing::WriteFile(tmp_ / "n/日本.txt", "kanji");
  auto made = testing::RunCommand(
      {"/usr/bin/python3", "-c",
       "import sys, tarfile\n"
       "with tarfile.open(sys.argv[1], 'w', format=tarfile.PAX_FORMAT) as t:\n"
       "    t.add(sys.argv[2], arcname='.')\n",
       tmp_ / "n.tar", tmp_ / "n"});
  ASSERT_EQ(made.exit_code, 0) << made.output;
  auto s = Pack({tmp_ / "n.tar"});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_TRUE(reporter_.warnings.empty()) << reporter_.warnings.front();
  EXPECT_EQ(Read("n/ünï.txt"), "umlauts");
  EXPECT_EQ(Read("n/日本.txt"), "kanji");
}

TEST_F(InputsTest, SampleNamesInWarningsHaveNoLeadingSlash) {
  WriteTar(tmp_ / "w.tar", {{"1.txt", "no image"}, {"d/2.txt", "no image either"}});
  auto s = Pack({tmp_ / "w.tar"});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->samples_without_image, 2u);
  EXPECT_TRUE(Warned("skipping sample '1' in "));
  EXPECT_TRUE(Warned("skipping sample 'd/2' in "));
  EXPECT_FALSE(Warned("'/"));
}

}  // namespace
}  // namespace mmfs::pack
