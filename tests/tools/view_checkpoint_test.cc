// The view build's checkpoint lines and their reader (tools/view/view_checkpoint.h).
#include "tools/view/view_checkpoint.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/test_util.h"

namespace mmfs::view {
namespace {

using format::ViewRecord;
using format::ViewRecordKind;
using testing::TempDir;

constexpr uint16_t kResized = static_cast<uint16_t>(ViewRecordKind::kResized);
constexpr uint16_t kOmitted = static_cast<uint16_t>(ViewRecordKind::kOmitted);

// Shard `index` holding `samples` resized images from key `first`, then one image left out.
ViewCheckpointShard SampleShard(uint32_t index, uint64_t first, uint64_t samples) {
  ViewCheckpointShard s;
  char name[32];
  std::snprintf(name, sizeof name, "shard-%05u.mdb", index);
  s.info.file = name;
  s.info.size = 4096 * (index + 1);
  s.info.checksum = 0xFEDCBA9876543210ull + index;
  s.info.first_sample = first;
  s.info.samples = samples;
  s.info.data_bytes = 1000 * samples;
  for (uint64_t i = 0; i < samples; ++i) {
    ViewRecord v{};
    v.entry = static_cast<uint32_t>(10 * (first + i) + 1);
    v.data_offset = 8192 + 4096 * i;
    v.size = 1000;
    v.checksum = 0x8000000000000000ull + first + i;
    v.width = 160;
    v.height = 213;
    v.kind = kResized;
    s.records.push_back(v);
  }
  ViewRecord gone{};
  gone.entry = static_cast<uint32_t>(10 * (first + samples) + 2);
  gone.kind = kOmitted;
  s.records.push_back(gone);
  s.next = 3 * (index + 1);
  s.counts.resized = first + samples;
  s.counts.omitted = index + 1;
  s.counts.bad = index + 1;
  s.counts.unchanged = 7;
  s.counts.source_bytes = 5000 * (first + samples);
  s.counts.view_bytes = 1000 * (first + samples);
  return s;
}

bool AllWhole(const format::ShardInfo&) { return true; }

// A header and a shard line as mmfs has written them since views exist (taken from a build of
// the earlier view builder): they must be read, and written, exactly so.
TEST(ViewCheckpointTest, LinesOfEarlierBuildsReadAndWriteTheSame) {
  const std::string options =
      R"({"base_index":"9443284ffcc23906","on_bad":"fail","quality":90,)"
      R"("resampler":"libvips 8.14.1 lanczos3","shard_size":65536,"side":300})";
  EXPECT_EQ(EncodeViewCheckpointHeader(options),
            R"({"mmfs_view_checkpoint":1,"options":"{\"base_index\":\"9443284ffcc23906\",)"
            R"(\"on_bad\":\"fail\",\"quality\":90,\"resampler\":\"libvips 8.14.1 lanczos3\",)"
            R"(\"shard_size\":65536,\"side\":300}"})");
  const std::string line =
      R"({"counts":{"bad":0,"omitted":0,"resized":1,"source_bytes":11769,"unchanged":1,)"
      R"("view_bytes":10045},"next":2,"records":[[14,12304,10045,"514f77cca9a82f6c",477,300,1]],)"
      R"("shard":{"data_bytes":10045,"file":"shard-00000.mdb","first_sample":0,"samples":1,)"
      R"("size":24576,"xxh3":"55f18f4bf7f4be22"}})";
  auto s = DecodeViewCheckpointShard(line);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->info.file, "shard-00000.mdb");
  EXPECT_EQ(s->info.size, 24576u);
  EXPECT_EQ(s->info.checksum, 0x55f18f4bf7f4be22ull);
  EXPECT_EQ(s->info.samples, 1u);
  EXPECT_EQ(s->info.data_bytes, 10045u);
  ASSERT_EQ(s->records.size(), 1u);
  const ViewRecord& r = s->records[0];
  EXPECT_EQ(r.entry, 14u);
  EXPECT_EQ(r.data_offset, 12304u);
  EXPECT_EQ(r.size, 10045u);
  EXPECT_EQ(r.checksum, 0x514f77cca9a82f6cull);
  EXPECT_EQ(r.width, 477);
  EXPECT_EQ(r.height, 300);
  EXPECT_EQ(r.kind, kResized);
  EXPECT_EQ(s->next, 2u);
  EXPECT_EQ(s->counts.resized, 1u);
  EXPECT_EQ(s->counts.unchanged, 1u);
  EXPECT_EQ(s->counts.source_bytes, 11769u);
  EXPECT_EQ(s->counts.view_bytes, 10045u);
  EXPECT_EQ(EncodeViewCheckpointShard(*s), line);
}

class ViewCheckpointFileTest : public ::testing::Test {
 protected:
  std::string path() const { return tmp_ / stage::kCheckpointFileName; }
  TempDir tmp_;
};

// The usable part ends at the first line that is cut, damaged, out of sequence or whose shard
// file is not whole; what the lines before it say is what a resumed build starts from.
TEST_F(ViewCheckpointFileTest, ReadingStopsAtTheFirstUnusableLine) {
  const std::string header = EncodeViewCheckpointHeader("opts") + "\n";
  const std::string one = EncodeViewCheckpointShard(SampleShard(0, 0, 2)) + "\n";
  const std::string two = EncodeViewCheckpointShard(SampleShard(1, 2, 3)) + "\n";
  ViewCheckpointShard skips_a_shard = SampleShard(3, 5, 1);
  ViewCheckpointShard leaves_a_gap = SampleShard(2, 6, 1);
  ViewCheckpointShard too_few_records = SampleShard(2, 5, 2);
  too_few_records.info.samples = 3;
  std::string bad_hex = EncodeViewCheckpointShard(SampleShard(2, 5, 1));
  bad_hex.replace(bad_hex.find("\"xxh3\":\"") + 8, 1, "z");
  std::string entry_as_text = EncodeViewCheckpointShard(SampleShard(2, 5, 1));
  entry_as_text.replace(entry_as_text.find("[["), 2, "[[\"51\",");
  struct Case {
    std::string after_two;
    const char* what;
  } cases[] = {
      {EncodeViewCheckpointShard(SampleShard(2, 5, 1)), "a line cut by the interruption"},
      {"{\"records\":[\n", "a damaged line"},
      {"[1,2,3]\n", "a line that is not an object"},
      {EncodeViewCheckpointShard(skips_a_shard) + "\n", "the next shard file name skipped"},
      {EncodeViewCheckpointShard(leaves_a_gap) + "\n", "a first key that leaves a gap"},
      {EncodeViewCheckpointShard(too_few_records) + "\n", "fewer resized records than keys"},
      {bad_hex + "\n", "a checksum that is not hex"},
      {entry_as_text + "\n", "a field of another type"},
  };
  for (const Case& c : cases) {
    testing::WriteFile(path(), header + one + two + c.after_two);
    auto loaded = ReadViewCheckpoint(path(), "opts", 160, AllWhole);
    ASSERT_TRUE(loaded.ok()) << c.what << ": " << loaded.status().ToString();
    EXPECT_EQ(loaded->usable_bytes, header.size() + one.size() + two.size()) << c.what;
    ASSERT_EQ(loaded->shards.size(), 2u) << c.what;
    EXPECT_EQ(loaded->shards[1].file, "shard-00001.mdb");
    // Every resized image of both shards, in key order, and each in its own shard.
    EXPECT_EQ(loaded->record_offsets,
              (std::vector<uint64_t>{8192, 12288, 8192, 12288, 16384})) << c.what;
    ASSERT_EQ(loaded->records.size(), 2u + 1 + 3 + 1) << c.what;
    EXPECT_EQ(loaded->records[0].shard, 0u);
    EXPECT_EQ(loaded->records[3].shard, 1u);
    EXPECT_EQ(loaded->records[3].entry, 21u);
    EXPECT_EQ(loaded->records[6].kind, kOmitted);
    EXPECT_EQ(loaded->records[6].shard, 0u) << "an image left out is in no shard";
    // The counts and the candidates committed as of the last usable line.
    EXPECT_EQ(loaded->next, 6u) << c.what;
    EXPECT_EQ(loaded->counts.resized, 5u) << c.what;
    EXPECT_EQ(loaded->counts.omitted, 2u) << c.what;
  }

  // A shard file that is not as recorded ends it too.
  testing::WriteFile(path(), header + one + two);
  auto loaded = ReadViewCheckpoint(path(), "opts", 160, [](const format::ShardInfo& info) {
    return info.file != "shard-00001.mdb";
  });
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->shards.size(), 1u);
  EXPECT_EQ(loaded->record_offsets.size(), 2u);
  EXPECT_EQ(loaded->next, 3u);
  EXPECT_EQ(loaded->usable_bytes, header.size() + one.size());
}

