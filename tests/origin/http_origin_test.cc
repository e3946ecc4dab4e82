// The remote origin (fs/origin/http_origin.h): its retries (RetryPolicy), its checks when a tree
// is added, ETag pinning, and its counters, first over a fake transport, then over libcurl
// (fs/origin/curl_transport.h) against a real nginx on 127.0.0.1 that the test starts, stops
// and starts again.
#include "fs/origin/http_origin.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <utime.h>

#include <chrono>
#include <cstring>
#include <deque>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "fs/origin/curl_transport.h"
#include "fs/origin/failed_ranges.h"
#include "fs/origin/read_deadline.h"
#include "fs/origin/remote_stats.h"
#include "fs/origin/retry_policy.h"
#include "tests/nginx_helper.h"
#include "tests/origin/quick_retries.h"
#include "tests/test_util.h"

namespace mmfs::origin {
namespace {

using namespace std::chrono_literals;

constexpr uint32_t kMagic = 0xBEEFC0DE;

// A shard: `size` bytes, kMagic at offset 16, the rest a pattern of its offset.
std::string ShardBytes(size_t size, char salt = 0) {
  std::string s(size, '\0');
  for (size_t i = 0; i < size; ++i) s[i] = static_cast<char>((i * 131 + salt) & 0xff);
  if (size >= 20) std::memcpy(s.data() + 16, &kMagic, sizeof kMagic);
  return s;
}

TreeSpec Spec(const std::vector<std::pair<std::string, uint64_t>>& shards) {
  TreeSpec spec;
  for (const auto& [name, size] : shards) spec.shards.push_back({name, size});
  spec.magic_offset = 16;
  spec.magic = kMagic;
  return spec;
}

// An object store in memory that answers as nginx does (HEAD, ranged GET, If-Match), with
// failures queued per request.
class FakeTransport final : public HttpTransport {
 public:
  struct Object {
    std::string bytes;
    std::string etag;
  };
  HttpResponse Send(const HttpRequest& r) override {
    std::lock_guard<std::mutex> lock(mu);
    sent.push_back(r);
    if (!failures.empty()) {
      HttpResponse f = failures.front();
      failures.pop_front();
      return f;
    }
    HttpResponse out;
    auto it = objects.find(r.url);
    if (it == objects.end()) {
      out.status = 404;
      return out;
    }
    const Object& o = it->second;
    out.etag = o.etag;
    if (!r.if_match.empty() && r.if_match != o.etag) {
      out.status = 412;
      return out;
    }
    if (r.head) {
      out.status = 200;
      out.content_length = o.bytes.size();
      return out;
    }
    if (!r.range) {
      out.status = 200;
      out.body = o.bytes;
      return out;
    }
    out.object_size = o.bytes.size();
    if (r.range->first >= o.bytes.size()) {
      out.status = 416;
      return out;
    }
    out.status = 206;
    out.body = o.bytes.substr(r.range->first, r.range->second - r.range->first + 1);
    out.range = std::make_pair(r.range->first, r.range->first + out.body.size() - 1);
    return out;
  }
  std::mutex mu;
  std::map<std::string, Object> objects;
  std::deque<HttpResponse> failures;
  std::vector<HttpRequest> sent;
};

HttpResponse Status503() {
  HttpResponse r;
  r.status = 503;
  return r;
}
HttpResponse Refused() {
  HttpResponse r;
  r.failure = TransportFailure::kTransient;
  r.error = "Failed to connect";
  return r;
}

TEST(RetryPolicyTest, DelayGrowsExponentiallyWithinTheCap) {
  RetryPolicy p;
  p.initial_delay = 100ms;
  p.max_delay = 1000ms;
  const uint64_t top = std::numeric_limits<uint64_t>::max();
  EXPECT_EQ(p.Delay(0, 0), 0ms);
  // The largest random value lands at the ceiling of each attempt's window (modulo ceiling+1).
  EXPECT_LE(p.Delay(0, top), 100ms);
  EXPECT_EQ(p.Delay(0, 100), 100ms);
  EXPECT_EQ(p.Delay(1, 200), 200ms);
  EXPECT_EQ(p.Delay(2, 400), 400ms);
  EXPECT_EQ(p.Delay(3, 800), 800ms);
  EXPECT_EQ(p.Delay(3, 801), 0ms);       // the window is [0, 800]
  EXPECT_EQ(p.Delay(4, 1000), 1000ms);   // 1600 would be the window: capped at 1000 from here
  EXPECT_EQ(p.Delay(60, 1000), 1000ms);  // no overflow for a large attempt
  for (uint64_t r = 0; r < 5000; r += 7) EXPECT_LE(p.Delay(10, r), 1000ms);
}

TEST(RetryPolicyTest, RetriesTransientFailures5xxAnd429Only) {
  HttpResponse r;
  for (long status : {500L, 502L, 503L, 504L, 429L}) {
    r.status = status;
    EXPECT_TRUE(IsRetryable(r)) << status;
  }
  for (long status : {200L, 206L, 400L, 403L, 404L, 412L, 416L}) {
    r.status = status;
    EXPECT_FALSE(IsRetryable(r)) << status;
  }
  EXPECT_TRUE(IsRetryable(Refused()));
  HttpResponse bad;
  bad.failure = TransportFailure::kPermanent;
  EXPECT_FALSE(IsRetryable(bad));
}

TEST(RemoteStatsTest, PercentilesComeFromTheBuckets) {
  RemoteStats stats;
  EXPECT_EQ(stats.Snapshot().LatencyPercentileUs(50), 0u);
  for (int i = 0; i < 90; ++i) stats.NoteRequest(100us, 10);
  for (int i = 0; i < 10; ++i) stats.NoteRequest(3ms, 0);
  stats.NoteRetry();
  stats.NoteError();
  RemoteStatsSnapshot s = stats.Snapshot();
  EXPECT_EQ(s.requests, 100u);
  EXPECT_EQ(s.bytes, 900u);
  EXPECT_EQ(s.retries, 1u);
  EXPECT_EQ(s.errors, 1u);
  EXPECT_EQ(s.LatencyPercentileUs(50), 250u);
  EXPECT_EQ(s.LatencyPercentileUs(90), 250u);
  EXPECT_EQ(s.LatencyPercentileUs(99), 4000u);
  stats.NoteRequest(10s, 0);
  EXPECT_EQ(stats.Snapshot().LatencyPercentileUs(100), std::numeric_limits<uint64_t>::max());
}

class HttpOriginFakeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto t = std::make_unique<FakeTransport>();
    fake = t.get();
    fake->objects["http://h/ds.mmfs/shard-0.mdb"] = {ShardBytes(4096), "\"e0\""};
    fake->objects["http://h/ds.mmfs/views/256/shard-0.mdb"] = {ShardBytes(100, 5), "\"v0\""};
    origin = std::make_unique<HttpOrigin>("http://h/ds.mmfs/", std::move(t), testing::QuickRetries());
  }
  FakeTransport* fake = nullptr;
  std::unique_ptr<HttpOrigin> origin;
};

