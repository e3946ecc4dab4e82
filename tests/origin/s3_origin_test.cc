// The S3 origin (fs/origin/s3_origin.h) and what it is made from: s3:// URLs and endpoints
// (fs/origin/s3_location.h), the AWS settings from the environment and the profile files
// (fs/origin/aws_config.h), and reads signed with SigV4 from a real S3 API server (s3rver,
// tests/s3rver_helper.h) on 127.0.0.1 that the test starts, directly and through a proxy that
// checks the signatures (tests/origin/fault_proxy.py).
#include "fs/origin/s3_origin.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <optional>
#include <string>

#include "tests/fault_proxy_helper.h"
#include "tests/s3rver_helper.h"
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
  // A key is percent-encoded step by step; an endpoint carrying credentials is refused.
  EXPECT_EQ(*S3BaseUrl({"bkt", "my sets/ds+1%"}, "http://h:9", "r", S3Addressing::kAuto),
            "http://h:9/bkt/my%20sets/ds%2B1%25");
  auto userinfo = S3BaseUrl(l, "https://user:secret@h", "r", S3Addressing::kAuto);
  EXPECT_EQ(userinfo.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(userinfo.status().message().find("secret"), std::string::npos);
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

constexpr uint32_t kS3ShardMagic = 0xBEEFC0DE;

class S3OriginS3rverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(s3.installed()) << s3.NotInstalled();
    ASSERT_TRUE(s3.Start()) << s3.Log();
    shard.assign(70000, 'q');
    for (size_t i = 0; i < shard.size(); ++i) shard[i] = static_cast<char>(i * 7);
    std::memcpy(shard.data() + 16, &kS3ShardMagic, sizeof kS3ShardMagic);
    testing::WriteFile(dir / "shard-0.mdb", shard);
    ASSERT_EQ(s3.Put("bkt", "p/ds.mmfs/shard-0.mdb", dir / "shard-0.mdb"), 200) << s3.Log();
    aws.region = "us-east-1";
    aws.access_key = testing::kS3rverKey;
    aws.secret_key = testing::kS3rverSecret;
    options.endpoint = s3.url();
    options.retry.total = std::chrono::milliseconds(500);
  }
  TreeSpec Spec() const {
    TreeSpec spec;
    spec.shards.push_back({"shard-0.mdb", shard.size()});
    spec.magic_offset = 16;
    spec.magic = kS3ShardMagic;
    return spec;
  }
  // The tree added through an origin with `settings` and `opts`: its status.
  Status AddWith(const AwsSettings& settings, const RemoteOptions& opts) {
    auto o = NewS3Origin("s3://bkt/p/ds.mmfs", settings, opts);
    if (!o.ok()) return o.status();
    return (*o)->AddTree(kDatasetTree, Spec());
  }
  testing::S3rverServer s3{"bkt"};
  testing::TempDir dir;
  std::string shard;
  AwsSettings aws;
  RemoteOptions options;
};

TEST_F(S3OriginS3rverTest, ReadsSignedRangesFromTheBucket) {
  auto o = NewS3Origin("s3://bkt/p/ds.mmfs", aws, options);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ((*o)->base_url(), s3.url() + "/bkt/p/ds.mmfs");
  Status added = (*o)->AddTree(kDatasetTree, Spec());
  ASSERT_TRUE(added.ok()) << added.ToString();
  auto bytes = (*o)->ReadSpan({0, 0}, 65000, 5000);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_EQ(std::string(bytes->data(), bytes->size()), shard.substr(65000, 5000));
}

// What the helper's comment says s3rver checks, pinned: a key it does not know is refused, a
// request without x-amz-content-sha256 too, but a wrong secret is not (SigV4 signatures are not
// verified), so the signature tests go through the checking proxy below.
TEST_F(S3OriginS3rverTest, S3rverChecksTheKeyButNotTheSignature) {
  const std::string object = s3.url() + "/bkt/p/ds.mmfs/shard-0.mdb";
  EXPECT_EQ(
      testing::CurlStatus(testing::SigV4Args(testing::kS3rverKey, testing::kS3rverSecret), object),
      200);
  EXPECT_EQ(testing::CurlStatus(testing::SigV4Args("NOBODY", testing::kS3rverSecret), object), 403);
  EXPECT_EQ(
      testing::CurlStatus({"--aws-sigv4", "aws:amz:us-east-1:s3", "-u", "S3RVER:S3RVER"}, object),
      400);
  EXPECT_EQ(testing::CurlStatus(testing::SigV4Args(testing::kS3rverKey, "WRONG"), object), 200)
      << "s3rver now checks SigV4 signatures: update tests/s3rver_helper.h's comment";

  AwsSettings unknown = aws;
  unknown.access_key = "NOBODY";
  Status refused = AddWith(unknown, options);
  EXPECT_NE(refused.message().find("HTTP 403"), std::string::npos) << refused.ToString();
}

