// Views built through the library (tools/view/view_builder.h) and read back through the format
// reader (fs/format/view_set.h) and an origin of the test's own: no mount.
#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <vector>

#include "fs/format/dataset.h"
#include "fs/format/view_set.h"
#include "fs/origin/local_file_origin.h"
#include "tests/origin_helper.h"
#include "tests/pack_helper.h"
#include "tests/test_util.h"
#include "tools/view/view_builder.h"

namespace mmfs::view {
namespace {

using format::ViewFile;
using testing::CollectingReporter;
using testing::TempDir;
namespace fsys = std::filesystem;

// Cancels the build (as SIGINT does) once `after` images are committed.
class CancellingReporter final : public pack::PackReporter {
 public:
  explicit CancellingReporter(uint64_t after) : after_(after) {}
  void Warning(const std::string&) override {}
  void Phase(const std::string&) override {}
  void Progress(const pack::PackProgress& p) override {
    if (p.files_done >= after_) cancel.store(true);
  }
  std::atomic<bool> cancel{false};

 private:
  uint64_t after_;
};

std::pair<int, int> JpegSize(const std::string& bytes) {
  tjhandle h = tjInitDecompress();
  int w = 0, h2 = 0, sub = 0, cs = 0;
  int rc = tjDecompressHeader3(h, reinterpret_cast<const unsigned char*>(bytes.data()),
                               bytes.size(), &w, &h2, &sub, &cs);
  tjDestroy(h);
  return rc == 0 ? std::make_pair(w, h2) : std::make_pair(-1, -1);
}

class ViewBuilderTest : public ::testing::Test {
 protected:
  void SetUp() override { MMFS_SKIP_UNDER_TSAN(); }
  Result<ViewSummary> Build(const std::string& dataset, uint32_t side, int jobs = 2,
                            std::optional<pack::OnBadImage> on_bad = std::nullopt,
                            uint64_t shard_size = kDefaultViewShardSize) {
    ViewOptions o;
    o.dataset = dataset;
    o.side = side;
    o.jobs = jobs;
    o.on_bad = on_bad;
    o.shard_size = shard_size;
    return BuildView(o, reporter_);
  }
  std::unique_ptr<format::Dataset> Open(const std::string& dataset) {
    auto ds = format::Dataset::Open(dataset);
    EXPECT_TRUE(ds.ok()) << ds.status().ToString();
    return ds.ok() ? std::move(ds).value() : nullptr;
  }
  // The entry at `path` ("train/a/1.jpg").
  format::Entry Find(const format::Dataset& ds, const std::string& path) {
    auto e = ds.GetEntry(0);
    size_t start = 0;
    while (e.ok() && start < path.size()) {
      size_t slash = path.find('/', start);
      if (slash == std::string::npos) slash = path.size();
      e = ds.LookupChild(*e, path.substr(start, slash - start));
      start = slash + 1;
    }
    EXPECT_TRUE(e.ok()) << path << ": " << e.status().ToString();
    return e.ok() ? *e : format::Entry{};
  }
  // The published views of `ds`, their shards in a new origin (kept for ReadView).
  format::ViewSet Views(const format::Dataset& ds) {
    origins_.push_back(std::make_unique<origin::LocalFileOrigin>(ds.dir()));
    return format::ViewSet::Open(ds, *origins_.back());
  }
  // Resized file `f` of `v`, a view of the last Views().
  std::string ReadView(const format::View& v, const ViewFile& f) {
    return testing::ReadChecked(*origins_.back(), v, f);
  }
  std::string FileBytes(const std::string& path) { return testing::ReadFile(path); }