TEST_F(HttpOriginFakeTest, AddsTreesAndReadsRangesWithTheirETag) {
  ASSERT_TRUE(origin->AddTree(kDatasetTree, Spec({{"shard-0.mdb", 4096}})).ok());
  TreeSpec view = Spec({{"shard-0.mdb", 100}});
  view.place = "views/256";
  ASSERT_TRUE(origin->AddTree(1, view).ok());
  EXPECT_EQ(origin->ShardName({1, 0}), "views/256/shard-0.mdb");
  EXPECT_EQ(*origin->ShardSize({0, 0}), 4096u);
  EXPECT_EQ(origin->AddTree(1, view).code(), StatusCode::kAlreadyExists);

  fake->sent.clear();
  auto bytes = origin->ReadSpan({0, 0}, 1000, 500);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_EQ(std::string(bytes->data(), bytes->size()), ShardBytes(4096).substr(1000, 500));
  ASSERT_EQ(fake->sent.size(), 1u);
  EXPECT_EQ(fake->sent[0].range, std::make_pair(uint64_t{1000}, uint64_t{1499}));
  EXPECT_EQ(fake->sent[0].if_match, "\"e0\"");
  EXPECT_EQ(fake->sent[0].max_body, 500u);

  EXPECT_EQ(origin->ReadSpan({0, 0}, 4000, 97).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(origin->ReadSpan({3, 0}, 0, 1).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(origin->ReadSpan({0, 0}, 4096, 0)->size(), 0u);
}

TEST_F(HttpOriginFakeTest, RefusesAMissingShardAWrongSizeOrMagic) {
  Status missing = origin->AddTree(kDatasetTree, Spec({{"shard-0.mdb", 4096}, {"nope.mdb", 1}}));
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
  EXPECT_NE(missing.message().find("http://h/ds.mmfs/nope.mdb"), std::string::npos);

  Status size = origin->AddTree(kDatasetTree, Spec({{"shard-0.mdb", 4000}}));
  EXPECT_EQ(size.code(), StatusCode::kCorruption);
  EXPECT_NE(size.message().find("size 4096 bytes, the manifest says 4000"), std::string::npos);

  TreeSpec magic = Spec({{"shard-0.mdb", 4096}});
  magic.magic = 0x12345678;
  EXPECT_EQ(origin->AddTree(kDatasetTree, magic).code(), StatusCode::kCorruption);
  // All or nothing: the tree may be added after the refusals.
  EXPECT_TRUE(origin->AddTree(kDatasetTree, Spec({{"shard-0.mdb", 4096}})).ok());
}

TEST_F(HttpOriginFakeTest, ChecksEachShardWithOneRangedRequest) {
  std::vector<std::pair<std::string, uint64_t>> shards;
  for (int i = 0; i < 40; ++i) {
    const std::string name = "s-" + std::to_string(i) + ".mdb";
    fake->objects["http://h/ds.mmfs/" + name] = {ShardBytes(1000 + i), "\"x" + name + "\""};
    shards.push_back({name, 1000 + i});
  }
  fake->sent.clear();
  ASSERT_TRUE(origin->AddTree(kDatasetTree, Spec(shards)).ok());
  ASSERT_EQ(fake->sent.size(), 40u);  // one request per shard, no HEAD before it
  for (const HttpRequest& r : fake->sent) {
    EXPECT_FALSE(r.head);
    EXPECT_EQ(r.range, std::make_pair(uint64_t{16}, uint64_t{19}));
  }
  // Each shard's own ETag is pinned.
  fake->sent.clear();
  ASSERT_TRUE(origin->ReadSpan({0, 39}, 0, 8).ok());
  EXPECT_EQ(fake->sent[0].if_match, "\"xs-39.mdb\"");
}

TEST_F(HttpOriginFakeTest, BytesOfAnotherRangeAreNotServed) {
  ASSERT_TRUE(origin->AddTree(kDatasetTree, Spec({{"shard-0.mdb", 4096}})).ok());
  HttpResponse shifted;  // the right length, the wrong place (a confused cache in between)
  shifted.status = 206;
  shifted.etag = "\"e0\"";
  shifted.range = std::make_pair(uint64_t{64}, uint64_t{127});
  shifted.body = ShardBytes(4096).substr(64, 64);
  fake->failures.push_back(shifted);
  auto read = origin->ReadSpan({0, 0}, 0, 64);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kIoError);
  EXPECT_NE(read.status().message().find("holds bytes 64-127, asked for 0-63"), std::string::npos)
      << read.status().ToString();
  EXPECT_TRUE(origin->ReadSpan({0, 0}, 0, 64).ok());
}

TEST_F(HttpOriginFakeTest, AWeakETagIsNotPinned) {
  fake->objects["http://h/ds.mmfs/shard-0.mdb"].etag = "W/\"weak\"";
  ASSERT_TRUE(origin->AddTree(kDatasetTree, Spec({{"shard-0.mdb", 4096}})).ok());
  fake->sent.clear();
  ASSERT_TRUE(origin->ReadSpan({0, 0}, 0, 64).ok());
  EXPECT_EQ(fake->sent[0].if_match, "");  // If-Match would never match a weak ETag
}

TEST_F(HttpOriginFakeTest, AnS3ErrorSaysWhy) {
  ASSERT_TRUE(origin->AddTree(kDatasetTree, Spec({{"shard-0.mdb", 4096}})).ok());
  HttpResponse denied;
  denied.status = 403;
  denied.error_body =
      "<?xml version=\"1.0\"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message>"
      "</Error>";
  fake->failures.push_back(denied);
  auto read = origin->ReadSpan({0, 0}, 0, 64);
  EXPECT_NE(read.status().message().find("HTTP 403 AccessDenied: Access Denied"),
            std::string::npos)
      << read.status().ToString();
}

TEST_F(HttpOriginFakeTest, AServerThatIgnoresRangesIsRefusedAtAdd) {
  HttpResponse whole;
  whole.failure = TransportFailure::kPermanent;  // what a transport says of a body past max_body
  whole.body_cut = true;
  whole.status = 200;
  fake->failures.push_back(whole);
  Status s = origin->AddTree(kDatasetTree, Spec({{"shard-0.mdb", 4096}}));
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_NE(s.message().find("answers a range request with the whole object"), std::string::npos)
      << s.ToString();
}

TEST_F(HttpOriginFakeTest, AShardReplacedUnderTheMountIsAnErrorNamingIt) {
  ASSERT_TRUE(origin->AddTree(kDatasetTree, Spec({{"shard-0.mdb", 4096}})).ok());
  fake->objects["http://h/ds.mmfs/shard-0.mdb"] = {ShardBytes(4096, 9), "\"e1\""};
  auto read = origin->ReadSpan({0, 0}, 0, 64);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kCorruption);
  EXPECT_NE(read.status().message().find("shard-0.mdb: replaced under a running mount"),
            std::string::npos)
      << read.status().ToString();
  EXPECT_EQ(origin->Stats().errors, 1u);
}

