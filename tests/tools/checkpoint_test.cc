// The resume checkpoint's record, reader and writer (tools/pack/checkpoint.h).
#include "tools/pack/checkpoint.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/test_util.h"
#include "tools/pack/shard_sequence.h"

namespace mmfs::pack {
namespace {

using testing::TempDir;

CheckpointShard SampleShard(uint32_t index, uint64_t first_sample, uint64_t samples) {
  CheckpointShard s;
  s.info.file = ShardFileName(index);
  s.info.size = 4096 * (index + 1);
  s.info.checksum = 0xFEDCBA9876543210ull + index;
  s.info.first_sample = first_sample;
  s.info.samples = samples;
  s.info.data_bytes = 1000 * samples;
  for (uint64_t i = 0; i < samples; ++i) s.record_offsets.push_back(8192 + 4096 * i);
  for (uint64_t i = 0; i < samples; ++i) {
    CheckpointGroup g;
    g.names_sum = 0x8000000000000000ull + i;  // above INT64_MAX: kept unsigned
    g.sample = static_cast<int64_t>(first_sample + i);
    g.shard = index;
    g.members.push_back({MemberOutcome::kPacked, 0xFFFFFFFFFFFFFFFFull, 640, 480, 0});
    g.members.push_back({MemberOutcome::kPacked, 7, 0, 0, 38333});
    s.groups.push_back(g);
  }
  // A sample left out whole: no record, sample -1.
  CheckpointGroup gone;
  gone.names_sum = 42;
  gone.members.push_back({MemberOutcome::kBadImage, 0, 0, 0, 0});
  gone.members.push_back({MemberOutcome::kLeftOutWithSample, 0, 0, 0, 0});
  s.groups.push_back(gone);
  return s;
}

void ExpectSame(const CheckpointShard& a, const CheckpointShard& b) {
  EXPECT_EQ(a.info.file, b.info.file);
  EXPECT_EQ(a.info.size, b.info.size);
  EXPECT_EQ(a.info.checksum, b.info.checksum);
  EXPECT_EQ(a.info.first_sample, b.info.first_sample);
  EXPECT_EQ(a.info.samples, b.info.samples);
  EXPECT_EQ(a.info.data_bytes, b.info.data_bytes);
  EXPECT_EQ(a.record_offsets, b.record_offsets);
  ASSERT_EQ(a.groups.size(), b.groups.size());
  for (size_t i = 0; i < a.groups.size(); ++i) {
    const CheckpointGroup& x = a.groups[i];
    const CheckpointGroup& y = b.groups[i];
    EXPECT_EQ(x.names_sum, y.names_sum);
    EXPECT_EQ(x.sample, y.sample);
    EXPECT_EQ(x.shard, y.shard);
    ASSERT_EQ(x.members.size(), y.members.size());
    for (size_t j = 0; j < x.members.size(); ++j) {
      EXPECT_EQ(x.members[j].outcome, y.members[j].outcome);
      EXPECT_EQ(x.members[j].checksum, y.members[j].checksum);
      EXPECT_EQ(x.members[j].width, y.members[j].width);
      EXPECT_EQ(x.members[j].height, y.members[j].height);
      EXPECT_EQ(x.members[j].offset_in_record, y.members[j].offset_in_record);
    }
  }
}

TEST(CheckpointTest, ShardLineRoundTrips) {
  CheckpointShard s = SampleShard(3, 70, 4);
  auto back = DecodeCheckpointShard(EncodeCheckpointShard(s));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ExpectSame(s, *back);
}

// Lines in the layout mmfs wrote before the typed record (the header and the first group are
// from the checkpoint.jsonl of a pack interrupted with the earlier build; the rest follows its
// layout): the format is kept, so such a pack resumes after an upgrade.
TEST(CheckpointTest, ReadsAndWritesTheVersion1LinesOfEarlierBuilds) {
  const std::string header =
      R"({"mmfs_pack_checkpoint":1,"options":"{\"caption_fields\":[\"text\",\"caption\"],)"
      R"(\"coco\":\"\",\"format\":0,\"format_version\":1,\"on_bad\":\"fail\",)"
      R"(\"shard_size\":1048576,\"sources\":[\"big\"]}"})";
  auto fingerprint = DecodeCheckpointHeader(header);
  ASSERT_TRUE(fingerprint.ok()) << fingerprint.status().ToString();
  EXPECT_NE(fingerprint->find(R"("shard_size":1048576)"), std::string::npos);
  EXPECT_EQ(EncodeCheckpointHeader(*fingerprint), header);

