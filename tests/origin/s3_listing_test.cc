// S3 listings (fs/origin/s3_listing.h): ListObjectsV2 pages parsed with libxml2, paged with
// continuation tokens, retried and refused, first over a scripted fake transport, then against a
// real S3 API server (s3rver, tests/s3rver_helper.h), directly and through a proxy that checks
// each request's SigV4 signature (tests/origin/fault_proxy.py).
#include "fs/origin/s3_listing.h"

#include <gtest/gtest.h>

#include <chrono>
#include <deque>
#include <string>
#include <vector>

#include "tests/fault_proxy_helper.h"
#include "tests/origin/quick_retries.h"
#include "tests/s3rver_helper.h"
#include "tests/test_util.h"

namespace mmfs::origin {
namespace {

using namespace std::chrono_literals;

constexpr const char* kBucketUrl = "http://127.0.0.1:9/bkt";

// A store that answers each request with the next scripted response (a 500 when none is left),
// and keeps the requests.
class ScriptedTransport final : public HttpTransport {
 public:
  HttpResponse Send(const HttpRequest& request) override {
    sent.push_back(request);
    if (answers.empty()) {
      HttpResponse none;
      none.status = 500;
      return none;
    }
    HttpResponse next = answers.front();
    answers.pop_front();
    return next;
  }
  std::deque<HttpResponse> answers;
  std::vector<HttpRequest> sent;
};

// `text` as XML character data.
std::string Escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// A ListBucketResult page, as S3 writes it, holding `objects`; truncated when `next` is given.
std::string PageXml(const std::vector<ListedObject>& objects, const std::string& next = "") {
  std::string xml =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
      "<Name>bkt</Name><Prefix>p/</Prefix><KeyCount>" +
      std::to_string(objects.size()) + "</KeyCount><MaxKeys>1000</MaxKeys>";
  xml += next.empty() ? "<IsTruncated>false</IsTruncated>"
                      : "<IsTruncated>true</IsTruncated><NextContinuationToken>" + Escape(next) +
                            "</NextContinuationToken>";
  for (const ListedObject& o : objects) {
    xml += "<Contents><Key>" + Escape(o.key) + "</Key><LastModified>2024-01-01T00:00:00.000Z"
           "</LastModified><ETag>" + Escape(o.etag) + "</ETag><Size>" + std::to_string(o.size) +
           "</Size><StorageClass>STANDARD</StorageClass></Contents>";
  }
  return xml + "</ListBucketResult>";
}

HttpResponse Ok(std::string body) {
  HttpResponse r;
  r.status = 200;
  r.body = std::move(body);
  return r;
}

HttpResponse S3Error(long status, const std::string& code, const std::string& message) {
  HttpResponse r;
  r.status = status;
  r.error_body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>" + code +
                 "</Code><Message>" + message + "</Message><RequestId>R1</RequestId></Error>";
  return r;
}

TEST(S3ListingTest, FollowsTwoPagesAndSendsTheTokenBackEncoded) {
  ScriptedTransport t;
  // A token as S3 makes them: base64, with '+', '/' and '='.
  t.answers.push_back(Ok(PageXml({{"p/a.tar", 5'000'000'000ull, "\"e1\""},
                                  {"p/b & c.tar", 0, "\"e2-3\""}},
                                 "1a/b+c==")));
  t.answers.push_back(Ok(PageXml({{"p/d.tar", 7, "\"e3\""}})));
  auto all = ListBucket(t, kBucketUrl, "p/", testing::QuickRetries());
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].key, "p/a.tar");
  EXPECT_EQ((*all)[0].size, 5'000'000'000ull);  // past 32 bits
  EXPECT_EQ((*all)[0].etag, "\"e1\"");          // quotes kept
  EXPECT_EQ((*all)[1].key, "p/b & c.tar");      // &amp; decoded
  EXPECT_EQ((*all)[1].size, 0u);
  EXPECT_EQ((*all)[2].key, "p/d.tar");
  ASSERT_EQ(t.sent.size(), 2u);
  // Sorted by name and encoded as SigV4's canonical query string: what libcurl signs as is.
  EXPECT_EQ(t.sent[0].url, std::string(kBucketUrl) + "?list-type=2&max-keys=1000&prefix=p%2F");
  EXPECT_EQ(t.sent[1].url, std::string(kBucketUrl) +
                               "?continuation-token=1a%2Fb%2Bc%3D%3D&list-type=2&max-keys=1000"
                               "&prefix=p%2F");
  EXPECT_EQ(t.sent[0].max_body, ListOptions{}.max_page_bytes);  // a page is bounded
  EXPECT_FALSE(t.sent[0].head);
  EXPECT_FALSE(t.sent[0].range.has_value());
}

TEST(S3ListingTest, FollowsThreePagesInKeyOrder) {
  ScriptedTransport t;
  t.answers.push_back(Ok(PageXml({{"a", 1, ""}, {"b", 2, ""}}, "T1")));
  t.answers.push_back(Ok(PageXml({{"c", 3, ""}, {"d", 4, ""}}, "T 2")));
  t.answers.push_back(Ok(PageXml({{"e", 5, ""}})));
  ListOptions small;
  small.page_size = 2;
  auto all = ListBucket(t, kBucketUrl, "", testing::QuickRetries(), small);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 5u);
  for (size_t i = 0; i < all->size(); ++i) {
    EXPECT_EQ((*all)[i].key, std::string(1, static_cast<char>('a' + i)));
    EXPECT_EQ((*all)[i].size, i + 1);
    EXPECT_EQ((*all)[i].etag, "");  // none sent
  }
  ASSERT_EQ(t.sent.size(), 3u);
  // The whole bucket: no prefix asked for.
  EXPECT_EQ(t.sent[0].url, std::string(kBucketUrl) + "?list-type=2&max-keys=2");
  EXPECT_EQ(t.sent[1].url,
            std::string(kBucketUrl) + "?continuation-token=T1&list-type=2&max-keys=2");
  EXPECT_EQ(t.sent[2].url,
            std::string(kBucketUrl) + "?continuation-token=T%202&list-type=2&max-keys=2");
}

TEST(S3ListingTest, AnErrorNamesTheBucketAndS3sCode) {
  ScriptedTransport t;
  t.answers.push_back(S3Error(403, "AccessDenied", "Access Denied"));
  auto denied = ListBucket(t, kBucketUrl, "p/", testing::QuickRetries(), {}, "s3://bkt/p/");
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.status().code(), StatusCode::kIoError);
  const std::string& m = denied.status().message();
  EXPECT_NE(m.find("s3://bkt/p/"), std::string::npos) << m;
  EXPECT_NE(m.find(std::string(kBucketUrl) + "?list-type=2"), std::string::npos) << m;
  EXPECT_NE(m.find("HTTP 403 AccessDenied: Access Denied"), std::string::npos) << m;
  EXPECT_EQ(t.sent.size(), 1u);  // not retried