TEST_F(HttpOriginFakeTest, AnAnswerWithAnotherETagIsRefusedToo) {
  ASSERT_TRUE(origin->AddTree(kDatasetTree, Spec({{"shard-0.mdb", 4096}})).ok());
  HttpResponse other;
  other.status = 206;
  other.etag = "\"e2\"";
  other.body = std::string(64, 'x');
  fake->failures.push_back(other);
  auto read = origin->ReadSpan({0, 0}, 0, 64);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("replaced under a running mount"), std::string::npos);
}

TEST_F(HttpOriginFakeTest, ShortOrWholeAnswersAreErrorsNotBytes) {
  ASSERT_TRUE(origin->AddTree(kDatasetTree, Spec({{"shard-0.mdb", 4096}})).ok());
  HttpResponse shorter;
  shorter.status = 206;
  shorter.body = std::string(10, 'x');
  fake->failures.push_back(shorter);
  EXPECT_EQ(origin->ReadSpan({0, 0}, 0, 64).status().code(), StatusCode::kIoError);
  HttpResponse whole;  // a server that ignores Range
  whole.status = 200;
  whole.body = std::string(64, 'x');
  fake->failures.push_back(whole);
  auto read = origin->ReadSpan({0, 0}, 0, 64);
  EXPECT_EQ(read.status().code(), StatusCode::kIoError);
  EXPECT_NE(read.status().message().find("HTTP 200"), std::string::npos);
}