  const std::string line =
      R"({"groups":[{"m":[[0,1240618432326044608,352,378,0],[0,8662566103793668072,0,0,38333]],)"
      R"("n":4316417074098249900,"s":0,"sh":0},{"m":[[1,0,0,0,0],[2,0,0,0,0]],)"
      R"("n":13887621972813362383,"s":-1,"sh":0}],"offsets":[8256],)"
      R"("shard":{"checksum":9114437123041813511,"data_bytes":88361,"file":"shard-00000.mdb",)"
      R"("first_sample":0,"samples":1,"size":98304}})";
  auto s = DecodeCheckpointShard(line);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->info.file, "shard-00000.mdb");
  EXPECT_EQ(s->info.checksum, 9114437123041813511ull);
  EXPECT_EQ(s->info.size, 98304u);
  EXPECT_EQ(s->record_offsets, std::vector<uint64_t>{8256});
  ASSERT_EQ(s->groups.size(), 2u);
  EXPECT_EQ(s->groups[0].names_sum, 4316417074098249900ull);
  EXPECT_EQ(s->groups[0].sample, 0);
  ASSERT_EQ(s->groups[0].members.size(), 2u);
  EXPECT_EQ(s->groups[0].members[0].checksum, 1240618432326044608ull);
  EXPECT_EQ(s->groups[0].members[0].width, 352u);
  EXPECT_EQ(s->groups[0].members[0].height, 378u);
  EXPECT_EQ(s->groups[0].members[1].offset_in_record, 38333u);
  EXPECT_EQ(s->groups[1].sample, -1);
  EXPECT_EQ(s->groups[1].members[0].outcome, MemberOutcome::kBadImage);
  EXPECT_EQ(s->groups[1].members[1].outcome, MemberOutcome::kLeftOutWithSample);
  // Written back byte for byte.
  EXPECT_EQ(EncodeCheckpointShard(*s), line);
}

TEST(CheckpointTest, AnotherVersionIsRefusedByName) {
  auto h = DecodeCheckpointHeader(R"({"mmfs_pack_checkpoint":2,"options":"x"})");
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(h.status().message().find("version 2"), std::string::npos) << h.status().message();
  EXPECT_NE(h.status().message().find("version 1"), std::string::npos) << h.status().message();
  for (const char* not_a_header : {"", "[]", "{}", "{\"mmfs_pack_checkpoint\":\"1\"}", "{"}) {
    auto bad = DecodeCheckpointHeader(not_a_header);
    ASSERT_FALSE(bad.ok()) << not_a_header;
    EXPECT_EQ(bad.status().code(), StatusCode::kCorruption) << not_a_header;
  }
}

// Every way a line can be wrong is a Corruption status: nothing throws, nothing aborts.
TEST(CheckpointTest, MalformedShardLinesAreCorruptionNeverAThrow) {
  std::string good = EncodeCheckpointShard(SampleShard(0, 0, 1));
  std::vector<std::string> bad = {
      "",
      "null",
      "[1,2]",
      good.substr(0, good.size() / 2),
      R"({"groups":[],"offsets":[]})",                                // no shard
      R"({"groups":[],"offsets":[-1],"shard":{"checksum":1,"data_bytes":1,"file":"f",)"
      R"("first_sample":0,"samples":1,"size":1}})",                   // negative offset
      R"({"groups":{},"offsets":[],"shard":{"checksum":1,"data_bytes":1,"file":"f",)"
      R"("first_sample":0,"samples":0,"size":1}})",                   // groups not a list
      R"({"groups":[],"offsets":[],"shard":{"checksum":"1","data_bytes":1,"file":"f",)"
      R"("first_sample":0,"samples":0,"size":1}})",                   // checksum a string
      R"({"groups":[],"offsets":[],"shard":{"checksum":1,"data_bytes":1,"file":7,)"
      R"("first_sample":0,"samples":0,"size":1}})",                   // file a number
      R"({"groups":[],"offsets":[1.5],"shard":{"checksum":1,"data_bytes":1,"file":"f",)"
      R"("first_sample":0,"samples":1,"size":1}})",                   // fractional offset
  };
  const std::string shard_ok =
      R"("offsets":[],"shard":{"checksum":1,"data_bytes":1,"file":"f","first_sample":0,)"
      R"("samples":0,"size":1}})";
  for (const char* group : {
           R"({"m":[[3,0,0,0,0]],"n":1,"s":0,"sh":0})",        // unknown outcome
           R"({"m":[[0,0,0,0]],"n":1,"s":0,"sh":0})",          // four fields
           R"({"m":[[0,0,4294967296,0,0]],"n":1,"s":0,"sh":0})",  // width over 32 bits
           R"({"m":[[0,0,0,0,0]],"n":1,"s":-2,"sh":0})",       // sample below -1
           R"({"m":[[0,0,0,0,0]],"n":1,"s":0})",               // no shard
           R"({"m":[[0,0,0,0,0]],"n":-1,"s":0,"sh":0})",       // negative names sum
           R"({"m":[{"a":0}],"n":1,"s":0,"sh":0})",            // member not a list
           R"([1])",
       }) {
    bad.push_back(std::string(R"({"groups":[)") + group + "]," + shard_ok);
  }
  for (const std::string& line : bad) {
    auto s = DecodeCheckpointShard(line);
    ASSERT_FALSE(s.ok()) << line;
    EXPECT_EQ(s.status().code(), StatusCode::kCorruption) << line;
  }
}

class CheckpointFileTest : public ::testing::Test {
 protected:
  std::string path() const { return tmp_ / kCheckpointFileName; }
  static bool AllWhole(const format::ShardInfo&) { return true; }
  TempDir tmp_;
};

