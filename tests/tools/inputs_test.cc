// Packer inputs other than a plain folder: WebDataset tars (plain and gzip), several sources,
// Hugging Face metadata.jsonl, COCO captions; and the checks on hostile tar members.

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>
#include <png.h>
#include <webp/decode.h>
#include <webp/encode.h>

#include <cstring>

#include <atomic>
#include <filesystem>
#include <random>
#include <nlohmann/json.hpp>

#include "fs/format/dataset.h"
#include "tests/pack_helper.h"
#include "tests/test_util.h"
#include "tests/tools/pack_fixture.h"
#include "tools/pack/image_check.h"
#include "tools/pack/packer.h"
#include "tools/pack/tar_source.h"

namespace mmfs::pack {
namespace {

using testing::CollectingReporter;
using testing::MakeJpeg;
using testing::TempDir;
using testing::WriteFile;

TEST(TarPathTest, MemberPathsAreNormalisedOrRefused) {
  EXPECT_EQ(*NormaliseMemberPath("./a/./b.jpg"), "a/b.jpg");
  EXPECT_EQ(*NormaliseMemberPath("a//b.jpg"), "a/b.jpg");
  EXPECT_FALSE(NormaliseMemberPath("/etc/passwd").ok());
  EXPECT_FALSE(NormaliseMemberPath("a/../../x").ok());
  EXPECT_FALSE(NormaliseMemberPath("./").ok());
  EXPECT_FALSE(NormaliseMemberPath("").ok());
  EXPECT_FALSE(NormaliseMemberPath(std::string(256, 'x')).ok());
  EXPECT_EQ(TarStem("00012.tar.gz"), "00012");
  EXPECT_TRUE(IsTarName("x.tgz"));
  EXPECT_FALSE(IsTarName("x.tar.bz2"));
}

TEST_F(InputsTest, WebDatasetFolderOfTarsBecomesFoldersOfSamples) {
  std::string a = MakeJpeg(16, 8, 1), b = MakeJpeg(8, 8, 2), c = MakeJpeg(4, 4, 3);
  WriteTar(tmp_ / "wds/00000.tar",
           {{"000000000.jpg", a},
            {"000000000.txt", "caption zero"},
            {"000000000.json", "{\"key\": 0}"},
            {"./000000001.jpg", b},
            {"000000001.txt", "caption one"},
            {"000000002.txt", "download failed: no image"},
            {"000000002.json", "{}"},
            {"../escape.txt", "x"},
            {"/etc/abs.txt", "x"},
            {"link.jpg", "", AE_IFLNK, "/etc/passwd"},
            {"hard.jpg", "", AE_IFREG, "000000000.jpg"},
            {"fifo", "", AE_IFIFO},
            {"sub/000000003.jpg", c}});
  WriteTar(tmp_ / "wds/00001.tar.gz", {{"000010000.jpg", c}, {"000010000.txt", "gz caption"}},
           /*gzip=*/true);
  WriteFile(tmp_ / "wds/00000.parquet", "not a tar");
  auto s = Pack({tmp_ / "wds"});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(Read("00000/000000000.jpg"), a);
  EXPECT_EQ(Read("00000/000000000.txt"), "caption zero");
  EXPECT_EQ(Read("00000/000000001.jpg"), b);
  EXPECT_EQ(Read("00000/sub/000000003.jpg"), c);
  EXPECT_EQ(Read("00001/000010000.txt"), "gz caption");
  // Members of one sample are one record; a sample without an image is left out and reported.
  EXPECT_EQ(SampleOf("00000/000000000.jpg"), SampleOf("00000/000000000.json"));
  EXPECT_NE(SampleOf("00000/000000000.jpg"), SampleOf("00000/000000001.jpg"));
  EXPECT_EQ(Read("00000/000000002.txt"), "<missing>");
  EXPECT_EQ(s->samples_without_image, 1u);
  EXPECT_TRUE(Warned("sample '000000002' in ")) << reporter_.warnings.size();
  // Hostile members are never written, each named in a warning.
  EXPECT_EQ(Read("escape.txt"), "<missing>");
  EXPECT_EQ(Read("00000/link.jpg"), "<missing>");
  EXPECT_EQ(Read("00000/hard.jpg"), "<missing>");
  EXPECT_TRUE(Warned("'../escape.txt': '..' in the path"));
  EXPECT_TRUE(Warned("'/etc/abs.txt': absolute path"));
  EXPECT_TRUE(Warned("'link.jpg': a symbolic link"));
  EXPECT_TRUE(Warned("'hard.jpg': a hard link"));
  EXPECT_TRUE(Warned("'fifo': not a regular file"));
  EXPECT_TRUE(Warned("not tar files"));
  EXPECT_EQ(s->files, 8u);  // 3 + 2 + 1 in 00000, 2 in 00001
  EXPECT_EQ(ds_->manifest().source_layout, "webdataset");
}

TEST_F(InputsTest, PackingIsDeterministic) {
  WriteTar(tmp_ / "a.tar", {{"1.jpg", MakeJpeg(8, 8)}, {"1.txt", "one"}});
  WriteFile(tmp_ / "f/x/2.jpg", MakeJpeg(8, 4));
  ASSERT_TRUE(Pack({tmp_ / "a.tar", tmp_ / "f"}).ok());
  std::filesystem::rename(tmp_ / "out.mmfs", tmp_ / "first.mmfs");
  ASSERT_TRUE(Pack({tmp_ / "a.tar", tmp_ / "f"}).ok());
  for (const char* f : {"index.mmfs", "shard-00000.mdb"}) {
    EXPECT_EQ(testing::ReadFile(tmp_ / (std::string("first.mmfs/") + f)),
              testing::ReadFile(tmp_ / (std::string("out.mmfs/") + f)))
        << f;
  }
}

TEST_F(InputsTest, JobsDoNotChangeTheOutput) {
  for (int i = 0; i < 150; ++i) {
    std::string key = "f/c" + std::to_string(i % 3) + "/" + std::to_string(1000 + i);
    WriteFile(tmp_ / (key + ".jpg"), MakeJpeg(8 + i % 16, 8, static_cast<unsigned>(i)));
    WriteFile(tmp_ / (key + ".txt"), "caption " + std::to_string(i));
  }
  WriteFile(tmp_ / "f/c1/1003.jpg", "<html>a broken image</html>");
  std::vector<Member> members;
  for (int i = 0; i < 60; ++i) {
    members.push_back({std::to_string(5000 + i) + ".jpg", MakeJpeg(8, 8, static_cast<unsigned>(i))});
    members.push_back({std::to_string(5000 + i) + ".txt", "tar caption"});
  }
  WriteTar(tmp_ / "t/00000.tar", members);
  PackOptions o;
  o.on_bad = OnBadImage::kSkip;
  auto first = Pack({tmp_ / "f", tmp_ / "t/00000.tar"}, o);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  std::filesystem::rename(tmp_ / "out.mmfs", tmp_ / "one.mmfs");
  o.jobs = 4;
  auto s = Pack({tmp_ / "f", tmp_ / "t/00000.tar"}, o);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->bad_images, 1u);
  EXPECT_EQ(s->samples, first->samples);
  for (const auto& e : std::filesystem::directory_iterator(tmp_ / "one.mmfs")) {
    std::string name = e.path().filename();
    if (name == "manifest.json") continue;  // holds the creation time
    EXPECT_EQ(testing::ReadFile(e.path()), testing::ReadFile(tmp_ / ("out.mmfs/" + name))) << name;
  }
  // With --on-bad fail the error names the first bad file in input order, whatever the threads.
  WriteFile(tmp_ / "f/c2/1008.jpg", "also broken");
  o.on_bad = OnBadImage::kFail;
  o.force = true;
  auto fail = Pack({tmp_ / "f"}, o);
  ASSERT_FALSE(fail.ok());
  EXPECT_NE(fail.status().message().find("c1/1003.jpg"), std::string::npos)
      << fail.status().message();
}

// Sets the cancel flag once `after` files are done, as Ctrl-C would.
class CancellingReporter final : public PackReporter {
 public:
  CancellingReporter(std::atomic<bool>* cancel, uint64_t after) : cancel_(cancel), after_(after) {}
  void Warning(const std::string& m) override { warnings.push_back(m); }
  void Phase(const std::string& m) override { phases.push_back(m); }
  void Progress(const PackProgress& p) override {
    if (p.files_done >= after_) cancel_->store(true);
  }
  std::vector<std::string> warnings, phases;