TEST_F(HttpOriginFakeTest, RetriesUntilTheServerAnswers) {
  ASSERT_TRUE(origin->AddTree(kDatasetTree, Spec({{"shard-0.mdb", 4096}})).ok());
  const uint64_t before = origin->Stats().requests;
  fake->failures = {Status503(), Refused(), Status503()};
  auto read = origin->ReadSpan({0, 0}, 0, 64);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  RemoteStatsSnapshot s = origin->Stats();
  EXPECT_EQ(s.retries, 3u);
  EXPECT_EQ(s.requests - before, 4u);
  EXPECT_EQ(s.errors, 0u);
}

TEST_F(HttpOriginFakeTest, GivesUpAfterTheTotalTimeNamingTheUrlThenServesAgain) {
  ASSERT_TRUE(origin->AddTree(kDatasetTree, Spec({{"shard-0.mdb", 4096}})).ok());
  fake->failures.assign(100000, Refused());
  const auto start = std::chrono::steady_clock::now();
  auto read = origin->ReadSpan({0, 0}, 0, 64);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kIoError);
  EXPECT_NE(read.status().message().find("http://h/ds.mmfs/shard-0.mdb"), std::string::npos);
  EXPECT_GE(took, testing::QuickRetries().total);
  EXPECT_LT(took, testing::QuickRetries().total + 5s);
  EXPECT_GT(origin->Stats().retries, 0u);
  // Not sticky: once the server answers, other bytes are served at once, and these once the
  // hold of their failure is over.
  fake->failures.clear();
  EXPECT_TRUE(origin->ReadSpan({0, 0}, 64, 64).ok());
  EXPECT_TRUE(testing::WaitFor([&] { return origin->ReadSpan({0, 0}, 0, 64).ok(); }, 10));
}