  ScriptedTransport missing;
  missing.answers.push_back(S3Error(404, "NoSuchBucket", "The specified bucket does not exist"));
  auto none = ListBucket(missing, kBucketUrl, "", testing::QuickRetries());
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound);
  EXPECT_NE(none.status().message().find("bkt"), std::string::npos);
  EXPECT_NE(none.status().message().find("NoSuchBucket"), std::string::npos)
      << none.status().ToString();

  // A body that is not S3's: the status alone.
  ScriptedTransport plain;
  HttpResponse teapot;
  teapot.status = 418;
  teapot.error_body = "<html>no</html";
  plain.answers.push_back(teapot);
  auto odd = ListBucket(plain, kBucketUrl, "", testing::QuickRetries());
  EXPECT_NE(odd.status().message().find("HTTP 418"), std::string::npos);
}

TEST(S3ListingTest, AMalformedPageIsAClearError) {
  ScriptedTransport t;
  t.answers.push_back(Ok("<ListBucketResult><Contents><Key>a</Key>"));
  auto broken = ListBucket(t, kBucketUrl, "", testing::QuickRetries());
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.status().code(), StatusCode::kIoError);
  EXPECT_NE(broken.status().message().find("listing page 1"), std::string::npos);
  EXPECT_NE(broken.status().message().find("not well-formed XML"), std::string::npos)
      << broken.status().ToString();

  ScriptedTransport html;
  html.answers.push_back(Ok("<html><body>hello</body></html>"));
  auto other = ListBucket(html, kBucketUrl, "", testing::QuickRetries());
  EXPECT_NE(other.status().message().find("<html> instead of a listing"), std::string::npos)
      << other.status().ToString();

  ScriptedTransport size;
  size.answers.push_back(Ok(
      "<ListBucketResult><Contents><Key>k</Key><Size>-3</Size></Contents></ListBucketResult>"));
  auto bad_size = ListBucket(size, kBucketUrl, "", testing::QuickRetries());
  EXPECT_NE(bad_size.status().message().find("k: size '-3' is not a number"), std::string::npos)
      << bad_size.status().ToString();
}