  TempDir tmp_;
  CollectingReporter reporter_;
  std::vector<std::unique_ptr<origin::LocalFileOrigin>> origins_;  // one per Views()
};

TEST(ViewSizeTest, ShorterSideBecomesNAndNothingIsUpscaled) {
  uint32_t w = 0, h = 0;
  ASSERT_TRUE(format::ViewSize(1000, 800, 256, &w, &h));
  EXPECT_EQ(w, 320u);
  EXPECT_EQ(h, 256u);
  ASSERT_TRUE(format::ViewSize(333, 1000, 256, &w, &h));
  EXPECT_EQ(w, 256u);
  EXPECT_EQ(h, 769u);  // 1000 * 256 / 333 = 768.77
  ASSERT_TRUE(format::ViewSize(300, 300, 256, &w, &h));
  EXPECT_EQ(w, 256u);
  EXPECT_EQ(h, 256u);
  EXPECT_FALSE(format::ViewSize(256, 4000, 256, &w, &h));
  EXPECT_FALSE(format::ViewSize(100, 80, 256, &w, &h));
}

TEST(ViewSideTest, OnlyPlainDecimalNamesAreViews) {
  uint32_t side = 0;
  EXPECT_TRUE(format::ParseViewSide("256", &side));
  EXPECT_EQ(side, 256u);
  EXPECT_FALSE(format::ParseViewSide(".256.partial-12", &side));
  EXPECT_FALSE(format::ParseViewSide("0256", &side));
  EXPECT_FALSE(format::ParseViewSide("8", &side));  // below kMinViewSide
  EXPECT_FALSE(format::ParseViewSide("25a", &side));
}

// The dataset in tests/fixtures was packed by mmfs before views existed.
TEST_F(ViewBuilderTest, DatasetPackedBeforeViewsGetsAView) {
  std::string ds_dir = tmp_ / "v1";
  fsys::copy(testing::SourceDir() + "/tests/fixtures/v1-dataset", ds_dir);
  std::string before_index = FileBytes(ds_dir + "/index.mmfs");
  std::string before_shard = FileBytes(ds_dir + "/shard-00000.mdb");
  std::string before_manifest = FileBytes(ds_dir + "/manifest.json");
  auto s = Build(ds_dir, 64);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->images, 7u);
  EXPECT_EQ(s->resized, 7u);  // every image's shorter side is 69..88 px
  // The originals are untouched.
  EXPECT_EQ(FileBytes(ds_dir + "/index.mmfs"), before_index);
  EXPECT_EQ(FileBytes(ds_dir + "/shard-00000.mdb"), before_shard);
  EXPECT_EQ(FileBytes(ds_dir + "/manifest.json"), before_manifest);

  auto ds = Open(ds_dir);
  ASSERT_NE(ds, nullptr);
  format::ViewSet views = Views(*ds);
  ASSERT_TRUE(views.problems().empty()) << views.problems()[0].ToString();
  ASSERT_EQ(views.views().size(), 1u);
  const format::View* v = views.Find(64);
  ASSERT_NE(v, nullptr);
  // A JPEG: resized, its bytes decode to the recorded size with the shorter side 64.
  format::Entry jpg = Find(*ds, "train/class_000/00000000.jpg");  // 88 x 97
  auto f = v->Lookup(jpg);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->source, ViewFile::Source::kView);
  EXPECT_EQ(f->width, 64);
  EXPECT_EQ(f->height, 71);  // 97 * 64 / 88 = 70.5
  EXPECT_EQ(JpegSize(ReadView(*v, *f)), std::make_pair(64, 71));
  // The PNG is resized too and stays a PNG.
  auto png = v->Lookup(Find(*ds, "train/class_001/00000007.png"));
  ASSERT_TRUE(png.ok());
  ASSERT_EQ(png->source, ViewFile::Source::kView);
  EXPECT_EQ(ReadView(*v, *png).substr(1, 3), "PNG");
  // Captions and .json: the originals, same shard span and checksum.
  for (const char* path : {"train/class_000/00000000.txt", "train/class_000/00000000.json"}) {
    format::Entry e = Find(*ds, path);
    auto o = v->Lookup(e);
    ASSERT_TRUE(o.ok());
    EXPECT_EQ(o->source, ViewFile::Source::kOriginal) << path;
    EXPECT_EQ(o->size, e.record.size);
    EXPECT_EQ(o->checksum, e.record.checksum);
    EXPECT_EQ(o->data_offset, e.record.data_offset);
  }
  // Directories are the same too.
  auto dir = v->Lookup(Find(*ds, "train/class_000"));
  ASSERT_TRUE(dir.ok());
  EXPECT_EQ(dir->source, ViewFile::Source::kOriginal);
}

