// The S3 origin (fs/origin/s3_origin.h) and what it is made from: s3:// URLs and endpoints
// (fs/origin/s3_location.h), the AWS settings from the environment and the profile files
// (fs/origin/aws_config.h), and reads signed with SigV4 from a real S3 API server (moto) on
// 127.0.0.1 that the test starts.
#include "fs/origin/s3_origin.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <optional>
#include <string>

#include "tests/moto_helper.h"
#include "tests/test_util.h"

namespace mmfs::origin {
namespace {

TEST(S3LocationTest, ParsesBucketAndKey) {
  auto l = ParseS3Url("s3://my-bucket/a/b/ds.mmfs/");
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(l->bucket, "my-bucket");
  EXPECT_EQ(l->key, "a/b/ds.mmfs");
  EXPECT_EQ(ParseS3Url("s3://b.with.dots//ds")->key, "ds");
  EXPECT_TRUE(IsS3Url("s3://x"));
  EXPECT_FALSE(IsS3Url("/data/s3://x"));
  EXPECT_TRUE(IsHttpUrl("https://h/x"));
  EXPECT_FALSE(IsHttpUrl("httpsx://h"));
}

TEST(S3LocationTest, RefusesBadUrls) {
  for (const char* bad : {"http://bucket/ds", "s3://", "s3://bucket", "s3://bucket/", "s3://ab/ds",
                          "s3://Upper/ds", "s3://-bucket/ds", "s3://bucket-/ds", "s3://a..b/ds",
                          "s3://bu_cket/ds", "s3://bucket/ds?x=1"}) {
    auto l = ParseS3Url(bad);
    EXPECT_FALSE(l.ok()) << bad;
    if (!l.ok()) {
      EXPECT_EQ(l.status().code(), StatusCode::kInvalidArgument) << bad;
    }
  }
  EXPECT_FALSE(ParseS3Url("s3://" + std::string(64, 'a') + "/ds").ok());
}

TEST(S3LocationTest, AddressesPathStyleOrVirtualHosted) {
  S3Location l{"bkt", "p/ds.mmfs"};
  EXPECT_EQ(*S3BaseUrl(l, "http://127.0.0.1:9000/", "us-east-1", S3Addressing::kAuto),
            "http://127.0.0.1:9000/bkt/p/ds.mmfs");
  EXPECT_EQ(*S3BaseUrl(l, "https://store.example", "r", S3Addressing::kVirtualHosted),
            "https://bkt.store.example/p/ds.mmfs");
  EXPECT_EQ(*S3BaseUrl(l, "", "eu-west-1", S3Addressing::kAuto),
            "https://bkt.s3.eu-west-1.amazonaws.com/p/ds.mmfs");
  EXPECT_EQ(*S3BaseUrl({"b.dots", "ds"}, "", "eu-west-1", S3Addressing::kAuto),
            "https://s3.eu-west-1.amazonaws.com/b.dots/ds");
  EXPECT_EQ(*S3BaseUrl(l, "", "us-east-1", S3Addressing::kPathStyle),
            "https://s3.us-east-1.amazonaws.com/bkt/p/ds.mmfs");
  EXPECT_FALSE(S3BaseUrl(l, "ftp://h", "r", S3Addressing::kAuto).ok());
  EXPECT_FALSE(S3BaseUrl(l, "http://", "r", S3Addressing::kAuto).ok());
  EXPECT_FALSE(S3BaseUrl(l, "http://h/base", "r", S3Addressing::kVirtualHosted).ok());
}

TEST(IniTest, ParsesTheAwsFiles) {
  auto ini = ParseIni(
      "# comment\n[default]\naws_access_key_id = AK\r\n; other\n"
      "AWS_Secret_Access_Key=SK = with equals\n\n[profile dev]\nregion=eu-west-3\n"
      "s3 =\n  addressing_style = path\n  max_concurrent_requests = 4\nregion2 = x\n",
      "config");
  ASSERT_TRUE(ini.ok()) << ini.status().ToString();
  EXPECT_EQ((*ini)["default"]["aws_access_key_id"], "AK");
  EXPECT_EQ((*ini)["default"]["aws_secret_access_key"], "SK = with equals");
  EXPECT_EQ((*ini)["profile dev"]["region"], "eu-west-3");
  EXPECT_EQ((*ini)["profile dev"].count("addressing_style"), 0u);  // nested under "s3 ="
  EXPECT_EQ((*ini)["profile dev"]["region2"], "x");

  auto no_section = ParseIni("key = v\n", "f");
  EXPECT_EQ(no_section.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(no_section.status().message().find("f:1"), std::string::npos);
  auto bad_line = ParseIni("[a]\nx = 1\njust words\n", "f");
  EXPECT_NE(bad_line.status().message().find("f:3"), std::string::npos);
  EXPECT_FALSE(ParseIni("[open\n", "f").ok());
}

// AwsSources over a map of variables and a map of files.
struct FakeSources {
  std::map<std::string, std::string> env, files;
  AwsSources Get() const {
    AwsSources s;
    s.env = [this](const std::string& v) -> std::optional<std::string> {
      auto it = env.find(v);
      if (it == env.end()) return std::nullopt;
      return it->second;
    };
    s.read_file = [this](const std::string& p) -> Result<std::optional<std::string>> {
      auto it = files.find(p);
      if (it == files.end()) return std::optional<std::string>();
      return std::optional<std::string>(it->second);
    };
    return s;
  }
};

TEST(AwsSettingsTest, EnvironmentFirstThenProfileThenDefaults) {
  FakeSources src;
  src.env["HOME"] = "/h";
  auto none = LoadAwsSettings(src.Get());
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_credentials());
  EXPECT_EQ(none->region, "us-east-1");
  EXPECT_EQ(none->profile, "default");

  src.files["/h/.aws/credentials"] =
      "[default]\naws_access_key_id=FILEAK\naws_secret_access_key=FILESK\n"
      "[dev]\naws_access_key_id=DEVAK\naws_secret_access_key=DEVSK\naws_session_token=TOK\n";
  src.files["/h/.aws/config"] =
      "[default]\nregion=eu-north-1\n[profile dev]\nregion=ap-south-1\n"
      "endpoint_url = http://127.0.0.1:9\n";
  auto def = LoadAwsSettings(src.Get());
  EXPECT_EQ(def->access_key, "FILEAK");
  EXPECT_EQ(def->region, "eu-north-1");
  EXPECT_EQ(def->endpoint, "");

  src.env["AWS_PROFILE"] = "dev";
  auto dev = LoadAwsSettings(src.Get());
  ASSERT_TRUE(dev.ok());
  EXPECT_EQ(dev->access_key, "DEVAK");
  EXPECT_EQ(dev->session_token, "TOK");
  EXPECT_EQ(dev->region, "ap-south-1");
  EXPECT_EQ(dev->endpoint, "http://127.0.0.1:9");

  src.env["AWS_ACCESS_KEY_ID"] = "ENVAK";  // without its secret: the profile's pair stays
  EXPECT_EQ(LoadAwsSettings(src.Get())->access_key, "DEVAK");
  src.env["AWS_SECRET_ACCESS_KEY"] = "ENVSK";
  src.env["AWS_DEFAULT_REGION"] = "sa-east-1";
  src.env["AWS_ENDPOINT_URL"] = "http://127.0.0.1:10";
  auto env = LoadAwsSettings(src.Get());
  EXPECT_EQ(env->access_key, "ENVAK");
  EXPECT_EQ(env->secret_key, "ENVSK");
  EXPECT_EQ(env->session_token, "");  // not the profile's token with the environment's keys
  EXPECT_EQ(env->region, "sa-east-1");
  EXPECT_EQ(env->endpoint, "http://127.0.0.1:10");
  src.env["AWS_REGION"] = "us-west-2";
  EXPECT_EQ(LoadAwsSettings(src.Get())->region, "us-west-2");
}

TEST(AwsSettingsTest, FilesFromTheirVariablesAndAMissingProfileIsAnError) {
  FakeSources src;
  src.env["AWS_SHARED_CREDENTIALS_FILE"] = "/c";
  src.env["AWS_CONFIG_FILE"] = "/g";
  src.files["/c"] = "[default]\naws_access_key_id=A\naws_secret_access_key=S\n";
  src.files["/g"] = "[default]\nregion = eu-central-1\n";
  auto s = LoadAwsSettings(src.Get());
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->access_key, "A");
  EXPECT_EQ(s->region, "eu-central-1");
  src.env["AWS_PROFILE"] = "missing";
  auto missing = LoadAwsSettings(src.Get());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  // The error names the profile and the files, never a key.
  EXPECT_NE(missing.status().message().find("'missing'"), std::string::npos);
  src.env.erase("AWS_PROFILE");
  src.files["/g"] = "region = x\n";
  EXPECT_EQ(LoadAwsSettings(src.Get()).status().code(), StatusCode::kInvalidArgument);
}

constexpr uint32_t kMagic = 0xBEEFC0DE;

class S3OriginMotoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!moto.installed()) GTEST_SKIP() << "no moto_server on PATH";
    ASSERT_TRUE(moto.Start()) << moto.Log();
    shard.assign(70000, 'q');
    for (size_t i = 0; i < shard.size(); ++i) shard[i] = static_cast<char>(i * 7);
    std::memcpy(shard.data() + 16, &kMagic, sizeof kMagic);
    testing::WriteFile(dir / "shard-0.mdb", shard);
    ASSERT_EQ(moto.Put("bkt", "", "", "AKID", "SECRET"), 200) << moto.Log();
    ASSERT_EQ(moto.Put("bkt", "p/ds.mmfs/shard-0.mdb", dir / "shard-0.mdb", "AKID", "SECRET"), 200)
        << moto.Log();
    aws.region = "us-east-1";
    aws.access_key = "AKID";
    aws.secret_key = "SECRET";
    options.endpoint = moto.url();
    options.retry.total = std::chrono::milliseconds(500);
  }
  TreeSpec Spec() const {
    TreeSpec spec;
    spec.shards.push_back({"shard-0.mdb", shard.size()});
    spec.magic_offset = 16;
    spec.magic = kMagic;
    return spec;
  }
  testing::MotoServer moto;
  testing::TempDir dir;
  std::string shard;
  AwsSettings aws;
  RemoteOptions options;
};