TEST(S3ListingTest, RefusesADtdAndEntities) {
  // The classic entity bomb, small: refused, nothing expanded.
  const std::string bomb =
      "<?xml version=\"1.0\"?><!DOCTYPE l [<!ENTITY a \"aaaaaaaaaa\">"
      "<!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">]>"
      "<ListBucketResult><Contents><Key>&b;</Key><Size>1</Size></Contents></ListBucketResult>";
  auto page = ParseListPage(bomb);
  ASSERT_FALSE(page.ok());
  EXPECT_NE(page.status().message().find("DTD"), std::string::npos) << page.status().ToString();
  // An external entity is neither fetched nor read.
  auto external = ParseListPage(
      "<?xml version=\"1.0\"?><!DOCTYPE l [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>"
      "<ListBucketResult><Contents><Key>&x;</Key><Size>1</Size></Contents></ListBucketResult>");
  EXPECT_FALSE(external.ok());
}

TEST(S3ListingTest, ParsesAPageAndAnErrorDocument) {
  auto page = ParseListPage(PageXml({{"x/1", 10, "\"a\""}}, "NEXT"));
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_TRUE(page->truncated);
  EXPECT_EQ(page->next_token, "NEXT");
  ASSERT_EQ(page->objects.size(), 1u);
  EXPECT_EQ(page->objects[0].etag, "\"a\"");
  EXPECT_EQ(page->objects[0].last_modified_ns, int64_t{1704067200} * 1000000000);
  // A date without its fraction is read; one in no form S3 writes is 0, not an error.
  auto dates = ParseListPage(
      "<ListBucketResult><Contents><Key>a</Key><Size>1</Size><LastModified>"
      "2024-01-01T00:00:01Z</LastModified></Contents><Contents><Key>b</Key><Size>1</Size>"
      "<LastModified>yesterday</LastModified></Contents><Contents><Key>c</Key><Size>1</Size>"
      "<LastModified>2024-01-01T00:00:01.5+01:00</LastModified></Contents></ListBucketResult>");
  ASSERT_TRUE(dates.ok()) << dates.status().ToString();
  ASSERT_EQ(dates->objects.size(), 3u);
  EXPECT_EQ(dates->objects[0].last_modified_ns, int64_t{1704067201} * 1000000000);
  EXPECT_EQ(dates->objects[1].last_modified_ns, 0);
  EXPECT_EQ(dates->objects[2].last_modified_ns, 0);
  auto error = ParseListPage("<Error><Code>SlowDown</Code><Message>Reduce</Message></Error>");
  EXPECT_NE(error.status().message().find("SlowDown: Reduce"), std::string::npos);
  auto no_key = ParseListPage("<ListBucketResult><Contents><Size>1</Size></Contents>"
                              "</ListBucketResult>");
  EXPECT_NE(no_key.status().message().find("without a <Key>"), std::string::npos);
  auto truncated = ParseListPage("<ListBucketResult><IsTruncated>maybe</IsTruncated>"
                                 "</ListBucketResult>");
  EXPECT_FALSE(truncated.ok());
}

