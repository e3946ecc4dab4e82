// The image checks the packer runs on every JPEG: a bad file is reported as bad, and never
// changes what the checker says about the files after it.

#include <gtest/gtest.h>

#include <string>

#include "tests/test_util.h"
#include "tests/tools/pack_fixture.h"
#include "tools/pack/image_check.h"

namespace mmfs::pack {
namespace {

using testing::MakeJpeg;
using testing::WriteFile;

// A baseline JPEG whose frame header (SOF0: FF C0, length, precision, height, width) claims
// `width` x `height`.
std::string JpegClaiming(int width, int height) {
  std::string jpeg = MakeJpeg(16, 16);
  size_t sof = jpeg.find("\xFF\xC0");
  EXPECT_NE(sof, std::string::npos);
  jpeg[sof + 5] = static_cast<char>(height >> 8);
  jpeg[sof + 6] = static_cast<char>(height & 0xFF);
  jpeg[sof + 7] = static_cast<char>(width >> 8);
  jpeg[sof + 8] = static_cast<char>(width & 0xFF);
  return jpeg;
}

TEST(JpegCheckerTest, ABadHeaderDoesNotPoisonTheFilesAfterIt) {
  std::string bad_marker = MakeJpeg(16, 16);
  bad_marker[5] = 0x01;  // the APP0/DQT length after SOI: a bogus marker length
  const std::pair<const char*, std::string> bad[] = {
      {"65535x65535", JpegClaiming(65535, 65535)},  // over libjpeg's 65500 limit: an error
      {"0 width", JpegClaiming(0, 16)},
      {"bogus marker length", bad_marker},
      {"header cut short", MakeJpeg(16, 16).substr(0, 40)},
  };
  JpegChecker checker;
  for (const auto& [what, bytes] : bad) {
    auto r = checker.Check(bytes);
    EXPECT_FALSE(r.ok()) << what;
    // The same checker, as each packing thread keeps one: the next good files are good.
    for (unsigned seed = 1; seed <= 3; ++seed) {
      auto good = checker.Check(MakeJpeg(24, 8, seed));
      ASSERT_TRUE(good.ok()) << "after " << what << ": " << good.status().ToString();
      EXPECT_EQ(good->width, 24u);
      EXPECT_EQ(good->height, 8u);
    }
  }
}

TEST(JpegCheckerTest, ZeroAndHugeDimensionsAreReportedAsSuch) {
  JpegChecker checker;
  auto huge = checker.Check(JpegClaiming(65535, 65535));
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("bad JPEG header"), std::string::npos)
      << huge.status().message();
  auto bomb = checker.Check(JpegClaiming(20000, 20000));
  ASSERT_FALSE(bomb.ok());
  EXPECT_NE(bomb.status().message().find("decompression bomb"), std::string::npos);
  EXPECT_FALSE(checker.Check(JpegClaiming(0, 16)).ok());
  EXPECT_FALSE(checker.Check("").ok());
}

class OneBadJpegTest : public InputsTest, public ::testing::WithParamInterface<int> {};

// The case: one JPEG with an impossible header, then 100 good ones, --on-bad skip.
TEST_P(OneBadJpegTest, SkipLeavesOutOnlyTheBadOne) {
  WriteFile(tmp_ / "f/0000.jpg", JpegClaiming(65535, 65535));
  WriteFile(tmp_ / "f/0001.jpg", JpegClaiming(0, 16));
  for (int i = 0; i < 100; ++i) {
    WriteFile(tmp_ / ("f/" + std::to_string(1000 + i) + ".jpg"),
              MakeJpeg(8 + i % 5, 8, static_cast<unsigned>(i)));
  }
  PackOptions o;
  o.on_bad = OnBadImage::kSkip;
  o.jobs = GetParam();
  auto s = Pack({tmp_ / "f"}, o);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->bad_images, 2u);
  EXPECT_EQ(s->files, 100u);
  EXPECT_EQ(reporter_.warnings.size(), 2u) << reporter_.warnings.back();
  EXPECT_EQ(Read("0000.jpg"), "<missing>");
  EXPECT_EQ(Read("1099.jpg"), testing::ReadFile(tmp_ / "f/1099.jpg"));
  // --on-bad keep keeps all and warns about the two only.
  reporter_.warnings.clear();
  ds_.reset();
  o.on_bad = OnBadImage::kKeep;
  o.force = true;
  s = Pack({tmp_ / "f"}, o);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->files, 102u);
  EXPECT_EQ(reporter_.warnings.size(), 2u);
}

INSTANTIATE_TEST_SUITE_P(Jobs, OneBadJpegTest, ::testing::Values(1, 2));

}  // namespace
}  // namespace mmfs::pack
