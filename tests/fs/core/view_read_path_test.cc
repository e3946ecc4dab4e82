// A view's files go through the same read machinery as the originals (fs/read/view_files.h):
// sample members (a resized image brings its caption, and the other way round), readahead on an
// access pattern, the prefetch hint with `@N/...` paths, the push of a prefetched resized file,
// `.mmfs/views`, and the per-view counters in JSON and Prometheus. Through Filesystem, no mount.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "fs/core/filesystem.h"
#include "fs/format/view_set.h"
#include "fs/stats/stats_format.h"
#include "fs/stats/stats_prometheus.h"
#include "tests/fs/core/filesystem_helper.h"
#include "tests/origin_helper.h"
#include "tests/pack_helper.h"
#include "tests/test_util.h"
#include "tools/view/view_builder.h"

namespace mmfs::fs {
namespace {

using testing::TempDir;
using testing::WriteFile;

constexpr int kImages = 120;

std::string Name(int i) { return std::to_string(1000 + i); }

class ViewReadPathTest : public ::testing::Test {
 protected:
  // The dataset and its view are built once per process (a build takes about 40 s in the TSan
  // build; tests/CMakeLists.txt runs the suite as one ctest test, so once in all); each test
  // gets its own Filesystem over them, which only reads them.
  struct Shared {
    TempDir tmp;
    std::string error;                  // why building failed; empty when it worked
    std::vector<std::string> resized;  // by image number
  };
  static void SetUpTestSuite() {
    shared_ = new Shared;
    shared_->error = BuildDataset(shared_->tmp, &shared_->resized);
  }
  static void TearDownTestSuite() {
    delete shared_;
    shared_ = nullptr;
  }
  // Samples k.jpg + k.txt; every image larger than the view's side, so all are resized. Returns
  // what went wrong, or nothing.
  static std::string BuildDataset(const TempDir& tmp, std::vector<std::string>* resized) {
    for (int i = 0; i < kImages; ++i) {
      WriteFile(tmp / ("src/many/" + Name(i) + ".jpg"),
                testing::MakeJpeg(96, 72, static_cast<unsigned>(i + 1)));
      WriteFile(tmp / ("src/many/" + Name(i) + ".txt"), "caption " + std::to_string(i));
    }
    auto packed = testing::PackFolder(tmp / "src", tmp / "ds");
    if (!packed.ok()) return "pack: " + packed.status().ToString();
    view::ViewOptions o;
    o.dataset = tmp / "ds";
    o.side = 32;
    testing::CollectingReporter reporter;
    auto built = view::BuildView(o, reporter);
    if (!built.ok()) return "view: " + built.status().ToString();
    if (built->resized != static_cast<uint64_t>(kImages)) return "not every image was resized";
    // The resized bytes as the view shard holds them, read through an origin of the test's own.
    auto ds = format::Dataset::Open(tmp / "ds");
    if (!ds.ok()) return "open: " + ds.status().ToString();
    origin::LocalFileOrigin shards((*ds)->dir());
    format::ViewSet set = format::ViewSet::Open(**ds, shards);
    const format::View* v = set.Find(32);
    if (v == nullptr) return "no view 32";
    auto many = (*ds)->LookupChild(*(*ds)->GetEntry(0), "many");
    if (!many.ok()) return "no many/";
    for (int i = 0; i < kImages; ++i) {
      auto e = (*ds)->LookupChild(*many, Name(i) + ".jpg");
      if (!e.ok()) return "no " + Name(i) + ".jpg";
      auto f = v->Lookup(*e);
      if (!f.ok() || f->source != format::ViewFile::Source::kView) return "not resized: " + Name(i);
      auto bytes = format::ReadVerified(shards, *v, *f, "x");
      if (!bytes.ok()) return "unreadable: " + Name(i);
      resized->emplace_back(bytes->data(), bytes->size());
    }
    return "";
  }
  void SetUp() override {
    ASSERT_NE(shared_, nullptr);
    ASSERT_EQ(shared_->error, "");
    resized_ = shared_->resized;
    Make(FilesystemOptions{});
  }
  void Make(FilesystemOptions options) {
    fs_.reset();
    auto ds = format::Dataset::Open(shared_->tmp / "ds");
    ASSERT_TRUE(ds.ok());
    fs_ = testing::NewFilesystem(std::move(ds).value(), options);
  }
  uint64_t Ino(const std::string& path) {
    uint64_t ino = kRootIno;
    size_t start = 0;
    while (start < path.size()) {
      size_t slash = std::min(path.find('/', start), path.size());
      auto r = fs_->Lookup(ino, path.substr(start, slash - start));
      EXPECT_TRUE(r.ok()) << path;
      if (!r.ok()) return 0;
      ino = r->ino;
      start = slash + 1;
    }
    return ino;
  }
  std::string Read(const std::string& path, uint64_t stream = 0) {
    auto d = fs_->Read(Ino(path), 0, 1 << 20, stream);
    EXPECT_TRUE(d.ok()) << path << ": " << d.status().ToString();
    return d.ok() ? std::string(d->data, d->size) : std::string();
  }
  nlohmann::json Stats() { return nlohmann::json::parse(fs_->StatsJson()); }