TEST(S3ListingTest, A5xxIsRetriedPerThePolicy) {
  ScriptedTransport t;
  HttpResponse busy;
  busy.status = 503;
  HttpResponse refused;
  refused.failure = TransportFailure::kTransient;
  refused.error = "Failed to connect";
  t.answers = {busy, refused, Ok(PageXml({{"k", 1, ""}}))};
  auto all = ListBucket(t, kBucketUrl, "", testing::QuickRetries());
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(all->size(), 1u);
  EXPECT_EQ(t.sent.size(), 3u);
  // Each try has a timeout: what is left of the budget.
  EXPECT_GT(t.sent[0].timeout.count(), 0);
  EXPECT_LE(t.sent[0].timeout, testing::QuickRetries().total);

  // A store that keeps failing: tried within the budget, then the last answer's error.
  ScriptedTransport down;
  for (int i = 0; i < 100000; ++i) down.answers.push_back(busy);
  RetryPolicy brief = testing::QuickRetries();
  brief.total = 100ms;
  const auto start = std::chrono::steady_clock::now();
  auto failed = ListBucket(down, kBucketUrl, "", brief);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("HTTP 503"), std::string::npos);
  EXPECT_GT(down.sent.size(), 1u);

  // A 4xx other than 429 is not retried.
  ScriptedTransport bad;
  HttpResponse four;
  four.status = 400;
  bad.answers = {four, Ok(PageXml({}))};
  EXPECT_FALSE(ListBucket(bad, kBucketUrl, "", testing::QuickRetries()).ok());
  EXPECT_EQ(bad.sent.size(), 1u);
}

TEST(S3ListingTest, RefusesStoresThatPageWrongly) {
  ScriptedTransport cut;
  HttpResponse big = Ok("<ListBucketResult>");
  big.body_cut = true;
  cut.answers.push_back(big);
  EXPECT_EQ(ListBucket(cut, kBucketUrl, "", testing::QuickRetries()).status().code(),
            StatusCode::kResourceExhausted);

  ScriptedTransport no_token;
  no_token.answers.push_back(Ok("<ListBucketResult><IsTruncated>true</IsTruncated>"
                                "</ListBucketResult>"));
  auto endless = ListBucket(no_token, kBucketUrl, "", testing::QuickRetries());
  EXPECT_NE(endless.status().message().find("no NextContinuationToken"), std::string::npos)
      << endless.status().ToString();

  ScriptedTransport loop;
  loop.answers = {Ok(PageXml({{"a", 1, ""}}, "T")), Ok(PageXml({{"b", 1, ""}}, "T"))};
  auto looping = ListBucket(loop, kBucketUrl, "", testing::QuickRetries());
  EXPECT_NE(looping.status().message().find("token it sent before"), std::string::npos)
      << looping.status().ToString();

  ScriptedTransport twice;
  twice.answers = {Ok(PageXml({{"a", 1, ""}}, "T")), Ok(PageXml({{"a", 1, ""}}))};
  EXPECT_NE(ListBucket(twice, kBucketUrl, "", testing::QuickRetries()).status().message().find("'a' twice"),
            std::string::npos);

  ScriptedTransport outside;
  outside.answers = {Ok(PageXml({{"q/a", 1, ""}}))};
  EXPECT_FALSE(ListBucket(outside, kBucketUrl, "p/", testing::QuickRetries()).ok());

  ScriptedTransport unused;
  ListOptions zero;
  zero.page_size = 0;
  EXPECT_EQ(ListBucket(unused, kBucketUrl, "", testing::QuickRetries(), zero).status().code(),
            StatusCode::kInvalidArgument);
  ListOptions over;
  over.page_size = 1001;
  EXPECT_FALSE(ListBucket(unused, kBucketUrl, "", testing::QuickRetries(), over).ok());
  EXPECT_TRUE(unused.sent.empty());
}

