// S3Uploader against s3rver, through tests/origin/fault_proxy.py, which checks every request's
// SigV4 signature as S3 does (a body sent UNSIGNED-PAYLOAD included): whole objects and
// multipart uploads arrive byte-exact with their metadata, a part that fails once is sent
// again, one that fails for good aborts the upload, and a bucket that refuses writes fails
// naming the object.

#include "fs/origin/s3_upload.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>

#include "tests/fault_proxy_helper.h"
#include "tests/s3rver_helper.h"
#include "tests/test_util.h"

namespace mmfs::origin {
namespace {

std::string RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string out(n, '\0');
  for (char& c : out) c = static_cast<char>(rng());
  return out;
}

class S3UploadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(s3.installed()) << s3.NotInstalled();
    ASSERT_TRUE(s3.Start()) << s3.Log();
    ASSERT_TRUE(proxy.Start()) << proxy.Log();
    testing::UseS3rverAccount(dir.path());
    options.endpoint = proxy.url();
    options.retry.total = std::chrono::milliseconds(10000);
  }
  void TearDown() override { testing::ForgetS3rverAccount(); }
  std::unique_ptr<S3Uploader> Open(const std::string& url) {
    UploadOptions small_parts;
    small_parts.single_put_bytes = 5ull << 20;
    small_parts.part_bytes = 5ull << 20;  // S3's smallest
    small_parts.parts_in_flight = 2;
    auto uploader = S3Uploader::Open(url, options, small_parts);
    EXPECT_TRUE(uploader.ok()) << uploader.status().ToString();
    return uploader.ok() ? std::move(uploader).value() : nullptr;
  }
  std::string Get(const std::string& key) {
    const std::string file = dir / "got";
    EXPECT_EQ(s3.Get("bkt", key, file), 200) << key;
    return testing::ReadFile(file);
  }

  testing::TempDir dir;
  testing::S3rverServer s3{"bkt"};
  testing::FaultProxy proxy{
      s3.url(), {"--sigv4-key", testing::kS3rverKey, "--sigv4-secret", testing::kS3rverSecret}};
  RemoteOptions options;
};

TEST_F(S3UploadTest, WholeAndMultipartObjectsArriveByteExactWithTheirMetadata) {
  auto up = Open("s3://bkt/out/ds.mmfs/");
  ASSERT_NE(up, nullptr);
  const std::string small = RandomBytes(1000, 1);
  const std::string large = RandomBytes((12ull << 20) + 17, 2);  // three parts, the last short
  testing::WriteFile(dir / "large", large);

  Status put = up->PutBytes("small", small, {{"mmfs-xxh3", "0123"}});
  ASSERT_TRUE(put.ok()) << put.ToString() << s3.Log();
  put = up->PutFile("shard-00000.mdb", dir / "large", {{"mmfs-size", std::to_string(large.size())}});
  ASSERT_TRUE(put.ok()) << put.ToString() << s3.Log();

  EXPECT_EQ(Get("out/ds.mmfs/small"), small);
  EXPECT_EQ(Get("out/ds.mmfs/shard-00000.mdb"), large);
  EXPECT_EQ(up->bytes_sent(), small.size() + large.size());
  auto head = up->Head("shard-00000.mdb");
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  ASSERT_TRUE(head->has_value());
  EXPECT_EQ((*head)->size, large.size());
  EXPECT_EQ((*head)->Metadata("mmfs-size"), std::to_string(large.size()));
  EXPECT_EQ(up->Head("small").value()->Metadata("mmfs-xxh3"), "0123");
  // Three parts, each its own PUT; one POST starts the upload and one completes it.
  EXPECT_EQ(proxy.Count("PUT", "shard-00000.mdb"), 3);
  EXPECT_EQ(proxy.Count("POST", "shard-00000.mdb"), 2);
  EXPECT_EQ(proxy.Stats()["refused"], 0) << proxy.Stats().dump();  // every signature good

  ASSERT_TRUE(up->Delete("small").ok());
  auto gone = up->Head("small");
  ASSERT_TRUE(gone.ok()) << gone.status().ToString();
  EXPECT_FALSE(gone->has_value());
  EXPECT_TRUE(up->Delete("small").ok());  // already gone: not an error
}

TEST_F(S3UploadTest, APartThatFailsOnceIsSentAgain) {
  auto up = Open("s3://bkt/out");
  ASSERT_NE(up, nullptr);
  const std::string large = RandomBytes((11ull << 20), 3);
  testing::WriteFile(dir / "large", large);
  ASSERT_TRUE(proxy.Fault("500", 1, "big", 1, "PUT"));
  Status put = up->PutFile("big", dir / "large");
  ASSERT_TRUE(put.ok()) << put.ToString();
  EXPECT_EQ(Get("out/big"), large);
  EXPECT_EQ(proxy.Count("PUT", "big"), 4);  // three parts, one of them twice
}

TEST_F(S3UploadTest, APartThatFailsForGoodAbortsTheUpload) {
  options.retry.total = std::chrono::milliseconds(1000);
  auto up = Open("s3://bkt/out");
  ASSERT_NE(up, nullptr);
  testing::WriteFile(dir / "large", RandomBytes(11ull << 20, 5));
  ASSERT_TRUE(proxy.Fault("500", -1, "big", 1, "PUT"));
  Status put = up->PutFile("big", dir / "large");
  ASSERT_FALSE(put.ok());
  EXPECT_NE(put.message().find("s3://bkt/out/big"), std::string::npos) << put.ToString();
  EXPECT_NE(put.message().find("HTTP 500"), std::string::npos) << put.ToString();
  // The upload is aborted (DELETE ?uploadId=...), and no object appeared.
  EXPECT_EQ(proxy.Count("DELETE", "out/big"), 1);
  ASSERT_TRUE(proxy.Clear());
  EXPECT_FALSE(up->Head("big").value().has_value());
}

TEST_F(S3UploadTest, ABucketThatRefusesWritesFailsNamingTheObject) {
  auto up = Open("s3://nosuchbucket/ds.mmfs");
  ASSERT_NE(up, nullptr);
  testing::WriteFile(dir / "large", RandomBytes(6ull << 20, 4));
  Status put = up->PutBytes("manifest.json", "{}");
  ASSERT_FALSE(put.ok());
  EXPECT_NE(put.message().find("s3://nosuchbucket/ds.mmfs/manifest.json"), std::string::npos)
      << put.ToString();
  EXPECT_NE(put.message().find("NoSuchBucket"), std::string::npos) << put.ToString();
  put = up->PutFile("shard-00000.mdb", dir / "large");
  ASSERT_FALSE(put.ok());
  EXPECT_NE(put.message().find("s3://nosuchbucket/ds.mmfs/shard-00000.mdb"), std::string::npos)
      << put.ToString();
}

TEST_F(S3UploadTest, WritingNeedsCredentials) {
  ::unsetenv("AWS_ACCESS_KEY_ID");
  ::unsetenv("AWS_SECRET_ACCESS_KEY");
  auto up = S3Uploader::Open("s3://bkt/ds.mmfs", options);
  ASSERT_FALSE(up.ok());
  EXPECT_NE(up.status().message().find("needs credentials"), std::string::npos)
      << up.status().ToString();
}

}  // namespace
}  // namespace mmfs::origin