TEST_F(CheckpointFileTest, WriterThenReaderGiveBackTheShardsInOrder) {
  auto w = CheckpointWriter::Create(path(), "opts");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE(w->Append(SampleShard(0, 0, 2)).ok());
  ASSERT_TRUE(w->Append(SampleShard(1, 2, 3)).ok());
  EXPECT_EQ(w->appended(), 2u);

  auto loaded = ReadCheckpoint(path(), "opts", AllWhole);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ASSERT_EQ(loaded->shards.size(), 2u);
  EXPECT_EQ(loaded->shards[1].file, "shard-00001.mdb");
  EXPECT_EQ(loaded->record_offsets.size(), 5u);
  EXPECT_EQ(loaded->groups.size(), 2u + 1 + 3 + 1);  // each shard's groups, then the left-out one
  EXPECT_EQ(loaded->groups.front().sample, 0);
  EXPECT_EQ(loaded->groups.back().sample, -1);
  EXPECT_EQ(loaded->usable_bytes, testing::ReadFile(path()).size());
}

TEST_F(CheckpointFileTest, OtherOptionsOrAnEmptyFileAreRefused) {
  ASSERT_TRUE(CheckpointWriter::Create(path(), "opts").ok());
  auto other = ReadCheckpoint(path(), "other", AllWhole);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("other sources or options"), std::string::npos);
  testing::WriteFile(path(), "");
  auto empty = ReadCheckpoint(path(), "opts", AllWhole);
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("empty checkpoint"), std::string::npos);
}

// The usable part ends at the first line that is cut, damaged, out of sequence or whose shard
// file is not whole; the writer continues from there and drops the rest.
TEST_F(CheckpointFileTest, ReadingStopsAtTheFirstUnusableLineAndTheWriterContinuesThere) {
  std::string header = EncodeCheckpointHeader("opts") + "\n";
  std::string one = EncodeCheckpointShard(SampleShard(0, 0, 2)) + "\n";
  std::string two = EncodeCheckpointShard(SampleShard(1, 2, 2)) + "\n";
  CheckpointShard skips_a_shard = SampleShard(3, 4, 1);
  CheckpointShard wrong_first = SampleShard(2, 5, 1);
  CheckpointShard sample_elsewhere = SampleShard(2, 4, 1);
  sample_elsewhere.groups[0].sample = 1;  // a sample of shard 0
  struct Case {
    std::string after_two;
    const char* what;
  } cases[] = {
      {EncodeCheckpointShard(SampleShard(2, 4, 1)), "a line cut by the interruption"},
      {"{\"groups\":[\n", "a damaged line"},
      {EncodeCheckpointShard(skips_a_shard) + "\n", "the next shard file name skipped"},
      {EncodeCheckpointShard(wrong_first) + "\n", "a first sample that leaves a gap"},
      {EncodeCheckpointShard(sample_elsewhere) + "\n", "a sample number outside its shard"},
  };
  for (const Case& c : cases) {
    testing::WriteFile(path(), header + one + two + c.after_two);
    auto loaded = ReadCheckpoint(path(), "opts", AllWhole);
    ASSERT_TRUE(loaded.ok()) << c.what << ": " << loaded.status().ToString();
    EXPECT_EQ(loaded->shards.size(), 2u) << c.what;
    EXPECT_EQ(loaded->usable_bytes, header.size() + one.size() + two.size()) << c.what;
  }

  // A shard file that is not as recorded ends it too, and the writer starts again after it.
  testing::WriteFile(path(), header + one + two);
  auto loaded = ReadCheckpoint(path(), "opts", [](const format::ShardInfo& info) {
    return info.file != "shard-00001.mdb";
  });
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ASSERT_EQ(loaded->shards.size(), 1u);
  EXPECT_EQ(loaded->record_offsets.size(), 2u);
  EXPECT_EQ(loaded->groups.size(), 3u);
  auto w = CheckpointWriter::Continue(path(), loaded->usable_bytes);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE(w->Append(SampleShard(1, 2, 1)).ok());
  EXPECT_EQ(testing::ReadFile(path()),
            header + one + EncodeCheckpointShard(SampleShard(1, 2, 1)) + "\n");
}

TEST(CheckpointTest, NamesSumDependsOnEveryNameAndWhereItEnds) {
  SourceNode a, b, ab, empty;
  a.name = "a";
  b.name = "b";
  ab.name = "ab";
  std::vector<SourceNode*> a_b = {&a, &b}, b_a = {&b, &a}, ab_only = {&ab}, ab_empty = {&ab, &empty};
  EXPECT_NE(CheckpointNamesSum(a_b), CheckpointNamesSum(b_a));
  EXPECT_NE(CheckpointNamesSum(a_b), CheckpointNamesSum(ab_only));  // "a\0b\0" vs "ab\0"
  EXPECT_NE(CheckpointNamesSum(ab_only), CheckpointNamesSum(ab_empty));
  EXPECT_EQ(CheckpointNamesSum(a_b), CheckpointNamesSum(std::vector<SourceNode*>{&a, &b}));
}

}  // namespace
}  // namespace mmfs::pack