TEST_F(S3OriginMotoTest, ReadsSignedRangesFromTheBucket) {
  auto o = NewS3Origin("s3://bkt/p/ds.mmfs", aws, options);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ((*o)->base_url(), moto.url() + "/bkt/p/ds.mmfs");
  Status added = (*o)->AddTree(kDatasetTree, Spec());
  ASSERT_TRUE(added.ok()) << added.ToString();
  auto bytes = (*o)->ReadSpan({0, 0}, 65000, 5000);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_EQ(std::string(bytes->data(), bytes->size()), shard.substr(65000, 5000));
}

TEST_F(S3OriginMotoTest, UnsignedRequestsAreRefusedByThePrivateBucket) {
  AwsSettings anonymous = aws;
  anonymous.access_key.clear();
  anonymous.secret_key.clear();
  auto o = NewS3Origin("s3://bkt/p/ds.mmfs", anonymous, options);
  ASSERT_TRUE(o.ok());
  Status added = (*o)->AddTree(kDatasetTree, Spec());
  EXPECT_FALSE(added.ok());
  EXPECT_NE(added.message().find("HTTP 403"), std::string::npos) << added.ToString();
}

TEST_F(S3OriginMotoTest, AnObjectReplacedUnderTheMountIsAnError) {
  auto o = NewS3Origin("s3://bkt/p/ds.mmfs", aws, options);
  ASSERT_TRUE(o.ok());
  ASSERT_TRUE((*o)->AddTree(kDatasetTree, Spec()).ok());
  std::string other = shard;
  other[100] ^= 1;
  testing::WriteFile(dir / "other.mdb", other);
  ASSERT_EQ(moto.Put("bkt", "p/ds.mmfs/shard-0.mdb", dir / "other.mdb", "AKID", "SECRET"), 200);
  auto read = (*o)->ReadSpan({0, 0}, 0, 200);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("shard-0.mdb: replaced under a running mount"),
            std::string::npos)
      << read.status().ToString();
}

TEST(HttpOriginFactoryTest, TakesOnlyHttpUrls) {
  EXPECT_TRUE(NewHttpOrigin("https://h/ds.mmfs", {}).ok());
  EXPECT_FALSE(NewHttpOrigin("s3://bkt/ds", {}).ok());
  EXPECT_FALSE(NewHttpOrigin("https://h/ds?x", {}).ok());
}

}  // namespace
}  // namespace mmfs::origin