  static Shared* shared_;
  std::unique_ptr<Filesystem> fs_;
  std::vector<std::string> resized_;  // by image number
};

ViewReadPathTest::Shared* ViewReadPathTest::shared_ = nullptr;

TEST_F(ViewReadPathTest, AResizedImageBringsItsCaptionAndTheCaptionItsResizedImage) {
  EXPECT_EQ(Read("@32/many/1000.jpg"), resized_[0]);
  EXPECT_EQ(Read("@32/many/1000.txt"), "caption 0");
  auto j = Stats();
  EXPECT_EQ(j["views"]["32"]["resized_loads"], 1) << j.dump(2);
  // Every shard byte is an origin read: the resized image from the view's shard, and the
  // caption, read with its image's sample, from the base shard.
  EXPECT_EQ(j["origin"]["reads"], 2) << j.dump(2);
  EXPECT_EQ(j["origin"]["bytes"], resized_[0].size() + std::string("caption 0").size());
  EXPECT_EQ(j["readahead"]["patterns"]["sample_members"]["used"], 1);
  // The caption first: the resized image comes along, never the original.
  EXPECT_EQ(Read("@32/many/1001.txt"), "caption 1");
  EXPECT_EQ(Read("@32/many/1001.jpg"), resized_[1]);
  j = Stats();
  EXPECT_EQ(j["views"]["32"]["resized_loads"], 2) << j.dump(2);
  EXPECT_EQ(j["origin"]["reads"], 4);
  EXPECT_EQ(j["readahead"]["patterns"]["sample_members"]["used"], 2);
  EXPECT_EQ(j["views"]["32"]["files_served"], 4);
  // The original tree still serves the original image (another key).
  EXPECT_NE(Read("many/1001.jpg"), resized_[1]);
  EXPECT_EQ(Read("@32/many/1001.jpg"), resized_[1]);
}

TEST_F(ViewReadPathTest, InOrderReadsOfAViewAreReadAhead) {
  int wrong = 0;
  for (int i = 0; i < kImages; ++i) {
    if (i % 16 == 0) fs_->DrainPrefetch();  // let the workers keep ahead, deterministically
    if (Read("@32/many/" + Name(i) + ".jpg", /*stream=*/42) != resized_[i]) ++wrong;
  }
  EXPECT_EQ(wrong, 0);
  auto j = Stats();
  const auto& seq = j["readahead"]["patterns"]["sequential"];
  EXPECT_GE(j["readahead"]["runs_detected"].get<int>(), 1) << j.dump(2);
  EXPECT_GT(seq["used"].get<int>(), kImages / 2) << j.dump(2);
  const auto& view = j["views"]["32"];
  EXPECT_GT(view["readahead_loads"].get<int>(), kImages / 2) << j.dump(2);
  EXPECT_LT(view["resized_loads"].get<int>(), kImages / 4) << j.dump(2);
  // Demand reads of the origin: the resized images' own (at most one per demand load, counted
  // above) and, as the captions came along read ahead, few of the base shard.
  EXPECT_LT(j["origin"]["reads"].get<int>(), view["resized_loads"].get<int>() + kImages / 4)
      << "captions came along, read ahead";
}

TEST_F(ViewReadPathTest, TheHintTakesViewPaths) {
  FilesystemOptions o;
  o.mountpoint = "/mnt/data";
  o.hint_target = "/run/mmfs/x/hint";
  Make(o);
  std::vector<int> order(kImages);
  for (int i = 0; i < kImages; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), std::mt19937(7));  // no stride a detector could find
  std::vector<std::string> lines;
  for (int i : order) lines.push_back("@32/many/" + Name(i) + ".jpg");
  lines[1] = "/mnt/data/" + lines[1];  // absolute under the mount point works too
  lines.push_back("@64/many/1000.jpg");  // no such view
  lines.push_back("@32/many/nonexistent.jpg");
  fs_->BeginHint();
  fs_->AddHintLines(lines);
  fs_->EndHint();
  int wrong = 0;
  for (int n = 0; n < kImages; ++n) {
    if (n % 16 == 0) fs_->DrainPrefetch();
    if (Read("@32/many/" + Name(order[n]) + ".jpg", 42) != resized_[order[n]]) ++wrong;
  }
  EXPECT_EQ(wrong, 0);
  auto j = Stats();
  const auto& hint = j["readahead"]["hint"];
  EXPECT_EQ(hint["positions"], kImages) << j.dump(2);
  EXPECT_EQ(hint["unknown_lines"], 2);
  EXPECT_EQ(hint["cursor"], kImages);
  EXPECT_EQ(hint["off_order_reads"], 0);
  EXPECT_EQ(j["readahead"]["patterns"]["hint"]["used"], kImages) << j.dump(2);
  EXPECT_EQ(j["views"]["32"]["resized_loads"], 0) << "every image was loaded ahead";
  EXPECT_EQ(j["views"]["32"]["readahead_loads"], kImages);
  EXPECT_EQ(j["origin"]["reads"], 0);
  // The same lines without @32 name the originals: a read of an original is off the order.
  EXPECT_NE(Read("many/1000.jpg", 42), resized_[0]);
  EXPECT_EQ(Stats()["readahead"]["hint"]["off_order_reads"], 1);
}

TEST_F(ViewReadPathTest, APrefetchedResizedFileIsPushedWithTheResizedBytes) {
  fs_->BeginHint();
  fs_->AddHintLines({"@32/many/1000.jpg", "@32/many/1001.jpg"});
  fs_->EndHint();
  fs_->DrainPrefetch();
  const uint64_t view_ino = Ino("@32/many/1000.jpg");
  EXPECT_EQ(fs_->ClaimPrefetched(Ino("many/1000.jpg"), 1 << 20, false)->size, 0u)
      << "the original was not prefetched: nothing to push for it";
  auto claimed = fs_->ClaimPrefetched(view_ino, 1 << 20, false);
  ASSERT_TRUE(claimed.ok());
  EXPECT_EQ(std::string(claimed->data, claimed->size), resized_[0]);
  fs_->EndPush(view_ino, 42, claimed->owner, /*stored=*/true);
  auto j = Stats();
  EXPECT_EQ(j["readahead"]["pushed"]["files"], 1) << j.dump(2);
  EXPECT_EQ(j["readahead"]["pushed"]["bytes"], resized_[0].size());
  // Taken as a READ of all of it: into the RAM tier under the resized file's key.
  EXPECT_EQ(Read("@32/many/1000.jpg"), resized_[0]);
  EXPECT_EQ(Stats()["views"]["32"]["resized_loads"], 0);
}

TEST_F(ViewReadPathTest, MmfsViewsListsTheViewsServed) {
  auto control = fs_->Lookup(kRootIno, kControlDirName);
  ASSERT_TRUE(control.ok());
  auto views = fs_->Lookup(control->ino, kViewsDirName);
  ASSERT_TRUE(views.ok()) << views.status().ToString();
  EXPECT_TRUE(S_ISDIR(views->mode));
  std::vector<std::string> names;
  ASSERT_TRUE(fs_->ReadDir(views->ino, 0, [&](std::string_view name, const Attr&, uint64_t) {
                    names.emplace_back(name);
                    return true;
                  }).ok());
  EXPECT_EQ(names, (std::vector<std::string>{".", "..", "32"}));
  auto link = fs_->Lookup(views->ino, "32");
  ASSERT_TRUE(link.ok());
  EXPECT_TRUE(S_ISLNK(link->mode));
  EXPECT_EQ(*fs_->ReadLink(link->ino), "../../@32");
  EXPECT_EQ(fs_->Lookup(views->ino, "64").status().code(), StatusCode::kNotFound);
  // Stats snapshots still work next to it (their inodes come after the views' links).
  auto stats = fs_->Lookup(control->ino, kStatsFileName);
  ASSERT_TRUE(stats.ok());
  EXPECT_NE(stats->ino, link->ino);
  EXPECT_GT(fs_->Read(stats->ino, 0, 1 << 20)->size, 0u);
  // With the view as the root, the link points at the root.
  FilesystemOptions o;
  o.root_view = 32;
  Make(o);
  control = fs_->Lookup(kRootIno, kControlDirName);
  views = fs_->Lookup(control->ino, kViewsDirName);
  ASSERT_TRUE(views.ok());
  EXPECT_EQ(*fs_->ReadLink(fs_->Lookup(views->ino, "32")->ino), "../..");
}

TEST_F(ViewReadPathTest, PerViewCountersInJsonAndPrometheus) {
  for (int i = 0; i < 3; ++i) Read("@32/many/" + Name(i) + ".jpg");
  StatsSnapshot s = fs_->Stats();
  ASSERT_EQ(s.views.size(), 1u);
  EXPECT_EQ(s.views[0].files_served, 3u);
  uint64_t bytes = resized_[0].size() + resized_[1].size() + resized_[2].size();
  EXPECT_EQ(s.views[0].bytes_served, bytes);
  const std::string prom = StatsPrometheus(s);
  EXPECT_NE(prom.find("mmfs_view_files_served_total{dataset=\"" + s.dataset.path +
                      "\",view=\"32\"} 3"),
            std::string::npos)
      << prom;
  EXPECT_NE(prom.find("mmfs_view_served_bytes_total{"), std::string::npos);
  EXPECT_NE(prom.find("mmfs_view_readahead_loads_total{"), std::string::npos);
}

}  // namespace
}  // namespace mmfs::fs