// A READ's deadline (set by the miss thread serving it) ends its retries early, and no try is
// given more time than is left of it (but a floor): a READ that waited in a queue has only the
// rest of its bound.
TEST_F(HttpOriginFakeTest, AReadsDeadlineCutsItsRetriesShort) {
  ASSERT_TRUE(origin->AddTree(kDatasetTree, Spec({{"shard-0.mdb", 4096}})).ok());
  fake->failures.assign(100000, Status503());
  fake->sent.clear();
  const auto start = std::chrono::steady_clock::now();
  Result<OriginBytes> read = Status::IoError("not read");
  {
    ScopedReadDeadline deadline(start + 150ms);
    read = origin->ReadSpan({0, 0}, 0, 64);
  }
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("HTTP 503"), std::string::npos);
  EXPECT_GE(took, 150ms);
  EXPECT_LT(took, testing::QuickRetries().total) << "the policy's own budget is 2 s";
  for (const HttpRequest& r : fake->sent) {
    EXPECT_LE(r.timeout, testing::QuickRetries().min_try);
    EXPECT_GT(r.timeout.count(), 0);
  }
  // A READ failed by its own short deadline says little of the bytes: not remembered.
  fake->failures.clear();
  EXPECT_TRUE(origin->ReadSpan({0, 0}, 0, 64).ok());
  EXPECT_EQ(origin->Stats().failed_fast, 0u);
  // A READ late to its turn still has its bytes asked for once, with the floor's time.
  fake->sent.clear();
  {
    ScopedReadDeadline late(std::chrono::steady_clock::now() - 1s);
    ASSERT_TRUE(origin->ReadSpan({0, 0}, 200, 64).ok());
  }
  ASSERT_EQ(fake->sent.size(), 1u);
  EXPECT_EQ(fake->sent[0].timeout, testing::QuickRetries().min_try);
  // Without a deadline (prefetch, warm-up, the index at mount) no try has a time limit but the
  // transport's stall rule.
  fake->failures = {Status503()};
  fake->sent.clear();
  ASSERT_TRUE(origin->ReadSpan({0, 0}, 1000, 64).ok());
  ASSERT_EQ(fake->sent.size(), 2u);
  EXPECT_EQ(fake->sent[0].timeout.count(), 0);
  EXPECT_EQ(fake->sent[1].timeout.count(), 0);
}

