#include "tools/view/view_checkpoint.h"

#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/json_text.h"
#include "tools/pack/shard_sequence.h"

namespace mmfs::view {

namespace {

using format::ViewRecord;
using format::ViewRecordKind;
using nlohmann::json;

constexpr uint16_t kResized = static_cast<uint16_t>(ViewRecordKind::kResized);

json CountsToJson(const ViewCounts& c) {
  return {{"unchanged", c.unchanged},       {"bad", c.bad},
          {"omitted", c.omitted},           {"source_bytes", c.source_bytes},
          {"view_bytes", c.view_bytes},     {"resized", c.resized}};
}

// Throws json::exception when a field is missing or of another type (caught by the caller).
ViewCounts CountsFromJson(const json& j) {
  ViewCounts c;
  c.unchanged = j.at("unchanged").get<uint64_t>();
  c.bad = j.at("bad").get<uint64_t>();
  c.omitted = j.at("omitted").get<uint64_t>();
  c.source_bytes = j.at("source_bytes").get<uint64_t>();
  c.view_bytes = j.at("view_bytes").get<uint64_t>();
  c.resized = j.at("resized").get<uint64_t>();
  return c;
}

// Whether shard line number `index` (0 for the first) continues the lines before it the way the
// builder writes them: the next shard file, its first key right after the keys before it, one
// resized record per key.
bool FollowsTheShardsBefore(const ViewCheckpointShard& s, size_t index, uint64_t keys_before) {
  if (s.info.file != pack::ShardFileName(static_cast<uint32_t>(index)) ||
      s.info.first_sample != keys_before) {
    return false;
  }
  uint64_t resized = 0;
  for (const ViewRecord& r : s.records) resized += r.kind == kResized ? 1 : 0;
  return resized == s.info.samples;
}

}  // namespace

std::string EncodeViewCheckpointHeader(std::string_view fingerprint) {
  return JsonText({{"mmfs_view_checkpoint", 1}, {"options", std::string(fingerprint)}});
}

std::string EncodeViewCheckpointShard(const ViewCheckpointShard& shard) {
  json recs = json::array();
  for (const ViewRecord& v : shard.records) {
    recs.push_back({v.entry, v.data_offset, v.size, HexU64(v.checksum), v.width, v.height, v.kind});
  }
  const format::ShardInfo& info = shard.info;
  return JsonText({{"shard",
                    {{"file", info.file},
                     {"size", info.size},
                     {"xxh3", HexU64(info.checksum)},
                     {"first_sample", info.first_sample},
                     {"samples", info.samples},
                     {"data_bytes", info.data_bytes}}},
                   {"records", recs},
                   {"next", shard.next},
                   {"counts", CountsToJson(shard.counts)}});
}

Result<ViewCheckpointShard> DecodeViewCheckpointShard(std::string_view line) {
  json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  const Status not_a_line = Status::Corruption("not a view checkpoint shard line");
  if (j.is_discarded() || !j.is_object() || !j.contains("shard") || !j.contains("records") ||
      !j.contains("next") || !j.contains("counts")) {
    return not_a_line;
  }
  // A checkpoint is read back after a crash: every exception a damaged line can raise while its
  // fields are read is caught here, and the line is not used.
  try {
    ViewCheckpointShard s;
    const json& sh = j.at("shard");
    s.info.file = sh.at("file").get<std::string>();
    s.info.size = sh.at("size").get<uint64_t>();
    if (!ParseHexU64(sh.at("xxh3").get<std::string>(), &s.info.checksum)) return not_a_line;
    s.info.first_sample = sh.at("first_sample").get<uint64_t>();
    s.info.samples = sh.at("samples").get<uint64_t>();
    s.info.data_bytes = sh.at("data_bytes").get<uint64_t>();
    for (const json& r : j.at("records")) {
      ViewRecord v{};
      v.entry = r.at(0).get<uint32_t>();
      v.data_offset = r.at(1).get<uint64_t>();
      v.size = r.at(2).get<uint64_t>();
      if (!ParseHexU64(r.at(3).get<std::string>(), &v.checksum)) return not_a_line;
      v.width = r.at(4).get<uint16_t>();
      v.height = r.at(5).get<uint16_t>();
      v.kind = r.at(6).get<uint16_t>();
      s.records.push_back(v);
    }
    s.counts = CountsFromJson(j.at("counts"));
    s.next = j.at("next").get<uint64_t>();
    return s;
  } catch (const json::exception&) {
    return not_a_line;
  }
}

Result<LoadedViewCheckpoint> ReadViewCheckpoint(
    const std::string& path, std::string_view fingerprint, uint32_t side,
    const std::function<bool(const format::ShardInfo&)>& shard_is_whole) {
  LoadedViewCheckpoint out;
  auto header = [&](std::string_view line) -> Status {
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) return Status::Corruption("not a view checkpoint");
    auto options = j.find("options");
    if (options == j.end() || !options->is_string() ||
        options->get<std::string>() != fingerprint) {
      return Status::InvalidArgument(
          "the interrupted build of view " + std::to_string(side) +
          " used other options (quality, --on-bad, shard size) or another dataset index; "
          "run without --resume to start again");
    }
    return Status::Ok();
  };
  auto shard_line = [&](std::string_view line) {
    Result<ViewCheckpointShard> s = DecodeViewCheckpointShard(line);
    if (!s.ok() || !FollowsTheShardsBefore(*s, out.shards.size(), out.record_offsets.size()) ||
        !shard_is_whole(s->info)) {
      return false;  // resume from the shard before
    }
    const uint32_t shard = static_cast<uint32_t>(out.shards.size());
    for (ViewRecord& v : s->records) {
      if (v.kind == kResized) {
        v.shard = shard;
        out.record_offsets.push_back(v.data_offset);
      }
      out.records.push_back(v);
    }
    out.shards.push_back(s->info);
    out.next = s->next;
    out.counts = s->counts;
    return true;
  };
  MMFS_ASSIGN_OR_RETURN(out.usable_bytes, stage::ReadCheckpointFile(path, header, shard_line));
  return out;
}

}  // namespace mmfs::view
