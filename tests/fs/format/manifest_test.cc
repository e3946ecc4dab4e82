#include "fs/format/manifest.h"

#include <gtest/gtest.h>

#include "fs/format/format.h"

namespace mmfs::format {
namespace {

Manifest Sample() {
  Manifest m;
  m.version = kFormatVersion;
  m.created = "2026-01-01T00:00:00Z";
  m.tool = "mmfs test";
  m.entries = 5;
  m.files = 3;
  m.directories = 2;
  m.samples = 2;
  m.total_bytes = 100;
  m.index_file = kIndexFileName;
  m.index_size = 1000;
  m.index_checksum = 0x0123456789abcdefull;
  m.shards.push_back({"shard-00000.mdb", 4096, 42, 0, 2, 100});
  m.source_layout = "folder";
  m.source_paths = {"/src"};
  m.shard_size = 1 << 30;
  m.on_bad = "fail";
  return m;
}

TEST(ManifestTest, RoundTrip) {
  Manifest m = Sample();
  auto parsed = Manifest::Parse(m.ToJson(), "manifest.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->entries, 5u);
  EXPECT_EQ(parsed->index_checksum, 0x0123456789abcdefull);
  ASSERT_EQ(parsed->shards.size(), 1u);
  EXPECT_EQ(parsed->shards[0].file, "shard-00000.mdb");
  EXPECT_EQ(parsed->shards[0].checksum, 42u);
  EXPECT_EQ(parsed->source_paths, std::vector<std::string>{"/src"});
}

TEST(ManifestTest, RejectsForeignJson) {
  auto r = Manifest::Parse(R"({"name": "package.json"})", "x/manifest.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not an mmfs dataset"), std::string::npos);
  EXPECT_FALSE(Manifest::Parse("not json at all", "m").ok());
  EXPECT_FALSE(Manifest::Parse("[1,2]", "m").ok());
}

TEST(ManifestTest, RejectsNewerVersionClearly) {
  std::string json = Sample().ToJson();
  json.replace(json.find("\"version\": 1"), 12, "\"version\": 7");
  auto r = Manifest::Parse(json, "m");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(r.status().message().find("version 7"), std::string::npos);
}

TEST(ManifestTest, NumbersOfTheWrongKindAreRefusedNotConverted) {
  // Found by fuzz_manifest: a float (or negative) count went through a conversion with
  // undefined behaviour.
  std::string json = Sample().ToJson();
  for (const char* bad : {"5.5e53", "-3", "2.5", "\"7\"", "true"}) {
    std::string text = json;
    size_t at = text.find("\"files\": 3");
    ASSERT_NE(at, std::string::npos) << text;
    text.replace(at, 10, std::string("\"files\": ") + bad);
    auto r = Manifest::Parse(text, "m");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("files"), std::string::npos) << r.status().message();
  }
}

TEST(ManifestTest, InformationalFieldsOfTheWrongKindReadAsAbsent) {
  // Found by fuzz_manifest: pack_options.shard_size 1e71 was converted to an unsigned integer
  // (undefined behaviour); a number where a string belongs threw.
  std::string json = Sample().ToJson();
  size_t at = json.find("\"shard_size\": 1073741824");
  ASSERT_NE(at, std::string::npos) << json;
  json.replace(at, 24, "\"shard_size\": 1e71");
  at = json.find("\"on_bad\": \"fail\"");
  ASSERT_NE(at, std::string::npos) << json;
  json.replace(at, 16, "\"on_bad\": 3");
  auto r = Manifest::Parse(json, "m");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->shard_size, 0u);
  EXPECT_EQ(r->on_bad, "");
  EXPECT_EQ(r->entries, 5u);
}

TEST(ManifestTest, RejectsMissingFieldsAndPathTricks) {
  std::string json = Sample().ToJson();
  std::string no_index = json;
  no_index.replace(no_index.find("\"index\""), 7, "\"indx\"");
  EXPECT_FALSE(Manifest::Parse(no_index, "m").ok());
  std::string escape = json;
  escape.replace(escape.find("shard-00000.mdb"), 15, "../../etc/passw");
  auto r = Manifest::Parse(escape, "m");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not a plain file name"), std::string::npos);
}

}  // namespace
}  // namespace mmfs::format
