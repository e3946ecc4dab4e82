// mmfs pack http://HOST/shards/{00000..00002}.tar DST against a real web server (nginx): the
// tars a pattern names, fetched once each, give the dataset their local copies give; a pattern
// that names a tar the server does not have, or a name that is not a tar's, fails naming it
// before anything is packed; an escaped name is the file's name.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/nginx_helper.h"
#include "tests/test_util.h"
#include "tests/tools/pack_fixture.h"
#include "tools/pack/bucket_source.h"

namespace mmfs::pack {
namespace {

std::vector<Member> UrlTarMembers(int first, int samples) {
  std::vector<Member> m;
  for (int i = first; i < first + samples; ++i) {
    const std::string k = std::to_string(300000 + i);
    m.push_back({k + ".jpg", testing::MakeJpeg(16, 16, static_cast<unsigned>(i))});
    m.push_back({k + ".txt", "caption " + std::to_string(i)});
  }
  return m;
}

class PackUrlTest : public InputsTest {
 protected:
  void SetUp() override {
    ASSERT_TRUE(web.Start());
    std::filesystem::create_directories(web.www() + "/shards");
    for (int t = 0; t < 3; ++t) {
      tars.push_back(UrlTarMembers(t * 10, 10));
      WriteTar(web.www() + "/shards/0000" + std::to_string(t) + ".tar", tars.back());
    }
    options.remote.retry.total = std::chrono::milliseconds(5000);
  }

  testing::NginxServer web;
  std::vector<std::vector<Member>> tars;
  PackOptions options;
};

TEST_F(PackUrlTest, TheTarsAPatternNamesPackAsTheirLocalCopiesDo) {
  const std::string pattern = web.url() + "/shards/{00000..00002}.tar";
  auto s = Pack({pattern}, options);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->samples, 30u);
  EXPECT_EQ(s->files, 60u);
  for (int t = 0; t < 3; ++t) {
    for (const Member& m : tars[t]) {
      const std::string path = "0000" + std::to_string(t) + "/" + m.name;
      EXPECT_EQ(Read(path), m.data) << path;
    }
  }
  // The manifest names the pattern as given.
  const std::string manifest = testing::ReadFile(tmp_ / "out.mmfs/manifest.json");
  EXPECT_NE(manifest.find("{00000..00002}.tar"), std::string::npos) << manifest;
}

TEST_F(PackUrlTest, AMissingTarOrANameThatIsNoTarFailsNamingIt) {
  auto missing = Pack({web.url() + "/shards/{00000..00003}.tar"}, options);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound) << missing.status().ToString();
  EXPECT_NE(missing.status().message().find("/shards/00003.tar"), std::string::npos)
      << missing.status().ToString();

  auto not_tar = Pack({web.url() + "/shards/{00000..00001}.zip"}, options);
  ASSERT_FALSE(not_tar.ok());
  EXPECT_NE(not_tar.status().message().find("00000.zip"), std::string::npos)
      << not_tar.status().ToString();
  EXPECT_NE(not_tar.status().message().find("tar files"), std::string::npos);

  auto bad_pattern = Pack({web.url() + "/shards/{00000..00001.tar"}, options);
  ASSERT_FALSE(bad_pattern.ok());
  EXPECT_EQ(bad_pattern.status().code(), StatusCode::kInvalidArgument);

  auto bad_escape = Pack({web.url() + "/shards/a%2Fb.tar"}, options);
  ASSERT_FALSE(bad_escape.ok());
  EXPECT_NE(bad_escape.status().message().find("%2F"), std::string::npos)
      << bad_escape.status().ToString();
}

// A name the URL escapes is the file's name, requested as it is escaped (not escaped twice), and
// --endpoint (an S3 store's, for other sources or the destination) leaves a URL's server alone.
TEST_F(PackUrlTest, EscapedNamesAreTheFilesNamesAndEndpointsAreForBuckets) {
  std::filesystem::create_directories(web.www() + "/odd");
  WriteTar(web.www() + "/odd/a b.tar", tars[0]);
  PackOptions with_endpoint = options;
  with_endpoint.remote.endpoint = "http://127.0.0.1:1";  // nothing listens there
  auto s = Pack({web.url() + "/odd/a%20b.tar"}, with_endpoint);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(Read("a b/" + tars[0][0].name), tars[0][0].data);
}

}  // namespace
}  // namespace mmfs::pack