 private:
  std::atomic<bool>* cancel_;
  uint64_t after_;
};

TEST_F(InputsTest, ResumeAfterAnInterruptionGivesTheSameDataset) {
  std::mt19937_64 rng(5);
  auto random_bytes = [&](size_t n) {
    std::string b(n, '\0');
    for (char& c : b) c = static_cast<char>(rng());
    return b;
  };
  for (int i = 0; i < 240; ++i) {
    WriteFile(tmp_ / ("r/d" + std::to_string(i / 80) + "/" + std::to_string(1000 + i) + ".bin"),
              random_bytes(16 << 10));
  }
  std::vector<Member> members;
  for (int i = 0; i < 80; ++i) members.push_back({std::to_string(i) + ".bin", random_bytes(16 << 10)});
  WriteTar(tmp_ / "r2/00000.tar", members);
  PackOptions o;
  o.shard_size = 1 << 20;
  o.jobs = 2;
  std::vector<std::string> sources = {tmp_ / "r", tmp_ / "r2/00000.tar"};
  // The reference: one uninterrupted pack.
  o.sources = sources;
  o.destination = tmp_ / "ref.mmfs";
  CollectingReporter quiet;
  ASSERT_TRUE(pack::Pack(o, quiet).ok());

  std::atomic<bool> cancel{false};
  o.destination = tmp_ / "out.mmfs";
  o.cancel = &cancel;
  CancellingReporter interrupting(&cancel, 200);
  auto first = pack::Pack(o, interrupting);
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(first.status().code(), StatusCode::kCancelled);
  EXPECT_NE(first.status().message().find("--resume"), std::string::npos) << first.status().message();
  EXPECT_FALSE(std::filesystem::exists(tmp_ / "out.mmfs"));

  // Other options do not resume it, and do not destroy it either.
  o.cancel = nullptr;
  o.resume = true;
  o.shard_size = 2 << 20;
  auto wrong = pack::Pack(o, quiet);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("other sources or options"), std::string::npos)
      << wrong.status().message();

