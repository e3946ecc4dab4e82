#include "fs/format/view_manifest.h"

#include <limits>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/json_text.h"
#include "fs/format/shard_list_json.h"
#include "fs/format/view_format.h"

namespace mmfs::format {

using nlohmann::json;

std::string ViewManifest::ToJson() const {
  json shard_list = ShardListJson(shards);
  json j = {
      {"format", kViewFormatName},
      {"version", version},
      {"side", side},
      {"created", created},
      {"tool", tool},
      {"base", {{"entries", base_entries}, {"index_xxh3", HexU64(base_index_checksum)}}},
      {"counts",
       {{"resized", resized},
        {"unchanged_images", unchanged_images},
        {"bad_images", bad_images},
        {"omitted", omitted}}},
      {"view_bytes", view_bytes},
      {"source_bytes", source_bytes},
      {"index", {{"file", index_file}, {"size", index_size}, {"xxh3", HexU64(index_checksum)}}},
      {"shards", shard_list},
      {"options", {{"quality", quality}, {"on_bad", on_bad}, {"resampler", resampler}}},
  };
  return JsonText(j, 2) + "\n";
}

namespace {

// Reads an unsigned integer, a string or a hex checksum field, or says why it cannot.
class Reader {
 public:
  explicit Reader(std::string* error) : error_(error) {}

  bool U64(const json& j, const char* key, uint64_t* out) {
    auto it = Find(j, key);
    // Checked before converting: nlohmann turns a float or a negative number into an unsigned
    // one without complaint.
    if (it == nullptr) return false;
    if (!it->is_number_unsigned()) return Wrong(key);
    *out = it->get<uint64_t>();
    return true;
  }
  bool U32(const json& j, const char* key, uint32_t* out) {
    uint64_t v = 0;
    if (!U64(j, key, &v)) return false;
    if (v > std::numeric_limits<uint32_t>::max()) return Wrong(key);
    *out = static_cast<uint32_t>(v);
    return true;
  }
  bool Str(const json& j, const char* key, std::string* out) {
    auto it = Find(j, key);
    if (it == nullptr) return false;
    if (!it->is_string()) return Wrong(key);
    *out = it->get<std::string>();
    return true;
  }
  bool Hex(const json& j, const char* key, uint64_t* out) {
    std::string text;
    if (!Str(j, key, &text)) return false;
    if (!ParseHexU64(text, out)) {
      *error_ = std::string("field '") + key + "' is not a 16-digit hex checksum";
      return false;
    }
    return true;
  }
  const json* Object(const json& j, const char* key) {
    auto it = Find(j, key);
    if (it == nullptr) return nullptr;
    if (!it->is_object()) {
      Wrong(key);
      return nullptr;
    }
    return it;
  }

 private:
  const json* Find(const json& j, const char* key) {
    auto it = j.find(key);
    if (it == j.end()) {
      *error_ = std::string("missing field '") + key + "'";
      return nullptr;
    }
    return &*it;
  }
  bool Wrong(const char* key) {
    *error_ = std::string("field '") + key + "' has the wrong type";
    return false;
  }
  std::string* error_;
};

bool PlainFileName(const std::string& name) {
  return !name.empty() && name.find('/') == std::string::npos && name != "." && name != "..";
}

}  // namespace

Result<ViewManifest> ViewManifest::Parse(const std::string& text, const std::string& origin) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Status::Corruption(origin + ": not valid JSON");
  std::string error;
  Reader r(&error);
  std::string format_name;
  if (!r.Str(j, "format", &format_name) || format_name != kViewFormatName) {
    return Status::InvalidArgument(origin + ": not an mmfs view manifest (format is not '" +
                                   std::string(kViewFormatName) + "')");
  }
  ViewManifest m;
  if (!r.U32(j, "version", &m.version)) return Status::Corruption(origin + ": " + error);
  if (m.version != kViewFormatVersion) {
    return Status::NotSupported(origin + ": view format version " + std::to_string(m.version) +
                                " is not supported by this mmfs (it reads version " +
                                std::to_string(kViewFormatVersion) +
                                "); rebuild the view (mmfs view rm, mmfs view add) or upgrade mmfs");
  }
  const json* base = nullptr;
  const json* counts = nullptr;
  const json* index = nullptr;
  bool ok = r.U32(j, "side", &m.side) && r.Str(j, "created", &m.created) &&
            r.Str(j, "tool", &m.tool) && r.U64(j, "view_bytes", &m.view_bytes) &&
            r.U64(j, "source_bytes", &m.source_bytes) &&
            (base = r.Object(j, "base")) != nullptr && (counts = r.Object(j, "counts")) != nullptr &&
            (index = r.Object(j, "index")) != nullptr;
  ok = ok && r.U64(*base, "entries", &m.base_entries) &&
       r.Hex(*base, "index_xxh3", &m.base_index_checksum) &&
       r.U64(*counts, "resized", &m.resized) &&
       r.U64(*counts, "unchanged_images", &m.unchanged_images) &&
       r.U64(*counts, "bad_images", &m.bad_images) && r.U64(*counts, "omitted", &m.omitted) &&
       r.Str(*index, "file", &m.index_file) && r.U64(*index, "size", &m.index_size) &&
       r.Hex(*index, "xxh3", &m.index_checksum);
  if (ok) {
    auto s = j.find("shards");
    if (s == j.end() || !s->is_array()) {
      error = "missing array 'shards'";
      ok = false;
    } else {
      for (const json& sj : *s) {
        ShardInfo info;
        ok = sj.is_object() && r.Str(sj, "file", &info.file) && r.U64(sj, "size", &info.size) &&
             r.Hex(sj, "xxh3", &info.checksum) &&
             r.U64(sj, "first_sample", &info.first_sample) &&
             r.U64(sj, "samples", &info.samples) && r.U64(sj, "data_bytes", &info.data_bytes);
        if (!ok) {
          if (!sj.is_object()) error = "a shard entry is not an object";
          break;
        }
        if (!PlainFileName(info.file)) {
          error = "shard file name '" + info.file + "' is not a plain file name";
          ok = false;
          break;
        }
        m.shards.push_back(std::move(info));
      }
    }
  }
  if (ok && !PlainFileName(m.index_file)) {
    error = "index file name '" + m.index_file + "' is not a plain file name";
    ok = false;
  }
  if (ok && (m.side < kMinViewSide || m.side > kMaxViewSide)) {
    error = "side " + std::to_string(m.side) + " is outside " + std::to_string(kMinViewSide) +
            ".." + std::to_string(kMaxViewSide);
    ok = false;
  }
  if (!ok) return Status::Corruption(origin + ": " + error);
  if (auto opts = j.find("options"); opts != j.end() && opts->is_object()) {
    if (auto q = opts->find("quality"); q != opts->end() && q->is_number_unsigned() &&
                                        q->get<uint64_t>() <= 100) {
      m.quality = static_cast<uint32_t>(q->get<uint64_t>());
    }
    if (auto v = opts->find("on_bad"); v != opts->end() && v->is_string()) {
      m.on_bad = v->get<std::string>();
    }
    if (auto v = opts->find("resampler"); v != opts->end() && v->is_string()) {
      m.resampler = v->get<std::string>();
    }
  }
  return m;
}

}  // namespace mmfs::format