TEST_F(ViewCheckpointFileTest, OtherOptionsOrADamagedHeaderAreRefused) {
  const std::string one = EncodeViewCheckpointShard(SampleShard(0, 0, 1)) + "\n";
  testing::WriteFile(path(), EncodeViewCheckpointHeader("opts") + "\n" + one);
  auto other = ReadViewCheckpoint(path(), "other", 160, AllWhole);
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(other.status().message().find("interrupted build of view 160 used other options"),
            std::string::npos)
      << other.status().message();
  // Options that are not text: refused the same way, never a throw.
  testing::WriteFile(path(), "{\"mmfs_view_checkpoint\":1,\"options\":42}\n" + one);
  auto not_text = ReadViewCheckpoint(path(), "opts", 160, AllWhole);
  ASSERT_FALSE(not_text.ok());
  EXPECT_NE(not_text.status().message().find("used other options"), std::string::npos);
  for (const std::string& damaged : {std::string(""), std::string("{\"mmfs_view"),
                                     std::string("[\"opts\"]\n") + one}) {
    testing::WriteFile(path(), damaged);
    auto refused = ReadViewCheckpoint(path(), "opts", 160, AllWhole);
    ASSERT_FALSE(refused.ok()) << damaged;
    EXPECT_EQ(refused.status().message(), path() + ": empty checkpoint");
  }
}

}  // namespace
}  // namespace mmfs::view