TEST_F(ViewBuilderTest, SmallImagesAreServedAsTheyAreNeverUpscaled) {
  testing::WriteFile(tmp_ / "src/a/small.jpg", testing::MakeJpeg(120, 100, 1));
  testing::WriteFile(tmp_ / "src/a/wide.jpg", testing::MakeJpeg(300, 200, 2));
  testing::WriteFile(tmp_ / "src/a/wide.txt", "a caption");
  ASSERT_TRUE(testing::PackFolder(tmp_ / "src", tmp_ / "ds").ok());
  auto s = Build(tmp_ / "ds", 128);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->resized, 1u);
  EXPECT_EQ(s->unchanged_images, 1u);
  auto ds = Open(tmp_ / "ds");
  format::ViewSet views = Views(*ds);
  const format::View* v = views.Find(128);
  ASSERT_NE(v, nullptr);
  auto small = v->Lookup(Find(*ds, "a/small.jpg"));
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(small->source, ViewFile::Source::kOriginal);
  auto wide = v->Lookup(Find(*ds, "a/wide.jpg"));
  ASSERT_TRUE(wide.ok());
  ASSERT_EQ(wide->source, ViewFile::Source::kView);
  EXPECT_EQ(JpegSize(ReadView(*v, *wide)), std::make_pair(192, 128));
}

TEST_F(ViewBuilderTest, TheSameViewForAnyThreadCount) {
  for (int i = 0; i < 30; ++i) {
    testing::WriteFile(tmp_ / ("src/d/" + std::to_string(100 + i) + ".jpg"),
                       testing::MakeJpeg(200 + i * 7, 160 + i * 3, static_cast<unsigned>(i)));
  }
  ASSERT_TRUE(testing::PackFolder(tmp_ / "src", tmp_ / "one").ok());
  fsys::copy(tmp_ / "one", tmp_ / "three", fsys::copy_options::recursive);
  ASSERT_TRUE(Build(tmp_ / "one", 64, 1).ok());
  ASSERT_TRUE(Build(tmp_ / "three", 64, 3).ok());
  EXPECT_EQ(FileBytes(tmp_ / "one/views/64/view.mmfs"), FileBytes(tmp_ / "three/views/64/view.mmfs"));
  EXPECT_EQ(FileBytes(tmp_ / "one/views/64/shard-00000.mdb"),
            FileBytes(tmp_ / "three/views/64/shard-00000.mdb"));
}

// The quality asked for (ViewOptions::quality, what --view-quality sets) reaches the encoder and
// the view's manifest: the same images at quality 40 take fewer bytes than at 95, and each view
// records the quality it was built with.
TEST_F(ViewBuilderTest, TheQualityAskedForIsUsedAndRecorded) {
  for (int i = 0; i < 8; ++i) {
    testing::WriteFile(tmp_ / ("src/d/" + std::to_string(100 + i) + ".jpg"),
                       testing::MakeJpeg(320, 240, static_cast<unsigned>(i)));
  }
  ASSERT_TRUE(testing::PackFolder(tmp_ / "src", tmp_ / "q95").ok());
  fsys::copy(tmp_ / "q95", tmp_ / "q40", fsys::copy_options::recursive);
  uint64_t view_bytes[2] = {0, 0};
  const int qualities[2] = {95, 40};
  for (int k = 0; k < 2; ++k) {
    std::string name = "q";
    name += std::to_string(qualities[k]);  // appended: GCC 12 -O3 warns on "q" + to_string
    const std::string dir = tmp_ / name;
    ViewOptions o;
    o.dataset = dir;
    o.side = 96;
    o.quality = qualities[k];
    auto built = BuildView(o, reporter_);
    ASSERT_TRUE(built.ok()) << built.status().ToString();
    EXPECT_EQ(built->resized, 8u);
    auto ds = Open(dir);
    ASSERT_NE(ds, nullptr);
    format::ViewSet views = Views(*ds);
    const format::View* v = views.Find(96);
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->manifest().quality, static_cast<uint32_t>(qualities[k]));
    for (int i = 0; i < 8; ++i) {
      std::string path = "d/";
      path += std::to_string(100 + i);
      path += ".jpg";
      auto f = v->Lookup(Find(*ds, path));
      ASSERT_TRUE(f.ok()) << f.status().ToString();
      ASSERT_EQ(f->source, ViewFile::Source::kView);
      EXPECT_EQ(JpegSize(ReadView(*v, *f)), std::make_pair(128, 96));
      view_bytes[k] += f->size;
    }
  }
  EXPECT_LT(view_bytes[1], view_bytes[0]) << "quality 40 should take fewer bytes than 95";
}