  o.shard_size = 1 << 20;
  CancellingReporter resumed(&cancel, UINT64_MAX);
  auto second = pack::Pack(o, resumed);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  bool said = false;
  for (const auto& ph : resumed.phases) said |= ph.find("resuming after") != std::string::npos;
  EXPECT_TRUE(said);
  EXPECT_GT(second->shards, 3u);
  for (const auto& e : std::filesystem::directory_iterator(tmp_ / "ref.mmfs")) {
    std::string name = e.path().filename();
    if (name == "manifest.json") continue;  // holds the creation time
    EXPECT_EQ(testing::ReadFile(e.path()), testing::ReadFile(tmp_ / ("out.mmfs/" + name))) << name;
  }
  EXPECT_FALSE(std::filesystem::exists(tmp_ / "out.mmfs/checkpoint.jsonl"));
  // Nothing of the interrupted pack is left next to DST.
  int leftovers = 0;
  for (const auto& e : std::filesystem::directory_iterator(tmp_.path())) {
    leftovers += e.path().filename().string().find(".partial-") != std::string::npos;
  }
  EXPECT_EQ(leftovers, 0);
}

TEST_F(InputsTest, DamagedOrDuplicateTarIsAClearError) {
  WriteTar(tmp_ / "dup.tar", {{"1.jpg", MakeJpeg(8, 8)}, {"1.jpg", MakeJpeg(8, 8)}});
  auto s = Pack({tmp_ / "dup.tar"});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("member '1.jpg' appears twice"), std::string::npos)
      << s.status().message();
  WriteTar(tmp_ / "cut.tar", {{"1.jpg", MakeJpeg(64, 64)}, {"2.jpg", MakeJpeg(64, 64)}});
  std::string bytes = testing::ReadFile(tmp_ / "cut.tar");
  WriteFile(tmp_ / "cut.tar", bytes.substr(0, 1200));
  s = Pack({tmp_ / "cut.tar"});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("cut.tar"), std::string::npos) << s.status().message();
  WriteFile(tmp_ / "notar.tar", "this is not a tar file at all, just text");
  s = Pack({tmp_ / "notar.tar"});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("notar.tar"), std::string::npos) << s.status().message();
}