// A stopping daemon sends nothing more: its readers are gone or leaving.
TEST_F(HttpOriginFakeTest, NothingIsSentOnceTheReadsAreStopping) {
  ASSERT_TRUE(origin->AddTree(kDatasetTree, Spec({{"shard-0.mdb", 4096}})).ok());
  std::atomic<bool> stop{true};
  fake->sent.clear();
  ScopedReadDeadline scope(std::chrono::steady_clock::now() + 10s, &stop);
  auto read = origin->ReadSpan({0, 0}, 0, 64);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("stopping"), std::string::npos);
  EXPECT_TRUE(fake->sent.empty());
}

// The kernel sends a failed READ again, and an extent read that failed is read again as its
// sample: both are answered at once with the failure, for the hold, not after a second budget.
TEST_F(HttpOriginFakeTest, BytesThatFailedForGoodFailAgainAtOnceForTheHoldOnly) {
  RetryPolicy retry = testing::QuickRetries();
  retry.total = 1000ms;  // the hold: at most the budget
  auto t = std::make_unique<FakeTransport>();
  fake = t.get();
  fake->objects["http://h/ds.mmfs/shard-0.mdb"] = {ShardBytes(4096), "\"e0\""};
  origin = std::make_unique<HttpOrigin>("http://h/ds.mmfs/", std::move(t), retry);
  ASSERT_TRUE(origin->AddTree(kDatasetTree, Spec({{"shard-0.mdb", 4096}})).ok());
  fake->failures.assign(100000, Status503());
  // The daemon's own read (the fill, prefetch: no READ deadline) that fails for good is not
  // remembered: its span would fail the READs of every file in it.
  ASSERT_FALSE(origin->ReadSpan({0, 0}, 0, 500).ok());
  fake->sent.clear();
  EXPECT_FALSE(origin->ReadSpan({0, 0}, 0, 100).ok());
  EXPECT_FALSE(fake->sent.empty()) << "asked again";
  // A READ's load that fails for the whole budget is.
  {
    ScopedReadDeadline deadline(std::chrono::steady_clock::now() + 30s);
    ASSERT_FALSE(origin->ReadSpan({0, 0}, 1000, 1000).ok());
  }
  const uint64_t errors = origin->Stats().errors;
  fake->sent.clear();
  // Inside the failed range, and overlapping its end: failed unsent, saying so.
  for (auto [offset, len] : {std::pair<uint64_t, size_t>{1200, 100}, {1900, 500}}) {
    auto again = origin->ReadSpan({0, 0}, offset, len);
    ASSERT_FALSE(again.ok());
    EXPECT_NE(again.status().message().find("HTTP 503"), std::string::npos);
    EXPECT_NE(again.status().message().find("ago"), std::string::npos)
        << again.status().message();
  }
  EXPECT_TRUE(fake->sent.empty());
  EXPECT_EQ(origin->Stats().failed_fast, 2u);
  EXPECT_EQ(origin->Stats().errors, errors) << "no request failed: none was sent";
  // Other bytes are asked for as usual.
  fake->failures.clear();
  EXPECT_TRUE(origin->ReadSpan({0, 0}, 3000, 100).ok());
  EXPECT_EQ(fake->sent.size(), 1u);
  // A 404, which no retry mends, is not remembered.
  HttpResponse gone;
  gone.status = 404;
  fake->failures = {gone};
  EXPECT_FALSE(origin->ReadSpan({0, 0}, 3500, 10).ok());
  EXPECT_TRUE(origin->ReadSpan({0, 0}, 3500, 10).ok());
}

