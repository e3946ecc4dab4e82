// mmfs pack s3://BUCKET/PREFIX/ against a real store (s3rver): the tars under the prefix, read
// once each with no local copy, give the dataset their local copies give; what is not a tar is
// left out with a warning; a tar whose samples are scattered, a prefix with no tar and a whole
// bucket are refused, named.

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "tests/s3rver_helper.h"
#include "tests/test_util.h"
#include "tests/tools/pack_fixture.h"
#include "tools/pack/bucket_source.h"

namespace mmfs::pack {
namespace {

std::vector<Member> BucketTarMembers(int first, int samples) {
  std::vector<Member> m;
  for (int i = first; i < first + samples; ++i) {
    const std::string k = std::to_string(100000 + i);
    m.push_back({k + ".jpg", testing::MakeJpeg(16, 16, static_cast<unsigned>(i))});
    m.push_back({k + ".txt", "caption " + std::to_string(i)});
    m.push_back({k + ".json", "{\"i\": " + std::to_string(i) + "}"});
  }
  return m;
}

class PackBucketTest : public InputsTest {
 protected:
  void SetUp() override {
    ASSERT_TRUE(s3.installed()) << s3.NotInstalled();
    ASSERT_TRUE(s3.Start()) << s3.Log();
    testing::UseS3rverAccount(tmp_.path());
    options.remote.endpoint = s3.url();
    // Room for a slow first answer from node (a sanitizer build, a loaded machine).
    options.remote.retry.total = std::chrono::milliseconds(10000);
  }
  void TearDown() override { testing::ForgetS3rverAccount(); }
  // Writes the tar locally as `local`, and puts it as `key`.
  void PutTar(const std::string& key, const std::string& local, const std::vector<Member>& m,
              bool gzip = false) {
    WriteTar(local, m, gzip);
    ASSERT_EQ(s3.Put("bkt", key, local), 200) << key << "\n" << s3.Log();
  }

