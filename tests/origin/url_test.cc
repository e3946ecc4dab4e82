// URLs as users type them and as messages show them (fs/origin/url.h), names from a dataset as
// messages show them (fs/origin/printable.h), and the refusals of the origins' factories and S3
// endpoints, each naming its own cause and never a credential.
#include "fs/origin/url.h"

#include <gtest/gtest.h>

#include <string>

#include "fs/origin/printable.h"
#include "fs/origin/s3_location.h"
#include "fs/origin/s3_origin.h"

namespace mmfs::origin {
namespace {

// The message of a failed `result`, "" (and a test failure) if it did not fail.
template <typename T>
std::string Refusal(const Result<T>& result) {
  EXPECT_FALSE(result.ok());
  return result.ok() ? std::string() : result.status().message();
}

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(UrlTest, SchemeIsReadCaseInsensitivelyAndLowerCased) {
  EXPECT_EQ(UrlScheme("HTTP://h/x"), "http");
  EXPECT_EQ(UrlScheme("s3+x.y-z:rest"), "s3+x.y-z");
  EXPECT_EQ(UrlScheme("/data/http://x"), "");
  EXPECT_EQ(UrlScheme("3d:x"), "");
  EXPECT_EQ(UrlScheme("noscheme"), "");
  EXPECT_EQ(*DatasetLocation("HTTP://Host/DS.mmfs"), "http://Host/DS.mmfs");
  EXPECT_EQ(*DatasetLocation("Https://h/ds"), "https://h/ds");
  EXPECT_EQ(*DatasetLocation("S3://bkt/ds"), "s3://bkt/ds");
  // Paths, a colon in a name included, are left as they are.
  for (const char* path : {"/data/ds.mmfs", "rel/ds.mmfs", "data:v1/ds.mmfs", "./http:/h/ds",
                           "/x/ftp://y"}) {
    EXPECT_EQ(*DatasetLocation(path), path);
  }
}

TEST(UrlTest, OtherSchemesAndMissingSlashesAreRefusedNamingThem) {
  EXPECT_EQ(Refusal(DatasetLocation("ftp://h/ds")),
            "ftp://h/ds: mmfs does not read ftp:// URLs (it reads http://, https:// and s3:// "
            "URLs, and local paths)");
  EXPECT_TRUE(Has(Refusal(DatasetLocation("FILE:///data/ds.mmfs")),
                  "mmfs does not read file:// URLs (it reads http://, https:// and s3:// URLs, "
                  "and local paths); for a local dataset give its path: /data/ds.mmfs"));
  EXPECT_EQ(Refusal(DatasetLocation("http:/h/ds")),
            "http:/h/ds: not a URL: 'http:' needs '//' after it (http://HOST/PATH); for a local "
            "folder of this name write ./http:/h/ds");
  EXPECT_TRUE(Has(Refusal(DatasetLocation("s3:bkt/ds")), "'s3:' needs '//' after it "
                                                          "(s3://BUCKET/PATH)"));
  EXPECT_TRUE(Has(Refusal(DatasetLocation("HTTPS:h/ds")), "'https:' needs '//'"));
  // The refusal itself hides a password.
  const std::string ftp = Refusal(DatasetLocation("ftp://u:SECRET@h/ds"));
  EXPECT_FALSE(Has(ftp, "SECRET")) << ftp;
  EXPECT_TRUE(Has(ftp, "ftp://***@h/ds")) << ftp;
}

TEST(UrlTest, RedactHidesTheUserAndPasswordOfAnyUrl) {
  EXPECT_EQ(RedactUrl("http://alice:SECRET@h:80/ds"), "http://***@h:80/ds");
  EXPECT_EQ(RedactUrl("https://alice%40corp:SECRET@h/ds"), "https://***@h/ds");
  EXPECT_EQ(RedactUrl("http://:SECRET@h/ds?x#y"), "http://***@h/ds?x#y");
  EXPECT_EQ(RedactUrl("http://alice@h/ds"), "http://***@h/ds");
  EXPECT_EQ(RedactUrl("HTTP://a:SECRET@h"), "HTTP://***@h");
  EXPECT_EQ(RedactUrl("s3://a:SECRET@bkt/ds"), "s3://***@bkt/ds");
  EXPECT_EQ(RedactUrl("ftp://a:SECRET@h/"), "ftp://***@h/");
  // '@' as the separator percent-encoded: still a credential before it.
  EXPECT_EQ(RedactUrl("http://alice:SECRET%40h/ds"), "http://***%40h/ds");
  // A scheme mmfs reads with its slashes missing: the mistake is named with the text.
  EXPECT_EQ(RedactUrl("http:/alice:SECRET@h/ds"), "http:/***@h/ds");
  EXPECT_EQ(RedactUrl("http:alice:SECRET@h"), "http:***@h");
  // Nothing to hide: an '@' in the path, a query or a fragment; paths and other text.
  for (const char* same : {"http://h/ds@v2", "http://h/ds?u=a@b", "http://h#a@b", "/data/a@b",
                           "data:x@y", "plain", ""}) {
    EXPECT_EQ(RedactUrl(same), same);
  }
}

TEST(PrintableTest, EscapesWhatATerminalWouldActOn) {
  EXPECT_EQ(Printable("a\x1b[31mb\x07\r\n\t\\c\x7f"), "a\\x1b[31mb\\x07\\r\\n\\t\\\\c\\x7f");
  EXPECT_EQ(Printable("caf\xc3\xa9 ok"), "caf\xc3\xa9 ok");  // UTF-8 kept
}

// An endpoint with a query was refused as "not an http:// or https:// URL", as was another
// scheme: each cause is named now, and a path is taken (before the bucket).
TEST(S3EndpointTest, EachRefusalNamesItsCause) {
  const S3Location l{"bkt", "ds"};
  const auto base = [&](const std::string& endpoint) {
    return S3BaseUrl(l, endpoint, "r", S3Addressing::kAuto);
  };
  EXPECT_EQ(*base("http://h:9000/prefix/"), "http://h:9000/prefix/bkt/ds");
  EXPECT_EQ(*base("HTTP://h:9000"), "http://h:9000/bkt/ds");
  EXPECT_TRUE(Has(Refusal(base("garbage")), "endpoint garbage: not a URL (an endpoint is "
                                            "http://HOST[:PORT][/PATH] or https://...)"));
  EXPECT_TRUE(Has(Refusal(base("ftp://h")), "endpoint ftp://h: mmfs speaks http:// and https:// "
                                            "only, not ftp://"));
  EXPECT_TRUE(Has(Refusal(base("http://h/p?x=1")), "endpoint http://h/p?x=1: a query or fragment "
                                                   "('?', '#') is not part of an endpoint"));
  EXPECT_TRUE(Has(Refusal(base("http://h#f")), "a query or fragment"));
  EXPECT_TRUE(Has(Refusal(base("http://")), "no host in the endpoint"));
  EXPECT_TRUE(Has(Refusal(base("http:///p")), "no host in the endpoint"));
  EXPECT_TRUE(Has(Refusal(base("http:h")), "not a URL"));
  for (const char* secret : {"http://u:SECRET@h", "http://u:SECRET@h/?q", "ftp://u:SECRET@h",
                             "http://u%40x:SECRET@h"}) {
    const std::string why = Refusal(base(secret));
    EXPECT_FALSE(Has(why, "SECRET")) << why;
    EXPECT_TRUE(Has(why, "***@")) << why;
  }
  const std::string s3 = Refusal(ParseS3Url("s3://alice:SECRET@bkt/ds"));
  EXPECT_EQ(s3, "s3://***@bkt/ds: a user name or password in an s3:// URL is refused (credentials "
                "come from the AWS settings)");
}

TEST(HttpOriginFactoryTest, RefusalsNameTheirCauseAndNoCredential) {
  EXPECT_TRUE(Has(Refusal(NewHttpOrigin("https://h/ds?x", {})),
                  "https://h/ds?x: a query or fragment ('?', '#') is not part of a dataset's URL"));
  for (const char* secret : {"http://a:SECRET@h/ds", "http://a%40b:SECRET@h/ds",
                             "http://:SECRET@h/ds?x"}) {
    const std::string why = Refusal(NewHttpOrigin(secret, {}));
    EXPECT_FALSE(Has(why, "SECRET")) << why;
    EXPECT_TRUE(Has(why, "a user name or password in the URL is refused")) << why;
  }
  // A CA file for a server that checks no certificate: said, not ignored.
  RemoteOptions with_ca;
  with_ca.ca_file = "/etc/ssl/certs/ca-certificates.crt";
  EXPECT_TRUE(Has(Refusal(NewHttpOrigin("http://h/ds", with_ca)),
                  "--ca-file /etc/ssl/certs/ca-certificates.crt does not apply: http://h/ds is "
                  "plain http://"));
}

}  // namespace
}  // namespace mmfs::origin
