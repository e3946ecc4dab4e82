// The view quality test: every view image decodes to within PSNR >= 35 dB of PIL's own
// Image.resize(size, LANCZOS) of its original, keeps its format, mode, EXIF orientation and ICC
// profile (tests/tools/view_quality.py, run with /usr/bin/python3, PIL and numpy), over a few
// hundred images of mixed kinds, plus the odd and damaged images of the pack corpus
// (tests/integration/make_image_corpus.py), whose damaged ones the build must name.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "fs/format/dataset.h"
#include "fs/format/local_dataset.h"
#include "fs/format/view_set.h"
#include "tests/origin_helper.h"
#include "tests/pack_helper.h"
#include "tests/test_util.h"
#include "tools/view/view_builder.h"

namespace mmfs::view {
namespace {

using testing::CollectingReporter;
using testing::TempDir;

constexpr char kPython[] = "/usr/bin/python3";

std::string Script() { return testing::SourceDir() + "/tests/tools/view_quality.py"; }

// Writes each resized image of view `side` of `dataset` to VIEW/<name> and its original to
// ORIG/<name>; returns how many.
int Extract(const std::string& dataset, uint32_t side, const std::string& orig_dir,
            const std::string& view_dir) {
  auto local = format::OpenLocalDataset(dataset);
  EXPECT_TRUE(local.ok()) << local.status().ToString();
  if (!local.ok()) return 0;
  const format::Dataset& ds = *local->dataset;
  origin::Origin& shards = *local->origin;
  format::ViewSet views = format::ViewSet::Open(ds, shards);
  const format::View* v = views.Find(side);
  EXPECT_NE(v, nullptr);
  if (v == nullptr) return 0;
  std::filesystem::create_directories(orig_dir);
  std::filesystem::create_directories(view_dir);
  int n = 0;
  for (uint64_t i = 0; i < v->record_count(); ++i) {
    auto r = v->GetRecord(i);
    EXPECT_TRUE(r.ok());
    if (!r.ok() || r->kind != static_cast<uint16_t>(format::ViewRecordKind::kResized)) continue;
    auto e = ds.GetEntry(r->entry);
    auto f = v->Lookup(*e);
    EXPECT_TRUE(f.ok());
    const std::string original = testing::ReadChecked(shards, ds, *e);
    const std::string resized = testing::ReadChecked(shards, *v, *f);
    testing::WriteFile(orig_dir + "/" + std::string(e->name), original);
    testing::WriteFile(view_dir + "/" + std::string(e->name), resized);
    ++n;
  }
  return n;
}

// Runs the check and returns its records by file name.
std::map<std::string, nlohmann::json> Check(const TempDir& tmp, const std::string& orig,
                                            const std::string& view) {
  auto r = testing::RunCommand({kPython, Script(), "check", orig, view, tmp / "check.json"}, 600);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(testing::ReadFile(tmp / "check.json"), nullptr, false);
  std::map<std::string, nlohmann::json> out;
  if (j.is_array()) {
    for (auto& rec : j) out[rec["name"].get<std::string>()] = rec;
  }
  return out;
}

TEST(ViewQualityTest, MixedImagesAreWithin35DbOfPilLanczos) {
  MMFS_SKIP_UNDER_TSAN();
  TempDir tmp;
  constexpr int kImages = 270;  // 30 of each of 9 kinds
  auto made = testing::RunCommand({kPython, Script(), "make", tmp / "src", std::to_string(kImages)}, 600);
  ASSERT_EQ(made.exit_code, 0) << made.output;
  ASSERT_TRUE(testing::PackFolder(tmp / "src", tmp / "ds").ok());
  CollectingReporter reporter;
  ViewOptions o;
  o.dataset = tmp / "ds";
  o.side = 256;
  o.jobs = 2;
  auto built = BuildView(o, reporter);
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  EXPECT_EQ(built->images, static_cast<uint64_t>(kImages));
  EXPECT_EQ(built->resized, static_cast<uint64_t>(kImages));  // every shorter side is >= 300
  ASSERT_EQ(Extract(tmp / "ds", 256, tmp / "orig", tmp / "view"), kImages);
  auto records = Check(tmp, tmp / "orig", tmp / "view");
  ASSERT_EQ(records.size(), static_cast<size_t>(kImages));
  std::map<std::string, int> per_kind;
  double worst = 1e9;
  std::string worst_name;
  for (const auto& [name, rec] : records) {
    EXPECT_TRUE(rec["problems"].empty()) << name << ": " << rec["problems"].dump();
    ASSERT_TRUE(rec.contains("psnr")) << name;
    double psnr = rec["psnr"].get<double>();
    EXPECT_GE(psnr, 35.0) << name;
    EXPECT_EQ(std::min(rec["size"][0].get<int>(), rec["size"][1].get<int>()), 256) << name;
    if (psnr < worst) {
      worst = psnr;
      worst_name = name;
    }
    per_kind[name.substr(5, name.find('.') - 5)]++;
  }
  EXPECT_EQ(per_kind.size(), 9u);
  for (const auto& [kind, n] : per_kind) EXPECT_EQ(n, 30) << kind;
  std::printf("lowest PSNR %.1f dB (%s) over %zu images\n", worst, worst_name.c_str(), records.size());
}

TEST(ViewQualityTest, PackCorpusOddImagesResizeAndDamagedOnesAreNamed) {
  MMFS_SKIP_UNDER_TSAN();
  TempDir tmp;
  std::filesystem::create_directories(tmp / "src");
  auto made = testing::RunCommand(
      {kPython, testing::SourceDir() + "/tests/integration/make_image_corpus.py", tmp / "src"}, 300);
  ASSERT_EQ(made.exit_code, 0) << made.output;
  // Packed with --on-bad keep, so the damaged images the packer catches are in the dataset.
  CollectingReporter packing;
  ASSERT_TRUE(testing::PackFolder(tmp / "src", tmp / "ds", &packing, pack::OnBadImage::kKeep).ok());
  CollectingReporter reporter;
  ViewOptions o;
  o.dataset = tmp / "ds";
  o.side = 20;
  o.jobs = 2;
  auto built = BuildView(o, reporter);  // on_bad: the dataset's (keep)
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  // Every damaged image that decodes no further is reported by name, as at pack.
  for (const char* bad : {"bad_cut_png.png", "bad_cut_webp.webp", "bad_html.jpg", "bad_empty.jpg"}) {
    bool named = false;
    for (const auto& w : reporter.warnings) named |= w.find(bad) != std::string::npos;
    EXPECT_TRUE(named) << bad << " not reported";
  }
  EXPECT_GE(built->bad_images, 4u);
  // The good ones (progressive, CMYK, gray, 4:4:4, EXIF + ICC, 6000x4000, RGBA, palette, 16-bit
  // PNG, lossy and lossless WebP) resize within the bound.
  ASSERT_GE(Extract(tmp / "ds", 20, tmp / "orig", tmp / "view"), 10);
  auto records = Check(tmp, tmp / "orig", tmp / "view");
  int ok_images = 0;
  for (const auto& [name, rec] : records) {
    if (name.rfind("ok_", 0) != 0) continue;
    ++ok_images;
    EXPECT_TRUE(rec["problems"].empty()) << name << ": " << rec["problems"].dump();
    ASSERT_TRUE(rec.contains("psnr")) << name;
    EXPECT_GE(rec["psnr"].get<double>(), 35.0) << name;
  }
  EXPECT_GE(ok_images, 10);
}

}  // namespace
}  // namespace mmfs::view
