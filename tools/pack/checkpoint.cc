#include "tools/pack/checkpoint.h"

#include <xxhash.h>

#include <limits>
#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "tools/pack/shard_sequence.h"

namespace mmfs::pack {

namespace {

using nlohmann::json;

// A checkpoint is read back after a crash, so its lines are bad data until checked: these read
// a field only when it has the expected type and range, never throwing.
const json* Field(const json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

bool ReadU64(const json* j, uint64_t* out) {
  if (j == nullptr || !j->is_number_unsigned()) return false;
  *out = j->get<uint64_t>();
  return true;
}

bool ReadU32(const json* j, uint32_t* out) {
  uint64_t v = 0;
  if (!ReadU64(j, &v) || v > std::numeric_limits<uint32_t>::max()) return false;
  *out = static_cast<uint32_t>(v);
  return true;
}

bool ReadI64(const json* j, int64_t* out) {
  if (j == nullptr || !j->is_number_integer()) return false;
  if (j->is_number_unsigned()) {
    uint64_t v = j->get<uint64_t>();
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
    *out = static_cast<int64_t>(v);
    return true;
  }
  *out = j->get<int64_t>();
  return true;
}

bool ReadString(const json* j, std::string* out) {
  if (j == nullptr || !j->is_string()) return false;
  *out = j->get<std::string>();
  return true;
}

bool ReadMember(const json& j, CheckpointMember* m) {
  if (!j.is_array() || j.size() != 5) return false;
  int64_t outcome = 0;
  if (!ReadI64(&j[0], &outcome) || outcome < 0 ||
      outcome > static_cast<int64_t>(MemberOutcome::kLeftOutWithSample)) {
    return false;
  }
  m->outcome = static_cast<MemberOutcome>(outcome);
  return ReadU64(&j[1], &m->checksum) && ReadU32(&j[2], &m->width) &&
         ReadU32(&j[3], &m->height) && ReadU64(&j[4], &m->offset_in_record);
}

bool ReadGroup(const json& j, CheckpointGroup* g) {
  const json* members = Field(j, "m");
  if (members == nullptr || !members->is_array()) return false;
  for (const json& mj : *members) {
    CheckpointMember m;
    if (!ReadMember(mj, &m)) return false;
    g->members.push_back(m);
  }
  return ReadU64(Field(j, "n"), &g->names_sum) && ReadI64(Field(j, "s"), &g->sample) &&
         g->sample >= -1 && ReadU32(Field(j, "sh"), &g->shard);
}

bool ReadShardInfo(const json* j, format::ShardInfo* info) {
  return j != nullptr && ReadString(Field(*j, "file"), &info->file) &&
         ReadU64(Field(*j, "size"), &info->size) &&
         ReadU64(Field(*j, "checksum"), &info->checksum) &&
         ReadU64(Field(*j, "first_sample"), &info->first_sample) &&
         ReadU64(Field(*j, "samples"), &info->samples) &&
         ReadU64(Field(*j, "data_bytes"), &info->data_bytes);
}

// Whether shard line number `index` (0 for the first shard) continues the lines before it the
// way the packer writes them, so that what it says can be trusted to index the records.
bool FollowsTheShardsBefore(const CheckpointShard& s, size_t index, uint64_t samples_before) {
  if (s.info.file != ShardFileName(static_cast<uint32_t>(index)) || s.info.first_sample != samples_before ||
      s.record_offsets.size() != s.info.samples) {
    return false;
  }
  for (const CheckpointGroup& g : s.groups) {
    if (g.sample == -1) continue;
    uint64_t sample = static_cast<uint64_t>(g.sample);
    if (g.shard != index || sample < s.info.first_sample ||
        sample >= s.info.first_sample + s.info.samples) {
      return false;
    }
  }
  return true;
}

}  // namespace

uint64_t CheckpointNamesSum(std::span<SourceNode* const> members) {
  XXH3_state_t* st = XXH3_createState();
  XXH3_64bits_reset(st);
  for (const SourceNode* m : members) XXH3_64bits_update(st, m->name.c_str(), m->name.size() + 1);
  uint64_t sum = XXH3_64bits_digest(st);
  XXH3_freeState(st);
  return sum;
}

std::string EncodeCheckpointHeader(std::string_view fingerprint) {
  return JsonText({{"mmfs_pack_checkpoint", kCheckpointVersion},
                   {"options", std::string(fingerprint)}});
}

std::string EncodeCheckpointShard(const CheckpointShard& shard) {
  json groups = json::array();
  for (const CheckpointGroup& g : shard.groups) {
    json members = json::array();
    for (const CheckpointMember& m : g.members) {
      members.push_back({static_cast<int>(m.outcome), m.checksum, m.width, m.height,
                         m.offset_in_record});
    }
    groups.push_back({{"n", g.names_sum}, {"m", std::move(members)}, {"s", g.sample},
                      {"sh", g.shard}});
  }
  const format::ShardInfo& info = shard.info;
  return JsonText({{"shard",
                    {{"file", info.file},
                     {"size", info.size},
                     {"checksum", info.checksum},
                     {"first_sample", info.first_sample},
                     {"samples", info.samples},
                     {"data_bytes", info.data_bytes}}},
                   {"offsets", shard.record_offsets},
                   {"groups", std::move(groups)}});
}

Result<std::string> DecodeCheckpointHeader(std::string_view line) {
  json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  int64_t version = 0;
  if (!ReadI64(Field(j, "mmfs_pack_checkpoint"), &version)) {
    return Status::Corruption("not an mmfs pack checkpoint");
  }
  if (version != kCheckpointVersion) {
    return Status::InvalidArgument(
        "a checkpoint of version " + std::to_string(version) + ", made by another mmfs; this one "
        "resumes version " + std::to_string(kCheckpointVersion) + ": run without --resume");
  }
  // No options: a fingerprint that matches none.
  std::string fingerprint;
  (void)ReadString(Field(j, "options"), &fingerprint);
  return fingerprint;
}

Result<CheckpointShard> DecodeCheckpointShard(std::string_view line) {
  json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  CheckpointShard s;
  const json* offsets = Field(j, "offsets");
  const json* groups = Field(j, "groups");
  bool ok = ReadShardInfo(Field(j, "shard"), &s.info) && offsets != nullptr &&
            offsets->is_array() && groups != nullptr && groups->is_array();
  if (ok) {
    for (const json& o : *offsets) {
      uint64_t v = 0;
      if (!(ok = ReadU64(&o, &v))) break;
      s.record_offsets.push_back(v);
    }
  }
  if (ok) {
    for (const json& gj : *groups) {
      CheckpointGroup g;
      if (!(ok = ReadGroup(gj, &g))) break;
      s.groups.push_back(std::move(g));
    }
  }
  if (!ok) return Status::Corruption("not a checkpoint shard line");
  return s;
}

Result<LoadedCheckpoint> ReadCheckpoint(
    const std::string& path, std::string_view fingerprint,
    const std::function<bool(const format::ShardInfo&)>& shard_is_whole) {
  LoadedCheckpoint out;
  auto header = [&](std::string_view line) -> Status {
    Result<std::string> options = DecodeCheckpointHeader(line);
    if (!options.ok()) {
      return options.status().code() == StatusCode::kCorruption
                 ? options.status()
                 : options.status().WithContext(path);
    }
    if (*options != fingerprint) {
      return Status::InvalidArgument(
          "the interrupted pack used other sources or options; run without --resume");
    }
    return Status::Ok();
  };
  auto shard_line = [&](std::string_view line) {
    Result<CheckpointShard> s = DecodeCheckpointShard(line);
    if (!s.ok() || !FollowsTheShardsBefore(*s, out.shards.size(), out.record_offsets.size()) ||
        !shard_is_whole(s->info)) {
      return false;  // resume from the shard before
    }
    out.shards.push_back(s->info);
    out.record_offsets.insert(out.record_offsets.end(), s->record_offsets.begin(),
                              s->record_offsets.end());
    for (CheckpointGroup& g : s->groups) out.groups.push_back(std::move(g));
    return true;
  };
  MMFS_ASSIGN_OR_RETURN(out.usable_bytes, stage::ReadCheckpointFile(path, header, shard_line));
  return out;
}

Result<CheckpointWriter> CheckpointWriter::Create(const std::string& path,
                                                  std::string_view fingerprint) {
  MMFS_ASSIGN_OR_RETURN(stage::CheckpointFile file,
                        stage::CheckpointFile::Create(path, EncodeCheckpointHeader(fingerprint)));
  return CheckpointWriter(std::move(file));
}

Result<CheckpointWriter> CheckpointWriter::Continue(const std::string& path,
                                                    uint64_t usable_bytes) {
  MMFS_ASSIGN_OR_RETURN(stage::CheckpointFile file,
                        stage::CheckpointFile::Continue(path, usable_bytes));
  return CheckpointWriter(std::move(file));
}

Status CheckpointWriter::Append(const CheckpointShard& shard) {
  MMFS_RETURN_IF_ERROR(file_.Append(EncodeCheckpointShard(shard)));
  ++appended_;
  return Status::Ok();
}

}  // namespace mmfs::pack
