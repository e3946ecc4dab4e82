// Captions from metadata arrive byte-exact, and captions that have no image
// to go to are reported and counted.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/test_util.h"
#include "tests/tools/pack_fixture.h"

namespace mmfs::pack {
namespace {

using testing::MakeJpeg;
using testing::WriteFile;

class CaptionsTest : public InputsTest {
 protected:
  void SetUp() override {
    WriteFile(tmp_ / "hf/train/a.jpg", MakeJpeg(8, 8));
    WriteFile(tmp_ / "hf/train/b.jpg", MakeJpeg(8, 8));
  }
};

// What Python's csv.writer writes: fields with spaces at either end are not quoted.
TEST_F(CaptionsTest, UnquotedCsvFieldsKeepTheirSpaces) {
  WriteFile(tmp_ / "hf/train/metadata.csv",
            "file_name,text,note\r\n"
            "a.jpg,  leading and trailing spaces  ,\ttab\t\r\n"
            "b.jpg,\" quoted, with spaces \", \r\n");
  auto s = Pack({tmp_ / "hf"});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(Read("train/a.txt"), "  leading and trailing spaces  ");
  EXPECT_EQ(Read("train/b.txt"), " quoted, with spaces ");
  auto a = nlohmann::json::parse(Read("train/a.json"));
  EXPECT_EQ(a["note"], "\ttab\t");
  EXPECT_EQ(nlohmann::json::parse(Read("train/b.json"))["note"], " ");
}

// What spreadsheet programs save: a UTF-8 byte order mark before the header.
TEST_F(CaptionsTest, ByteOrderMarkIsNotPartOfTheFirstColumn) {
  WriteFile(tmp_ / "hf/train/metadata.csv",
            "\xEF\xBB\xBF" "file_name,text\na.jpg,an apple\nb.jpg,a ball\n");
  auto s = Pack({tmp_ / "hf"});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(Read("train/a.txt"), "an apple");
  EXPECT_EQ(Read("train/b.txt"), "a ball");
  EXPECT_EQ(nlohmann::json::parse(Read("train/a.json")).count("file_name"), 1u);
  // The same for JSON lines.
  ds_.reset();
  std::filesystem::remove(tmp_ / "hf/train/metadata.csv");
  WriteFile(tmp_ / "hf/train/metadata.jsonl",
            "\xEF\xBB\xBF{\"file_name\": \"a.jpg\", \"text\": \"from jsonl\"}\n");
  PackOptions o;
  o.force = true;
  s = Pack({tmp_ / "hf"}, o);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(Read("train/a.txt"), "from jsonl");
}

TEST_F(CaptionsTest, MissingFileNameColumnIsNamedWithTheFile) {
  WriteFile(tmp_ / "hf/train/metadata.csv", "image,text\na.jpg,an apple\n");
  auto s = Pack({tmp_ / "hf"});
  ASSERT_FALSE(s.ok());
  const std::string& m = s.status().message();
  EXPECT_NE(m.find("no \"file_name\" column in the header: " + (tmp_ / "hf/train/metadata.csv")),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("image, text"), std::string::npos) << m;
  EXPECT_EQ(m.find("row 2"), std::string::npos) << m;
}

TEST_F(CaptionsTest, HfRowsWithoutImageAreCountedInTheSummary) {
  WriteFile(tmp_ / "hf/train/metadata.csv", "file_name,text\na.jpg,x\ngone.jpg,y\nalso.jpg,z\n");
  auto s = Pack({tmp_ / "hf"});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->captions_without_image, 2u);
  EXPECT_TRUE(Warned("2 rows name an image that is not in the folder"));
}

TEST_F(CaptionsTest, CocoAnnotationOfNoImageIsReportedAndCounted) {
  WriteFile(tmp_ / "coco/1.jpg", MakeJpeg(8, 8));
  WriteFile(tmp_ / "ann.json",
            R"({"images": [{"id": 1, "file_name": "1.jpg"}, {"id": 2, "file_name": "2.jpg"}],
                "annotations": [{"image_id": 1, "caption": "kept"},
                                {"image_id": 2, "caption": "its file is missing"},
                                {"image_id": 77, "caption": "no such image"},
                                {"image_id": 77, "caption": "no such image either"},
                                {"image_id": 78, "caption": "nor this"}]})");
  PackOptions o;
  o.coco_annotations = tmp_ / "ann.json";
  auto s = Pack({tmp_ / "coco"}, o);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(Read("1.txt"), "kept\n");
  EXPECT_TRUE(Warned("3 annotations have an image_id that no image has (the first: 77)"));
  EXPECT_TRUE(Warned("1 of 2 images are not in the source folder"));
  EXPECT_EQ(s->captions_without_image, 4u);  // 3 unmatched + 1 of the missing file
}

// Progress over Hugging Face metadata counted the generated captions done but not in the total.
TEST_F(CaptionsTest, ProgressNeverPassesTheTotalAndFinishesOnce) {
  std::string rows = "file_name,text\n";
  for (int i = 0; i < 30; ++i) {
    WriteFile(tmp_ / ("hf/train/" + std::to_string(i) + ".jpg"), MakeJpeg(2, 2));
    rows += std::to_string(i) + ".jpg," + std::string(2000, 'w') + "\n";
  }
  WriteFile(tmp_ / "hf/train/metadata.csv", rows);
  auto s = Pack({tmp_ / "hf"});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_FALSE(reporter_.past_total);
  // The generated captions (most of the bytes here) are in the total: halfway through the
  // samples is not already near the end.
  for (const PackProgress& p : reporter_.all) {
    if (p.files_done == p.files_total / 2) {
      EXPECT_LT(static_cast<double>(p.bytes_done), 0.6 * static_cast<double>(p.bytes_total));
    }
  }
  EXPECT_EQ(reporter_.finished_calls, 1);
  EXPECT_EQ(reporter_.last.bytes_done, reporter_.last.bytes_total);
  EXPECT_TRUE(reporter_.last.finished);
}

}  // namespace
}  // namespace mmfs::pack

namespace mmfs::pack {
namespace {

// "img1.jpg" and "./img1.jpg" are one image: the second row is a duplicate, found while the
// metadata is read (before any image is), and both rows are named.
TEST_F(CaptionsTest, TwoSpellingsOfOneImageAreADuplicateNamingBothRows) {
  WriteFile(tmp_ / "hf/train/metadata.jsonl",
            "{\"file_name\": \"a.jpg\", \"text\": \"one\"}\n"
            "{\"file_name\": \"b.jpg\", \"text\": \"two\"}\n"
            "{\"file_name\": \"./a.jpg\", \"text\": \"three\"}\n");
  auto s = Pack({tmp_ / "hf"});
  ASSERT_FALSE(s.ok());
  const std::string meta = tmp_ / "hf/train/metadata.jsonl";
  EXPECT_NE(s.status().message().find(meta + " line 1 (\"a.jpg\") and " + meta +
                                      " line 3 (\"./a.jpg\") both make 'a.txt'"),
            std::string::npos)
      << s.status().message();
  EXPECT_EQ(reporter_.last.files_done, 0u) << "failed after reading files";
  // Spelled "./" alone, a row still finds its image and makes its caption next to it.
  WriteFile(meta, "{\"file_name\": \"./a.jpg\", \"text\": \"dotted\"}\n");
  ds_.reset();
  s = Pack({tmp_ / "hf"});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(Read("train/a.txt"), "dotted");
}

}  // namespace
}  // namespace mmfs::pack