TEST(FailedRangesTest, OverlappingReadsOfTheSameShardFailWithinTheHold) {
  using Clock = FailedRanges::Clock;
  FailedRanges failed(5s);
  const Clock::time_point t0 = Clock::time_point() + 1h;
  failed.Note({0, 1}, 100, 50, Status::IoError("u: HTTP 500"), t0);
  EXPECT_FALSE(failed.Find({0, 1}, 0, 100, t0 + 1s).has_value());    // ends where it starts
  EXPECT_FALSE(failed.Find({0, 1}, 150, 10, t0 + 1s).has_value());   // starts where it ends
  EXPECT_FALSE(failed.Find({0, 2}, 100, 50, t0 + 1s).has_value());   // another shard
  EXPECT_FALSE(failed.Find({1, 1}, 100, 50, t0 + 1s).has_value());   // another tree
  auto within = failed.Find({0, 1}, 149, 100, t0 + 2500ms);
  ASSERT_TRUE(within.has_value());
  EXPECT_EQ(within->code(), StatusCode::kIoError);
  EXPECT_NE(within->message().find("u: HTTP 500 (failed 2.5 s ago"), std::string::npos)
      << within->message();
  EXPECT_TRUE(failed.Find({0, 1}, 0, 1000, t0 + 4999ms).has_value());
  EXPECT_FALSE(failed.Find({0, 1}, 0, 1000, t0 + 5s).has_value());  // the hold is over
}

TEST(FailedRangesTest, KeepsABoundedNumberAndNothingWithoutAHold) {
  using Clock = FailedRanges::Clock;
  const Clock::time_point t0 = Clock::time_point() + 1h;
  FailedRanges failed(1h);
  for (uint64_t i = 0; i < FailedRanges::kMaxRanges + 10; ++i) {
    failed.Note({0, 0}, i * 10, 10, Status::IoError("x"), t0);
  }
  EXPECT_FALSE(failed.Find({0, 0}, 0, 10, t0).has_value()) << "the oldest went first";
  EXPECT_TRUE(failed.Find({0, 0}, (FailedRanges::kMaxRanges + 9) * 10, 10, t0).has_value());
  FailedRanges none(Clock::duration::zero());
  none.Note({0, 0}, 0, 10, Status::IoError("x"), t0);
  EXPECT_FALSE(none.Find({0, 0}, 0, 10, t0).has_value());
}

TEST_F(HttpOriginFakeTest, DoesNotRetryWhatAnotherTryCannotMend) {
  ASSERT_TRUE(origin->AddTree(kDatasetTree, Spec({{"shard-0.mdb", 4096}})).ok());
  HttpResponse forbidden;
  forbidden.status = 403;
  fake->failures.push_back(forbidden);
  fake->sent.clear();
  EXPECT_EQ(origin->ReadSpan({0, 0}, 0, 64).status().code(), StatusCode::kIoError);
  EXPECT_EQ(fake->sent.size(), 1u);
  EXPECT_EQ(origin->Stats().retries, 0u);
}

TEST(HttpOriginUrlTest, PercentEncodesEachStep) {
  HttpOrigin o("https://h/a/ds.mmfs//", std::make_unique<FakeTransport>());
  EXPECT_EQ(o.base_url(), "https://h/a/ds.mmfs");
  EXPECT_EQ(o.UrlOf("views/256/shard 1.mdb"), "https://h/a/ds.mmfs/views/256/shard%201.mdb");
  EXPECT_EQ(o.UrlOf("a?b#c%"), "https://h/a/ds.mmfs/a%3Fb%23c%25");
}

// The same over libcurl, against nginx.
class HttpOriginNginxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access(testing::kNginx, X_OK) != 0) GTEST_SKIP() << "no nginx (tools/install-deps.sh)";
    testing::WriteFile(server.www() + "/ds.mmfs/shard-0.mdb", ShardBytes(1 << 20));
    testing::WriteFile(server.www() + "/ds.mmfs/shard-1.mdb", ShardBytes(5000, 3));
    ASSERT_TRUE(server.Start()) << server.ErrorLog();
  }
  std::unique_ptr<HttpOrigin> NewOrigin(RetryPolicy retry = testing::QuickRetries()) {
    return std::make_unique<HttpOrigin>(server.url() + "/ds.mmfs",
                                        std::make_unique<CurlTransport>(CurlOptions{}), retry);
  }
  testing::NginxServer server;
};