// A tar error after many samples, with samples still being checked on other threads: they must
// stop before the members they point at are freed (ASan builds catch it if they do not).
TEST_F(InputsTest, ATarErrorWithSamplesInFlightStopsThemFirst) {
  std::vector<Member> members;
  for (int i = 0; i < 64; ++i) {
    members.push_back({std::to_string(100 + i) + ".jpg", MakeJpeg(32, 32, i + 1)});
    members.push_back({std::to_string(100 + i) + ".txt", "caption"});
  }
  members.push_back({"163.txt", "again"});
  WriteTar(tmp_ / "late-dup.tar", members);
  PackOptions o;
  o.jobs = 4;
  auto s = Pack({tmp_ / "late-dup.tar"}, o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("member '163.txt' appears twice"), std::string::npos)
      << s.status().message();
  EXPECT_FALSE(std::filesystem::exists(tmp_ / "out.mmfs"));
}

TEST_F(InputsTest, SeveralSourcesMergeAndCollisionsAreErrors) {
  WriteFile(tmp_ / "s1/train/cat/1.jpg", MakeJpeg(8, 8));
  WriteFile(tmp_ / "s2/train/dog/2.jpg", MakeJpeg(8, 8));
  WriteFile(tmp_ / "s2/val/cat/3.jpg", MakeJpeg(8, 8));
  auto s = Pack({tmp_ / "s1", tmp_ / "s2"});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->files, 3u);
  EXPECT_NE(Read("train/cat/1.jpg"), "<missing>");
  EXPECT_NE(Read("train/dog/2.jpg"), "<missing>");
  WriteFile(tmp_ / "s3/train/cat/1.jpg", MakeJpeg(8, 8));
  PackOptions o;
  o.force = true;
  s = Pack({tmp_ / "s1", tmp_ / "s3"}, o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("'train/cat/1.jpg' is in " + (tmp_ / "s3")),
            std::string::npos)
      << s.status().message();
}