TEST(S3ListingTest, RefusesUrlsThatAreNotABucket) {
  AwsSettings aws;
  aws.region = "us-east-1";
  RemoteOptions options;
  options.endpoint = "http://127.0.0.1:9";
  for (const char* bad : {"https://h/p/", "s3://", "s3://Bad_Bucket/p/", "s3://bkt/p?x=1"}) {
    auto r = ListS3Prefix(bad, aws, options);
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

// The bucket's URL for each addressing, beside the dataset's, from the one builder both use.
TEST(S3ListingTest, TheClientAddressesTheBucketAsTheOriginDoes) {
  AwsSettings aws;
  aws.region = "eu-west-1";
  RemoteOptions options;
  auto aws_host = NewS3Client({"bkt", "p/ds"}, aws, options);
  ASSERT_TRUE(aws_host.ok()) << aws_host.status().ToString();
  EXPECT_EQ(aws_host->bucket_url, "https://bkt.s3.eu-west-1.amazonaws.com/");
  EXPECT_EQ(aws_host->base_url, "https://bkt.s3.eu-west-1.amazonaws.com/p/ds");
  ASSERT_NE(aws_host->transport, nullptr);
  auto dotted = NewS3Client({"b.dots", ""}, aws, options);
  ASSERT_TRUE(dotted.ok());
  EXPECT_EQ(dotted->bucket_url, "https://s3.eu-west-1.amazonaws.com/b.dots");
  options.endpoint = "http://127.0.0.1:9/base/";
  auto path_style = NewS3Client({"bkt", ""}, aws, options);
  ASSERT_TRUE(path_style.ok());
  EXPECT_EQ(path_style->bucket_url, "http://127.0.0.1:9/base/bkt");

  EXPECT_EQ(ParseS3Prefix("s3://bkt")->key, "");
  EXPECT_EQ(ParseS3Prefix("s3://bkt/")->key, "");
  EXPECT_EQ(ParseS3Prefix("s3://bkt/a/b/")->key, "a/b");
  EXPECT_FALSE(ParseS3Url("s3://bkt/").ok());  // a dataset is never a whole bucket
  EXPECT_EQ(EncodeQueryValue("a/b c+=~_.-"), "a%2Fb%20c%2B%3D~_.-");
}

// Against s3rver: objects under the prefix, page after page (max-keys 2), and nothing else.
class S3ListingS3rverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(s3.installed()) << s3.NotInstalled();
    ASSERT_TRUE(s3.Start()) << s3.Log();
    for (const auto& [key, size] : objects) {
      const std::string file = dir / "object";
      testing::WriteFile(file, std::string(size, 'x'));
      ASSERT_EQ(s3.Put("bkt", key, file), 200) << key << "\n" << s3.Log();
    }
    aws.region = "us-east-1";
    aws.access_key = testing::kS3rverKey;
    aws.secret_key = testing::kS3rverSecret;
    options.endpoint = s3.url();
    // Room for a slow first answer from node (a sanitizer build, a loaded machine).
    options.retry.total = std::chrono::milliseconds(10000);
    paged.page_size = 2;
  }
  // The keys under "data/", in order, with their sizes.
  std::vector<std::pair<std::string, uint64_t>> Under() const {
    std::vector<std::pair<std::string, uint64_t>> out;
    for (const auto& [key, size] : objects) {
      if (key.rfind("data/", 0) == 0) out.emplace_back(key, size);
    }
    return out;
  }
  static std::vector<std::pair<std::string, uint64_t>> Keys(
      const std::vector<ListedObject>& listed) {
    std::vector<std::pair<std::string, uint64_t>> out;
    for (const ListedObject& o : listed) out.emplace_back(o.key, o.size);
    return out;
  }

  testing::S3rverServer s3{"bkt"};
  testing::TempDir dir;
  AwsSettings aws;
  RemoteOptions options;
  ListOptions paged;
  // In key order; five under "data/", three beside it that share its first letters. (Not
  // "data-old/": s3rver walks its directories in an order where that key comes after "data/..."
  // although it sorts before, and so drops it from a listing that resumes after a token.)
  const std::vector<std::pair<std::string, uint64_t>> objects = {
      {"data/00000.tar", 1000}, {"data/00001.tar", 0},    {"data/00002.tar", 4096},
      {"data/sub/00003.tar", 17}, {"data/z.json", 2},    {"data_old/00000.tar", 3},
      {"datafile", 5},            {"other/00000.tar", 9}};
};