TEST_F(HttpOriginNginxTest, ReadsRangesOverKeptAliveConnections) {
  auto o = NewOrigin();
  Status added = o->AddTree(kDatasetTree, Spec({{"shard-0.mdb", 1 << 20}, {"shard-1.mdb", 5000}}));
  ASSERT_TRUE(added.ok()) << added.ToString();
  const std::string want = ShardBytes(1 << 20);
  for (uint64_t off : {uint64_t{0}, uint64_t{12345}, uint64_t{(1 << 20) - 300}}) {
    auto bytes = o->ReadSpan({0, 0}, off, 300);
    ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
    EXPECT_EQ(std::string(bytes->data(), bytes->size()), want.substr(off, 300));
  }
  auto whole = o->ReadSpan({0, 1}, 0, 5000);
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(std::string(whole->data(), whole->size()), ShardBytes(5000, 3));
  RemoteStatsSnapshot s = o->Stats();
  EXPECT_EQ(s.retries, 0u);
  EXPECT_EQ(s.errors, 0u);
  EXPECT_GE(s.bytes, 3 * 300u + 5000u);
}

TEST_F(HttpOriginNginxTest, RefusesAMissingOrResizedShard) {
  auto o = NewOrigin();
  Status missing = o->AddTree(kDatasetTree, Spec({{"shard-9.mdb", 10}}));
  EXPECT_EQ(missing.code(), StatusCode::kNotFound) << missing.ToString();
  Status size = o->AddTree(kDatasetTree, Spec({{"shard-1.mdb", 4999}}));
  EXPECT_EQ(size.code(), StatusCode::kCorruption) << size.ToString();
}

TEST_F(HttpOriginNginxTest, AShardReplacedUnderTheMountFailsWhileOthersServe) {
  auto o = NewOrigin();
  ASSERT_TRUE(
      o->AddTree(kDatasetTree, Spec({{"shard-0.mdb", 1 << 20}, {"shard-1.mdb", 5000}})).ok());
  // Same size, other bytes and another mtime: nginx's ETag (mtime-size) changes.
  const std::string path = server.www() + "/ds.mmfs/shard-1.mdb";
  testing::WriteFile(path + ".new", ShardBytes(5000, 7));
  struct utimbuf times {
    1000000000, 1000000000
  };
  ASSERT_EQ(::utime((path + ".new").c_str(), &times), 0);
  std::filesystem::rename(path + ".new", path);
  auto read = o->ReadSpan({0, 1}, 100, 100);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("shard-1.mdb: replaced under a running mount"),
            std::string::npos)
      << read.status().ToString();
  EXPECT_TRUE(o->ReadSpan({0, 0}, 100, 100).ok());
}

TEST_F(HttpOriginNginxTest, AServerThatGoesAwayAndComesBackIsServedAgain) {
  RetryPolicy retry = testing::QuickRetries();
  retry.total = 300ms;
  auto o = NewOrigin(retry);
  ASSERT_TRUE(o->AddTree(kDatasetTree, Spec({{"shard-0.mdb", 1 << 20}})).ok());
  server.Stop();
  auto down = o->ReadSpan({0, 0}, 0, 100);
  ASSERT_FALSE(down.ok());
  EXPECT_EQ(down.status().code(), StatusCode::kIoError);
  EXPECT_NE(down.status().message().find(server.url() + "/ds.mmfs/shard-0.mdb"), std::string::npos)
      << down.status().ToString();
  EXPECT_GT(o->Stats().retries, 0u);
  ASSERT_TRUE(server.Start()) << server.ErrorLog();
  // Other bytes at once; these once the hold of their failure is over (failed_ranges.h).
  auto other = o->ReadSpan({0, 0}, 1000, 100);
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  EXPECT_EQ(std::string(other->data(), other->size()), ShardBytes(1 << 20).substr(1000, 100));
  Result<OriginBytes> up = Status::IoError("not read");
  EXPECT_TRUE(testing::WaitFor([&] { return (up = o->ReadSpan({0, 0}, 0, 100)).ok(); }, 10))
      << up.status().ToString();
  ASSERT_TRUE(up.ok());
  EXPECT_EQ(std::string(up->data(), up->size()), ShardBytes(1 << 20).substr(0, 100));
}

}  // namespace
}  // namespace mmfs::origin