TEST_F(InputsTest, HuggingFaceMetadataBecomesCaptionFiles) {
  WriteFile(tmp_ / "hf/train/a.jpg", MakeJpeg(8, 8));
  WriteFile(tmp_ / "hf/train/images/b.jpg", MakeJpeg(8, 8));
  WriteFile(tmp_ / "hf/train/c.jpg", MakeJpeg(8, 8));
  WriteFile(tmp_ / "hf/train/metadata.jsonl",
            "{\"file_name\": \"a.jpg\", \"text\": \"a red apple\", \"score\": 0.5}\n"
            "{\"file_name\": \"images/b.jpg\", \"caption\": \"a blue ball\"}\n"
            "\n"
            "{\"file_name\": \"c.jpg\", \"other\": 1}\n"
            "{\"file_name\": \"gone.jpg\", \"text\": \"missing image\"}\n");
  auto s = Pack({tmp_ / "hf"});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(Read("train/a.txt"), "a red apple");
  EXPECT_EQ(nlohmann::json::parse(Read("train/a.json"))["score"], 0.5);
  EXPECT_EQ(Read("train/images/b.txt"), "a blue ball");
  EXPECT_EQ(Read("train/c.txt"), "<missing>");
  EXPECT_NE(Read("train/c.json"), "<missing>");
  EXPECT_NE(Read("train/metadata.jsonl"), "<missing>");  // HF's own loader still works
  EXPECT_EQ(SampleOf("train/a.jpg"), SampleOf("train/a.txt"));
  EXPECT_TRUE(Warned("1 rows name an image that is not in the folder"));
  EXPECT_TRUE(Warned("1 rows have no caption field"));
  EXPECT_EQ(s->captions_added, 5u);
  EXPECT_EQ(ds_->manifest().source_layout, "hf-imagefolder");

  // --caption-field picks another column; an existing key.txt is a collision.
  PackOptions o;
  o.force = true;
  o.caption_fields = {"other"};
  WriteFile(tmp_ / "hf/train/metadata.jsonl", "{\"file_name\": \"c.jpg\", \"other\": \"x\"}\n");
  ds_.reset();
  ASSERT_TRUE(Pack({tmp_ / "hf"}, o).ok());
  EXPECT_EQ(Read("train/c.txt"), "x");
  WriteFile(tmp_ / "hf/train/c.txt", "already here");
  auto clash = Pack({tmp_ / "hf"}, o);
  ASSERT_FALSE(clash.ok());
  EXPECT_NE(clash.status().message().find("metadata.jsonl line 1: would create 'c.txt'"),
            std::string::npos)
      << clash.status().message();
  WriteFile(tmp_ / "hf/train/metadata.jsonl", "{\"file_name\": \"c.jpg\", \"other\": \n");
  auto broken = Pack({tmp_ / "hf"}, o);
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.status().message().find("line 1: not a JSON object"), std::string::npos);
}

TEST_F(InputsTest, HuggingFaceMetadataCsvWithQuoting) {
  WriteFile(tmp_ / "hf/train/a.jpg", MakeJpeg(8, 8));
  WriteFile(tmp_ / "hf/train/b.jpg", MakeJpeg(8, 8));
  WriteFile(tmp_ / "hf/train/metadata.csv",
            "file_name,text,source\r\n"
            "a.jpg,\"a cat, sitting\",web\r\n"
            "b.jpg,\"two lines\nand \"\"quotes\"\"\",book\r\n");
  auto s = Pack({tmp_ / "hf"});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(Read("train/a.txt"), "a cat, sitting");
  EXPECT_EQ(Read("train/b.txt"), "two lines\nand \"quotes\"");
  EXPECT_EQ(nlohmann::json::parse(Read("train/b.json"))["source"], "book");
  WriteFile(tmp_ / "hf/train/metadata.csv", "file_name,text\na.jpg,x,extra\n");
  PackOptions o;
  o.force = true;
  auto bad = Pack({tmp_ / "hf"}, o);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("metadata.csv row 2: 3 fields, the header has 2"),
            std::string::npos)
      << bad.status().message();
}

TEST_F(InputsTest, NamesAndValuesThatAreNotUtf8) {
  // File names are bytes; JSON wants UTF-8. Found by fuzz_metadata: a CSV value like this used to
  // throw from the JSON writer and abort the pack.
  std::string latin1 = "caf\xe9";
  WriteFile(tmp_ / ("u/train/" + latin1 + ".jpg"), MakeJpeg(8, 8));
  WriteFile(tmp_ / "u/train/metadata.csv", "file_name,text\n" + latin1 + ".jpg,\"\xff\xfe\"\n");
  PackOptions o;
  o.jobs = 2;
  auto s = Pack({tmp_ / ("u")}, o);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(Read("train/" + latin1 + ".txt"), "\xff\xfe");
  EXPECT_NE(Read("train/" + latin1 + ".json").find("\xef\xbf\xbd"), std::string::npos);  // U+FFFD
}