TEST_F(ViewBuilderTest, InterruptedBuildNeverShowsAndResumeFinishesIt) {
  for (int i = 0; i < 80; ++i) {
    testing::WriteFile(tmp_ / ("src/d/" + std::to_string(100 + i) + ".jpg"),
                       testing::MakeJpeg(400, 300, static_cast<unsigned>(i)));
  }
  ASSERT_TRUE(testing::PackFolder(tmp_ / "src", tmp_ / "ds").ok());
  fsys::copy(tmp_ / "ds", tmp_ / "whole", fsys::copy_options::recursive);
  const uint64_t shard = 64 << 10;
  auto whole = Build(tmp_ / "whole", 160, 2, std::nullopt, shard);
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  ASSERT_GE(whole->shards, 3u) << "the test needs several view shards";

  CancellingReporter cancelling(60);
  ViewOptions o;
  o.dataset = tmp_ / "ds";
  o.side = 160;
  o.jobs = 2;
  o.shard_size = shard;
  o.cancel = &cancelling.cancel;
  auto cut = BuildView(o, cancelling);
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.status().code(), StatusCode::kCancelled);
  EXPECT_NE(cut.status().message().find("--resume"), std::string::npos) << cut.status().message();
  // Nothing published: a reader sees no view, only an unpublished build.
  auto ds = Open(tmp_ / "ds");
  EXPECT_TRUE(Views(*ds).views().empty());
  auto partials = ListPartials(tmp_ / "ds");
  ASSERT_EQ(partials.size(), 1u);
  EXPECT_EQ(partials[0].side, 160u);
  EXPECT_GE(partials[0].finished_shards, 1u);

  o.cancel = nullptr;
  o.resume = true;
  auto resumed = BuildView(o, reporter_);
  ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
  EXPECT_GT(resumed->resumed, 0u);
  EXPECT_EQ(resumed->resized, 80u);
  EXPECT_TRUE(ListPartials(tmp_ / "ds").empty());
  // Byte for byte the view an uninterrupted build makes.
  EXPECT_EQ(FileBytes(tmp_ / "ds/views/160/view.mmfs"), FileBytes(tmp_ / "whole/views/160/view.mmfs"));
  for (uint64_t i = 0; i < whole->shards; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "/views/160/shard-%05u.mdb", static_cast<unsigned>(i));
    EXPECT_EQ(FileBytes(tmp_ / "ds" + name), FileBytes(tmp_ / "whole" + name)) << name;
  }
}

TEST_F(ViewBuilderTest, DamagedSourceImageFollowsOnBad) {
  std::string good = testing::MakeJpeg(300, 240, 3);
  testing::WriteFile(tmp_ / "src/a/1.jpg", good);
  testing::WriteFile(tmp_ / "src/a/2.jpg", good.substr(0, good.size() / 2));  // truncated
  testing::WriteFile(tmp_ / "src/a/2.txt", "its caption");
  CollectingReporter packing;
  ASSERT_TRUE(testing::PackFolder(tmp_ / "src", tmp_ / "ds", &packing, pack::OnBadImage::kKeep).ok());

  auto failed = Build(tmp_ / "ds", 64, 2, pack::OnBadImage::kFail);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("a/2.jpg"), std::string::npos) << failed.status().message();
  EXPECT_FALSE(fsys::exists(tmp_ / "ds/views/64"));
  EXPECT_TRUE(ListPartials(tmp_ / "ds").empty());

  // Default: what the dataset was packed with (keep): the original serves, with a warning.
  reporter_.warnings.clear();
  auto kept = Build(tmp_ / "ds", 64);
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  EXPECT_EQ(kept->bad_images, 1u);
  ASSERT_EQ(reporter_.warnings.size(), 1u);
  EXPECT_NE(reporter_.warnings[0].find("a/2.jpg"), std::string::npos);
  auto ds = Open(tmp_ / "ds");
  {
    format::ViewSet views = Views(*ds);
    auto f = views.Find(64)->Lookup(Find(*ds, "a/2.jpg"));
    ASSERT_TRUE(f.ok());
    EXPECT_EQ(f->source, ViewFile::Source::kOriginal);
  }
  ASSERT_TRUE(RemoveView(tmp_ / "ds", 64).ok());
  EXPECT_FALSE(fsys::exists(tmp_ / "ds/views/64"));
  EXPECT_EQ(RemoveView(tmp_ / "ds", 64).code(), StatusCode::kNotFound);

  auto skipped = Build(tmp_ / "ds", 64, 2, pack::OnBadImage::kSkip);
  ASSERT_TRUE(skipped.ok());
  EXPECT_EQ(skipped->omitted, 1u);
  format::ViewSet views = Views(*ds);
  auto f = views.Find(64)->Lookup(Find(*ds, "a/2.jpg"));
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->source, ViewFile::Source::kOmitted);
  auto caption = views.Find(64)->Lookup(Find(*ds, "a/2.txt"));
  ASSERT_TRUE(caption.ok());
  EXPECT_EQ(caption->source, ViewFile::Source::kOriginal);
}

