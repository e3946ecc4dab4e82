// mmfs pack SRC s3://BUCKET/PREFIX/ds.mmfs against a real store (s3rver, behind
// tests/origin/fault_proxy.py, which checks each signature and counts the requests): the objects
// are the files a local pack writes; the staging directory is gone afterwards; an existing
// dataset is replaced only with --force; a pack interrupted after its first uploads, or stopped
// by a store that fails, resumes without uploading them again and publishes nothing before;
// bad input removes what was uploaded.

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "tests/fault_proxy_helper.h"
#include "tests/s3rver_helper.h"
#include "tests/test_util.h"
#include "tests/tools/pack_fixture.h"
#include "tools/pack/bucket_destination.h"

namespace mmfs::pack {
namespace {

namespace fsys = std::filesystem;

// Samples of ~200 KB (an image, a caption and an incompressible blob): a few per 1 MiB shard.
std::vector<Member> HeavySamples(int first, int samples) {
  std::mt19937 rng(static_cast<uint32_t>(first));
  std::vector<Member> m;
  for (int i = first; i < first + samples; ++i) {
    const std::string k = std::to_string(200000 + i);
    std::string blob(200 << 10, '\0');
    for (char& c : blob) c = static_cast<char>(rng());
    m.push_back({k + ".jpg", testing::MakeJpeg(16, 16, static_cast<unsigned>(i))});
    m.push_back({k + ".txt", "caption " + std::to_string(i)});
    m.push_back({k + ".bin", std::move(blob)});
  }
  return m;
}

// Stops the pack (as Ctrl-C does) once the store has acknowledged `after` bytes.
class StopAfterUploads final : public PackReporter {
 public:
  StopAfterUploads(std::atomic<bool>* cancel, uint64_t after) : cancel_(cancel), after_(after) {}
  void Warning(const std::string&) override {}
  void Phase(const std::string&) override {}
  void Progress(const PackProgress& p) override {
    if (p.bytes_uploaded >= after_) cancel_->store(true);
  }

 private:
  std::atomic<bool>* cancel_;
  uint64_t after_;
};

class PackIntoBucketTest : public InputsTest {
 protected:
  void SetUp() override {
    ASSERT_TRUE(s3.installed()) << s3.NotInstalled();
    ASSERT_TRUE(s3.Start()) << s3.Log();
    ASSERT_TRUE(proxy.Start()) << proxy.Log();
    testing::UseS3rverAccount(tmp_.path());
    options.remote.endpoint = proxy.url();
    options.remote.retry.total = std::chrono::milliseconds(10000);
    options.shard_size = 1 << 20;
    options.staging_dir = tmp_ / "staging";
    WriteTar(tmp_ / "00000.tar", HeavySamples(0, 12));
    WriteTar(tmp_ / "00001.tar", HeavySamples(12, 8));
    ASSERT_EQ(s3.Put("bkt", "wds/00000.tar", tmp_ / "00000.tar"), 200);
    ASSERT_EQ(s3.Put("bkt", "wds/00001.tar", tmp_ / "00001.tar"), 200);
  }
  void TearDown() override { testing::ForgetS3rverAccount(); }
  Result<PackSummary> PackToBucket(PackOptions o, PackReporter& reporter) {
    o.sources = {"s3://bkt/wds/"};
    o.destination = kUrl;
    return pack::Pack(o, reporter);
  }
  // Object `name` of the packed dataset in the bucket, or "<HTTP status>".
  std::string Object(const std::string& name) {
    const std::string file = tmp_ / "got";
    const int status = s3.Get("bkt", "out/ds.mmfs/" + name, file);
    return status == 200 ? testing::ReadFile(file) : "<HTTP " + std::to_string(status) + ">";
  }
  // Every file of the local pack (out.mmfs), the manifest aside, is the bucket's object of the
  // same name, byte for byte; the manifests name the same shards.
  void ExpectTheBucketHoldsTheLocalPack() {
    size_t files = 0;
    for (const auto& e : fsys::directory_iterator(tmp_ / "out.mmfs")) {
      const std::string name = e.path().filename();
      if (name == "manifest.json") continue;
      EXPECT_TRUE(Object(name) == testing::ReadFile(e.path())) << name;
      ++files;
    }
    EXPECT_GE(files, 4u);  // the index and several shards
    auto local = nlohmann::json::parse(testing::ReadFile(tmp_ / "out.mmfs/manifest.json"));
    auto remote = nlohmann::json::parse(Object("manifest.json"), nullptr, false);
    ASSERT_FALSE(remote.is_discarded()) << Object("manifest.json");
    EXPECT_EQ(remote["shards"], local["shards"]);
    EXPECT_EQ(remote["index_checksum"], local["index_checksum"]);
  }
  // Nothing a pack staged is left in --staging-dir.
  bool StagingIsEmpty() const {
    std::error_code ec;
    return !fsys::exists(options.staging_dir, ec) || fsys::is_empty(options.staging_dir, ec);
  }