// Through tests/origin/fault_proxy.py, which checks each signature as S3 does: the origin's
// requests (SigV4 by libcurl, x-amz-content-sha256 included) pass; a wrong secret and no
// signature at all are refused.
TEST_F(S3OriginS3rverTest, SignaturesPassACheckingProxyAndWrongOnesAreRefused) {
  testing::FaultProxy proxy(
      s3.url(), {"--sigv4-key", testing::kS3rverKey, "--sigv4-secret", testing::kS3rverSecret});
  ASSERT_TRUE(proxy.Start()) << proxy.Log();
  RemoteOptions via_proxy = options;
  via_proxy.endpoint = proxy.url();

  auto o = NewS3Origin("s3://bkt/p/ds.mmfs", aws, via_proxy);
  ASSERT_TRUE(o.ok());
  Status added = (*o)->AddTree(kDatasetTree, Spec());
  ASSERT_TRUE(added.ok()) << added.ToString();
  auto bytes = (*o)->ReadSpan({0, 0}, 100, 30000);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_EQ(std::string(bytes->data(), bytes->size()), shard.substr(100, 30000));
  nlohmann::json stats = proxy.Stats();
  EXPECT_EQ(stats["refused"], 0) << stats.dump();
  EXPECT_EQ(stats["requests"].get<int>(), 2) << stats.dump();  // the shard check, the read

  AwsSettings wrong = aws;
  wrong.secret_key = "WRONG";
  Status refused = AddWith(wrong, via_proxy);
  EXPECT_NE(refused.message().find("HTTP 403"), std::string::npos) << refused.ToString();
  AwsSettings anonymous = aws;
  anonymous.access_key.clear();
  anonymous.secret_key.clear();
  Status unsigned_refused = AddWith(anonymous, via_proxy);
  EXPECT_NE(unsigned_refused.message().find("HTTP 403"), std::string::npos)
      << unsigned_refused.ToString();
  EXPECT_EQ(proxy.Stats()["refused"], 2);
}

TEST_F(S3OriginS3rverTest, AnObjectReplacedUnderTheMountIsAnError) {
  auto o = NewS3Origin("s3://bkt/p/ds.mmfs", aws, options);
  ASSERT_TRUE(o.ok());
  ASSERT_TRUE((*o)->AddTree(kDatasetTree, Spec()).ok());
  std::string other = shard;
  other[100] ^= 1;
  testing::WriteFile(dir / "other.mdb", other);
  // s3rver ignores If-Match: the new ETag in the answer is what tells.
  ASSERT_EQ(s3.Put("bkt", "p/ds.mmfs/shard-0.mdb", dir / "other.mdb"), 200);
  auto read = (*o)->ReadSpan({0, 0}, 0, 200);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("shard-0.mdb: replaced under a running mount"),
            std::string::npos)
      << read.status().ToString();
}

// The server goes away and comes back on the same port: reads fail while it is down (after the
// retry budget), and succeed again afterwards on the same origin (nothing is sticky).
TEST_F(S3OriginS3rverTest, AServerThatComesBackIsReadAgain) {
  auto o = NewS3Origin("s3://bkt/p/ds.mmfs", aws, options);
  ASSERT_TRUE(o.ok());
  ASSERT_TRUE((*o)->AddTree(kDatasetTree, Spec()).ok());
  s3.Stop();
  auto down = (*o)->ReadSpan({0, 0}, 0, 1000);
  ASSERT_FALSE(down.ok());
  EXPECT_EQ(down.status().code(), StatusCode::kIoError) << down.status().ToString();
  ASSERT_TRUE(s3.Start()) << s3.Log();
  auto back = (*o)->ReadSpan({0, 0}, 1000, 1000);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(std::string(back->data(), back->size()), shard.substr(1000, 1000));
}

TEST(HttpOriginFactoryTest, TakesOnlyHttpUrls) {
  EXPECT_TRUE(NewHttpOrigin("https://h/ds.mmfs", {}).ok());
  EXPECT_FALSE(NewHttpOrigin("s3://bkt/ds", {}).ok());
  EXPECT_FALSE(NewHttpOrigin("https://h/ds?x", {}).ok());
}

}  // namespace
}  // namespace mmfs::origin