  testing::S3rverServer s3{"bkt"};
  PackOptions options;
};

TEST_F(PackBucketTest, TheTarsUnderAPrefixPackAsTheirLocalCopiesDo) {
  testing::TempDir local;
  // Two tars, one of them compressed, and what img2dataset leaves beside them.
  std::vector<Member> a = BucketTarMembers(0, 30), b = BucketTarMembers(30, 20);
  PutTar("wds/00000.tar", local / "00000.tar", a);
  PutTar("wds/00001.tar.gz", local / "00001.tar.gz", b, /*gzip=*/true);
  testing::WriteFile(local / "stats.json", "{}");
  ASSERT_EQ(s3.Put("bkt", "wds/00000_stats.json", local / "stats.json"), 200);
  ASSERT_EQ(s3.Put("bkt", "wds/more/00002.tar", local / "00000.tar"), 200);
  ASSERT_EQ(s3.Put("bkt", "other/00003.tar", local / "00000.tar"), 200);

  // Doubled slashes name the same prefix.
  auto s = Pack({"s3://bkt//wds//"}, options);
  ASSERT_TRUE(s.ok()) << s.status().ToString() << "\n" << s3.Log();
  EXPECT_EQ(s->files, 150u);
  EXPECT_EQ(s->samples, 50u);
  EXPECT_EQ(s->skipped, 2u);  // the stats file and the tar one level below
  EXPECT_TRUE(Warned("2 objects that are not tar files")) << ::testing::PrintToString(
      reporter_.warnings);
  for (const auto& [folder, members] : {std::pair{"00000", &a}, std::pair{"00001", &b}}) {
    for (const Member& m : *members) {
      EXPECT_EQ(Read(std::string(folder) + "/" + m.name), m.data) << folder << "/" << m.name;
    }
  }
  // A sample's members are one record, as from a local tar.
  EXPECT_EQ(SampleOf("00000/100003.jpg"), SampleOf("00000/100003.txt"));
  EXPECT_EQ(SampleOf("00001/100049.json"), SampleOf("00001/100049.jpg"));
  EXPECT_EQ(Read("more/00002/100000.jpg"), "<missing>");
  // A tar's folder has its object's time, so an unchanged bucket packs the same again.
  uint64_t left_out = 0;
  auto listed = ListBucketTars("s3://bkt/wds/", options.remote, &left_out);
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_GT((*listed)[0].mtime_ns, 0);
  auto folder = Find("00000");
  ASSERT_TRUE(folder.ok()) << folder.status().ToString();
  EXPECT_EQ(folder->record.mtime_ns, (*listed)[0].mtime_ns);
  // A bucket has no modes to go by: what it held is for the packing user alone.
  struct stat st;
  ASSERT_EQ(::stat((tmp_ / "out.mmfs/shard-00000.mdb").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0044, 0u) << std::oct << st.st_mode;
}

TEST_F(PackBucketTest, ATarIsReadInManyBlocksInOrder) {
  testing::TempDir local;
  std::vector<Member> a = BucketTarMembers(0, 40);
  PutTar("wds/00000.tar", local / "00000.tar", a);
  uint64_t left_out = 0;
  auto tars = ListBucketTars("s3://bkt/wds", options.remote, &left_out);
  ASSERT_TRUE(tars.ok()) << tars.status().ToString();
  ASSERT_EQ(tars->size(), 1u);
  EXPECT_EQ((*tars)[0].url, "s3://bkt/wds/00000.tar");
  EXPECT_EQ(left_out, 0u);
  // Blocks far smaller than the tar: many GETs, each a few ahead, handed over in order.
  testing::CollectingReporter rep;
  auto t = BucketTar::Open((*tars)[0], options.remote, rep, 1 << 20, /*block_bytes=*/4096);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_GT((*tars)[0].size, 10u * 4096);
  TarMember m;
  size_t i = 0;
  for (;; ++i) {
    auto more = (*t)->reader().Next(&m);
    ASSERT_TRUE(more.ok()) << more.status().ToString();
    if (!*more) break;
    ASSERT_LT(i, a.size());
    EXPECT_EQ(m.path, a[i].name);
    EXPECT_EQ(m.data, a[i].data) << m.path;
  }
  EXPECT_EQ(i, a.size());
}

TEST_F(PackBucketTest, ScatteredSamplesEmptyPrefixesAndWholeBucketsAreRefusedNamed) {
  testing::TempDir local;
  // `tar -cf x.tar .` order: every caption, then every image.
  std::vector<Member> scattered;
  for (int i = 0; i < 3; ++i) scattered.push_back({"k" + std::to_string(i) + ".txt", "c"});
  for (int i = 0; i < 3; ++i) {
    scattered.push_back({"k" + std::to_string(i) + ".jpg", testing::MakeJpeg(8, 8)});
  }
  PutTar("mixed/00000.tar", local / "00000.tar", scattered);
  auto s = Pack({"s3://bkt/mixed/"}, options);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("s3://bkt/mixed/00000.tar"), std::string::npos)
      << s.status().ToString();
  EXPECT_NE(s.status().message().find("'k0'"), std::string::npos) << s.status().ToString();
  EXPECT_NE(s.status().message().find("local copy"), std::string::npos);

  auto none = Pack({"s3://bkt/nothing-here/"}, options);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(none.status().message().find("s3://bkt/nothing-here/"), std::string::npos)
      << none.status().ToString();

  for (const char* whole : {"s3://bkt/", "s3://bkt//"}) {
    auto root = Pack({whole}, options);
    ASSERT_FALSE(root.ok()) << whole;
    EXPECT_NE(root.status().message().find("prefix"), std::string::npos)
        << root.status().ToString();
  }

  // Keys are the dataset maker's: a name no folder can have, or two tars that would be one
  // folder, are refused before anything is read.
  ASSERT_EQ(s3.Put("bkt", "dots/..tar", local / "00000.tar"), 200);
  auto dots = Pack({"s3://bkt/dots/"}, options);
  ASSERT_FALSE(dots.ok());
  EXPECT_NE(dots.status().message().find("s3://bkt/dots/..tar"), std::string::npos)
      << dots.status().ToString();
  ASSERT_EQ(s3.Put("bkt", "dup/a.tar", local / "00000.tar"), 200);
  ASSERT_EQ(s3.Put("bkt", "dup/a.tgz", local / "00000.tar"), 200);
  auto dup = Pack({"s3://bkt/dup/"}, options);
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.status().code(), StatusCode::kAlreadyExists) << dup.status().ToString();
  EXPECT_NE(dup.status().message().find("dup/a.tgz"), std::string::npos);

  // Only tars come from a bucket.
  PackOptions as_folder = options;
  as_folder.format = SourceFormat::kFolder;
  auto folder = Pack({"s3://bkt/wds/"}, as_folder);
  ASSERT_FALSE(folder.ok());
  EXPECT_NE(folder.status().message().find("only WebDataset tars"), std::string::npos)
      << folder.status().ToString();
}

}  // namespace
}  // namespace mmfs::pack