  static constexpr const char* kUrl = "s3://bkt/out/ds.mmfs";
  testing::S3rverServer s3{"bkt"};
  testing::FaultProxy proxy{
      s3.url(), {"--sigv4-key", testing::kS3rverKey, "--sigv4-secret", testing::kS3rverSecret}};
  PackOptions options;
};

TEST_F(PackIntoBucketTest, TheBucketGetsWhatALocalPackWrites) {
  auto local = Pack({"s3://bkt/wds/"}, options);
  ASSERT_TRUE(local.ok()) << local.status().ToString();
  ASSERT_GE(local->shards, 3u);

  testing::CollectingReporter reporter;
  auto s = PackToBucket(options, reporter);
  ASSERT_TRUE(s.ok()) << s.status().ToString() << "\n" << s3.Log();
  EXPECT_EQ(s->shards, local->shards);
  EXPECT_EQ(s->samples, 20u);
  EXPECT_EQ(s->dataset_bytes, local->dataset_bytes);
  ExpectTheBucketHoldsTheLocalPack();
  // Each shard went once; all that went is the dataset (its manifest differs in its date only).
  EXPECT_EQ(proxy.Count("PUT", "out/ds.mmfs/shard-"), static_cast<int>(local->shards));
  EXPECT_EQ(s->bytes_uploaded,
            local->dataset_bytes + Object("manifest.json").size());
  EXPECT_EQ(proxy.Stats()["refused"], 0);
  EXPECT_TRUE(StagingIsEmpty());

  // An existing dataset is replaced only when asked, its manifest removed first.
  testing::CollectingReporter again;
  auto refused = PackToBucket(options, again);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kAlreadyExists) << refused.status().ToString();
  EXPECT_NE(refused.status().message().find(kUrl), std::string::npos);
  EXPECT_EQ(proxy.Count("PUT", "out/ds.mmfs/shard-"), static_cast<int>(local->shards));
  PackOptions force = options;
  force.force = true;
  auto replaced = PackToBucket(force, again);
  ASSERT_TRUE(replaced.ok()) << replaced.status().ToString();
  EXPECT_EQ(proxy.Count("DELETE", "out/ds.mmfs/manifest.json"), 1);
  EXPECT_EQ(proxy.Count("PUT", "out/ds.mmfs/shard-"), 2 * static_cast<int>(local->shards));
  ExpectTheBucketHoldsTheLocalPack();
}

TEST_F(PackIntoBucketTest, AnInterruptedPackResumesWithoutUploadingItsShardsAgain) {
  auto local = Pack({"s3://bkt/wds/"}, options);
  ASSERT_TRUE(local.ok()) << local.status().ToString();
  // Enough shards that the stop (seen at the next sample, while the third shard waits for the
  // uploads queued before it) comes before the last one.
  ASSERT_GE(local->shards, 4u);

  std::atomic<bool> cancel{false};
  StopAfterUploads stopper(&cancel, 1);
  PackOptions first = options;
  first.cancel = &cancel;
  auto stopped = PackToBucket(first, stopper);
  ASSERT_FALSE(stopped.ok());
  ASSERT_EQ(stopped.status().code(), StatusCode::kCancelled) << stopped.status().ToString();
  EXPECT_NE(stopped.status().message().find("--resume"), std::string::npos)
      << stopped.status().ToString();
  EXPECT_EQ(Object("manifest.json"), "<HTTP 404>");  // nothing published yet
  const int uploaded = proxy.Count("PUT", "out/ds.mmfs/shard-");
  ASSERT_GE(uploaded, 1);
  ASSERT_LT(uploaded, static_cast<int>(local->shards));

  PackOptions resume = options;
  resume.resume = true;
  testing::CollectingReporter reporter;
  auto s = PackToBucket(resume, reporter);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ExpectTheBucketHoldsTheLocalPack();
  // The shards of the first run were found in the bucket (size and checksum), not sent again.
  EXPECT_EQ(proxy.Count("PUT", "out/ds.mmfs/shard-00000.mdb"), 1);
  EXPECT_EQ(proxy.Count("PUT", "out/ds.mmfs/shard-"), static_cast<int>(local->shards));
  EXPECT_TRUE(StagingIsEmpty());
}

TEST_F(PackIntoBucketTest, AStoreThatRefusesTheIndexPublishesNothingAndResumes) {
  auto local = Pack({"s3://bkt/wds/"}, options);
  ASSERT_TRUE(local.ok()) << local.status().ToString();
  PackOptions short_retries = options;
  short_retries.remote.retry.total = std::chrono::milliseconds(1500);
  ASSERT_TRUE(proxy.Fault("500", -1, "out/ds.mmfs/index", 1, "PUT"));
  testing::CollectingReporter reporter;
  auto s = PackToBucket(short_retries, reporter);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("s3://bkt/out/ds.mmfs/index"), std::string::npos)
      << s.status().ToString();
  EXPECT_NE(s.status().message().find("HTTP 500"), std::string::npos) << s.status().ToString();
  EXPECT_NE(s.status().message().find("--resume"), std::string::npos) << s.status().ToString();
  EXPECT_EQ(Object("manifest.json"), "<HTTP 404>");
  // A store that failed may come back: the shards stay for --resume.
  EXPECT_TRUE(Object("shard-00000.mdb") == testing::ReadFile(tmp_ / "out.mmfs/shard-00000.mdb"));
  EXPECT_EQ(proxy.Count("DELETE", "out/ds.mmfs/shard-"), 0);