TEST_F(S3ListingS3rverTest, ListsThePrefixPageAfterPage) {
  auto listed = ListS3Prefix("s3://bkt/data/", aws, options, paged);
  ASSERT_TRUE(listed.ok()) << listed.status().ToString() << s3.Log();
  EXPECT_EQ(Keys(*listed), Under());
  for (const ListedObject& o : *listed) {
    EXPECT_EQ(o.etag.substr(0, 1), "\"") << o.key << " " << o.etag;  // quotes kept
  }
  // The prefix is a directory, with or without its '/'.
  auto bare = ListS3Prefix("s3://bkt/data", aws, options, paged);
  ASSERT_TRUE(bare.ok()) << bare.status().ToString();
  EXPECT_EQ(Keys(*bare), Under());
  // In one page as well as in three.
  auto whole_pages = ListS3Prefix("s3://bkt/data/", aws, options);
  ASSERT_TRUE(whole_pages.ok()) << whole_pages.status().ToString();
  EXPECT_EQ(Keys(*whole_pages), Under());
}

TEST_F(S3ListingS3rverTest, ListsTheWholeBucket) {
  for (const char* url : {"s3://bkt/", "s3://bkt"}) {
    auto listed = ListS3Prefix(url, aws, options, paged);
    ASSERT_TRUE(listed.ok()) << url << ": " << listed.status().ToString();
    EXPECT_EQ(Keys(*listed), objects) << url;
  }
  auto empty = ListS3Prefix("s3://bkt/nothing/", aws, options, paged);
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_TRUE(empty->empty());
}

TEST_F(S3ListingS3rverTest, AMissingBucketIsNamed) {
  auto missing = ListS3Prefix("s3://no-such-bucket/data/", aws, options);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound) << missing.status().ToString();
  EXPECT_NE(missing.status().message().find("s3://no-such-bucket/data/"), std::string::npos);
  EXPECT_NE(missing.status().message().find("NoSuchBucket"), std::string::npos)
      << missing.status().ToString();
}

// Through the proxy that checks signatures as S3 does: every page, continuation tokens
// included, is signed right (the query as sent is its canonical form), and a wrong secret is
// refused with S3's code.
TEST_F(S3ListingS3rverTest, EveryPageIsSignedRight) {
  testing::FaultProxy proxy(
      s3.url(), {"--sigv4-key", testing::kS3rverKey, "--sigv4-secret", testing::kS3rverSecret});
  ASSERT_TRUE(proxy.Start()) << proxy.Log();
  RemoteOptions via_proxy = options;
  via_proxy.endpoint = proxy.url();
  auto listed = ListS3Prefix("s3://bkt/data/", aws, via_proxy, paged);
  ASSERT_TRUE(listed.ok()) << listed.status().ToString() << proxy.Log();
  EXPECT_EQ(Keys(*listed), Under());
  nlohmann::json stats = proxy.Stats();
  EXPECT_EQ(stats["refused"], 0) << stats.dump();
  EXPECT_EQ(stats["requests"].get<int>(), 3) << stats.dump();  // 5 keys, 2 a page

  AwsSettings wrong = aws;
  wrong.secret_key = "WRONG";
  auto refused = ListS3Prefix("s3://bkt/data/", wrong, via_proxy, paged);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("HTTP 403"), std::string::npos)
      << refused.status().ToString();
}

}  // namespace
}  // namespace mmfs::origin