TEST_F(ViewBuilderTest, ViewOfAnotherIndexOrDamagedIsLeftOutNamingWhy) {
  testing::WriteFile(tmp_ / "src/a/1.jpg", testing::MakeJpeg(300, 240, 3));
  ASSERT_TRUE(testing::PackFolder(tmp_ / "src", tmp_ / "ds").ok());
  ASSERT_TRUE(Build(tmp_ / "ds", 64).ok());
  ASSERT_TRUE(Build(tmp_ / "ds", 96).ok());
  ASSERT_TRUE(Build(tmp_ / "ds", 128).ok());
  // view 64: claims another base index; view 96: its shard cut short (refused by the origin
  // when the view's tree is added); view 128: its index cut short.
  std::string m = FileBytes(tmp_ / "ds/views/64/manifest.json");
  size_t at = m.find("\"index_xxh3\": \"");
  ASSERT_NE(at, std::string::npos);
  m[at + 15] = m[at + 15] == '0' ? '1' : '0';
  testing::WriteFile(tmp_ / "ds/views/64/manifest.json", m);
  const std::string shard96 = tmp_ / "ds/views/96/shard-00000.mdb";
  const uint64_t size96 = fsys::file_size(shard96);
  fsys::resize_file(shard96, 4096);
  fsys::resize_file(tmp_ / "ds/views/128/view.mmfs", 70);
  auto ds = Open(tmp_ / "ds");
  format::ViewSet views = Views(*ds);
  EXPECT_TRUE(views.views().empty());
  ASSERT_EQ(views.problems().size(), 3u);
  EXPECT_NE(views.problems()[0].message().find("views/64: built for another index"), std::string::npos)
      << views.problems()[0].message();
  EXPECT_EQ(views.problems()[1].message(), shard96 + ": size 4096 bytes, the manifest says " +
                                               std::to_string(size96))
      << views.problems()[1].message();
  EXPECT_NE(views.problems()[2].message().find("view.mmfs: size 70"), std::string::npos)
      << views.problems()[2].message();
  // No tree of a view left out stays in the origin: each failed view's tree is free again.
  EXPECT_EQ(origins_.back()->ShardSize({1, 0}).status().code(), StatusCode::kNotFound);
}

// A view's shard without LMDB's magic is refused when its tree is added, in the view's words.
TEST_F(ViewBuilderTest, ViewShardWithoutLmdbMagicIsLeftOut) {
  testing::WriteFile(tmp_ / "src/a/1.jpg", testing::MakeJpeg(300, 240, 3));
  ASSERT_TRUE(testing::PackFolder(tmp_ / "src", tmp_ / "ds").ok());
  ASSERT_TRUE(Build(tmp_ / "ds", 64).ok());
  const std::string shard = tmp_ / "ds/views/64/shard-00000.mdb";
  std::string bytes = FileBytes(shard);
  bytes.replace(16, 4, "XXXX");
  testing::WriteFile(shard, bytes);
  auto ds = Open(tmp_ / "ds");
  format::ViewSet views = Views(*ds);
  EXPECT_TRUE(views.views().empty());
  ASSERT_EQ(views.problems().size(), 1u);
  EXPECT_EQ(views.problems()[0].message(), shard + ": not an LMDB file (no meta page magic)");
}

}  // namespace
}  // namespace mmfs::view
