// URL patterns (fs/origin/url_pattern.h): WebDataset-style brace ranges and lists expanded into
// the URLs they name, and the patterns refused.
#include "fs/origin/url_pattern.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace mmfs::origin {
namespace {

using Strings = std::vector<std::string>;

Strings Expand(const std::string& pattern) {
  auto r = ExpandBraceRanges(pattern);
  EXPECT_TRUE(r.ok()) << pattern << ": " << r.status().ToString();
  return r.ok() ? *r : Strings{};
}

TEST(UrlPatternTest, PlainTextIsItself) {
  EXPECT_EQ(Expand("https://host/shards/a.tar"), Strings{"https://host/shards/a.tar"});
  EXPECT_EQ(Expand(""), Strings{""});
  EXPECT_EQ(Expand("s3://b/x..y"), Strings{"s3://b/x..y"});  // ".." outside braces is text
}

TEST(UrlPatternTest, RangesKeepTheirZeroPadding) {
  Strings all = Expand("https://h/{00000..00099}.tar");
  ASSERT_EQ(all.size(), 100u);
  EXPECT_EQ(all.front(), "https://h/00000.tar");
  EXPECT_EQ(all[42], "https://h/00042.tar");
  EXPECT_EQ(all.back(), "https://h/00099.tar");
  // A leading zero on either number pads every number to the wider width, as bash does.
  EXPECT_EQ(Expand("{08..10}"), (Strings{"08", "09", "10"}));
  Strings wide = Expand("{01..100}");
  ASSERT_EQ(wide.size(), 100u);
  EXPECT_EQ(wide[0], "001");
  EXPECT_EQ(wide[98], "099");
  EXPECT_EQ(wide[99], "100");
  EXPECT_EQ(Expand("{1..010}").front(), "001");
  EXPECT_EQ(Expand("{00..3}"), (Strings{"00", "01", "02", "03"}));
  // No leading zero: no padding.
  EXPECT_EQ(Expand("{10..12}"), (Strings{"10", "11", "12"}));
  EXPECT_EQ(Expand("{8..10}"), (Strings{"8", "9", "10"}));
  EXPECT_EQ(Expand("{0..2}"), (Strings{"0", "1", "2"}));
  EXPECT_EQ(Expand("x{7..7}y"), Strings{"x7y"});
}

TEST(UrlPatternTest, SeveralGroupsMakeTheProductLeftmostSlowest) {
  EXPECT_EQ(Expand("s{0..1}/p{00..01}.tar"),
            (Strings{"s0/p00.tar", "s0/p01.tar", "s1/p00.tar", "s1/p01.tar"}));
  EXPECT_EQ(Expand("https://h/{train,val}/{000..001}.tar"),
            (Strings{"https://h/train/000.tar", "https://h/train/001.tar",
                     "https://h/val/000.tar", "https://h/val/001.tar"}));
  EXPECT_EQ(Expand("{a,,b}"), (Strings{"a", "", "b"}));
  EXPECT_EQ(Expand("{0..1}{0..1}{0..1}").size(), 8u);
}

TEST(UrlPatternTest, RefusesBadPatternsNamingThem) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"https://h/{000..009.tar", "never closed"},
      {"https://h/000..009}.tar", "closes no '{'"},
      {"https://h/{0{1..2}}.tar", "another '{' inside"},
      {"https://h/{a..z}.tar", "not a range of decimal numbers"},
      {"https://h/{1..}.tar", "not a range of decimal numbers"},
      {"https://h/{-1..3}.tar", "not a range of decimal numbers"},
      {"https://h/{9..1}.tar", "starts above its end"},
      {"https://h/{shard}.tar", "neither a range"},
      {"https://h/{}.tar", "neither a range"},
      {"https://h/{0..1000000}.tar", "more than the 1000000"},
      {"https://h/{000..999}/{0000..9999}.tar", "more than 1000000 URLs"},
      {"https://h/{0..9999999999999999999}.tar", "too large"},
  };
  for (const auto& [pattern, why] : bad) {
    auto r = ExpandBraceRanges(pattern);
    ASSERT_FALSE(r.ok()) << pattern;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << pattern;
    EXPECT_NE(r.status().message().find(pattern), std::string::npos) << r.status().ToString();
    EXPECT_NE(r.status().message().find(why), std::string::npos) << r.status().ToString();
  }
  // Exactly the limit is allowed.
  auto most = ExpandBraceRanges("{000..999}{000..999}");
  ASSERT_TRUE(most.ok()) << most.status().ToString();
  EXPECT_EQ(most->size(), kMaxPatternUrls);
  EXPECT_EQ(most->back(), "999999");
}

}  // namespace
}  // namespace mmfs::origin