  ASSERT_TRUE(proxy.Clear());
  PackOptions resume = options;
  resume.resume = true;
  auto resumed = PackToBucket(resume, reporter);
  ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
  ExpectTheBucketHoldsTheLocalPack();
  EXPECT_EQ(proxy.Count("PUT", "out/ds.mmfs/shard-"), static_cast<int>(local->shards));
  EXPECT_TRUE(StagingIsEmpty());
}

TEST_F(PackIntoBucketTest, BadInputRemovesWhatWasUploaded) {
  // A third tar whose first sample's image is damaged: found after the first tars' shards went.
  std::vector<Member> bad = HeavySamples(20, 4);
  bad[0].data = "not a jpeg";
  WriteTar(tmp_ / "00002.tar", bad);
  ASSERT_EQ(s3.Put("bkt", "wds/00002.tar", tmp_ / "00002.tar"), 200);
  testing::CollectingReporter reporter;
  auto s = PackToBucket(options, reporter);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("00002"), std::string::npos) << s.status().ToString();
  // Three shards were finished before the third tar and at most two wait for their upload:
  // at least one was uploaded...
  EXPECT_GE(proxy.Count("PUT", "out/ds.mmfs/shard-"), 1);
  EXPECT_EQ(proxy.Count("PUT", "out/ds.mmfs/shard-"),     // ...and each was removed
            proxy.Count("DELETE", "out/ds.mmfs/shard-"));
  EXPECT_EQ(Object("shard-00000.mdb"), "<HTTP 404>");
  EXPECT_EQ(Object("manifest.json"), "<HTTP 404>");
  EXPECT_TRUE(StagingIsEmpty());
}

TEST_F(PackIntoBucketTest, ADestinationInsideTheSourceIsRefused) {
  testing::CollectingReporter reporter;
  PackOptions o = options;
  o.sources = {"s3://bkt/wds/"};
  o.destination = "s3://bkt/wds/ds.mmfs";
  auto s = pack::Pack(o, reporter);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("inside the source"), std::string::npos)
      << s.status().ToString();
}

}  // namespace
}  // namespace mmfs::pack