TEST_F(InputsTest, CocoCaptionsBecomeOneFilePerImage) {
  WriteFile(tmp_ / "coco/000000000009.jpg", MakeJpeg(8, 8));
  WriteFile(tmp_ / "coco/000000000025.jpg", MakeJpeg(8, 8));
  WriteFile(tmp_ / "ann.json",
            R"({"images": [{"id": 9, "file_name": "000000000009.jpg"},
                           {"id": 25, "file_name": "000000000025.jpg"},
                           {"id": 30, "file_name": "000000000030.jpg"}],
                "annotations": [{"image_id": 9, "id": 1, "caption": "A plate of food."},
                                {"image_id": 25, "id": 2, "caption": "A giraffe.\n"},
                                {"image_id": 9, "id": 3, "caption": "Broccoli and bread."}]})");
  PackOptions o;
  o.coco_annotations = tmp_ / "ann.json";
  auto s = Pack({tmp_ / "coco"}, o);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(Read("000000000009.txt"), "A plate of food.\nBroccoli and bread.\n");
  EXPECT_EQ(Read("000000000025.txt"), "A giraffe.\n");
  EXPECT_TRUE(Warned("1 of 3 images are not in the source folder"));
  EXPECT_EQ(ds_->manifest().source_layout, "coco");
  WriteFile(tmp_ / "ann.json", R"({"images": 3})");
  o.force = true;
  auto bad = Pack({tmp_ / "coco"}, o);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("not COCO captions"), std::string::npos);
}

TEST(ImageCheckTest, PngAndWebpHeadersSizesAndTruncation) {
  std::vector<uint8_t> rgb(12 * 7 * 3, 90);
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  image.width = 12;
  image.height = 7;
  image.format = PNG_FORMAT_RGB;
  png_alloc_size_t size = 0;
  ASSERT_NE(png_image_write_to_memory(&image, nullptr, &size, 0, rgb.data(), 0, nullptr), 0);
  std::string png(size, '\0');
  ASSERT_NE(png_image_write_to_memory(&image, png.data(), &size, 0, rgb.data(), 0, nullptr), 0);
  png.resize(size);
  auto ok = CheckPng(png);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->width, 12u);
  EXPECT_EQ(ok->height, 7u);
  EXPECT_NE(CheckPng(png.substr(0, png.size() - 20)).status().message().find("truncated PNG"),
            std::string::npos);
  EXPECT_NE(CheckPng("<html>").status().message().find("not a PNG"), std::string::npos);

  uint8_t* out = nullptr;
  size_t n = WebPEncodeRGB(rgb.data(), 12, 7, 12 * 3, 80, &out);
  ASSERT_GT(n, 0u);
  std::string webp(reinterpret_cast<char*>(out), n);
  WebPFree(out);
  auto w = CheckWebp(webp);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(w->width, 12u);
  EXPECT_NE(CheckWebp(webp.substr(0, webp.size() - 10)).status().message().find("truncated WebP"),
            std::string::npos);
  EXPECT_NE(CheckWebp(png).status().message().find("not a WebP"), std::string::npos);
}

TEST_F(InputsTest, BrokenPngIsABadImage) {
  WriteFile(tmp_ / "p/1.png", "not really a png");
  WriteFile(tmp_ / "p/2.webp", "RIFF....WEBPgarbage");
  auto s = Pack({tmp_ / "p"});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("1.png: not a PNG"), std::string::npos)
      << s.status().message();
  PackOptions o;
  o.on_bad = OnBadImage::kSkip;
  s = Pack({tmp_ / "p"}, o);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->bad_images, 2u);
}

TEST(DecompressionBombTest, HugeDimensionsAreRefused) {
  std::string jpeg = MakeJpeg(16, 16);
  // Patch the frame header (SOF0: FF C0, length, precision, height, width) to 20000 x 20000.
  size_t sof = jpeg.find("\xFF\xC0");
  ASSERT_NE(sof, std::string::npos);
  for (size_t at : {sof + 5, sof + 7}) {
    jpeg[at] = static_cast<char>(20000 >> 8);
    jpeg[at + 1] = static_cast<char>(20000 & 0xFF);
  }
  JpegChecker checker;
  auto r = checker.Check(jpeg);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("decompression bomb"), std::string::npos)
      << r.status().message();
  EXPECT_TRUE(checker.Check(MakeJpeg(16, 16)).ok());
}

}  // namespace
}  // namespace mmfs::pack
