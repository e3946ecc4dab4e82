#include "fs/format/manifest.h"

#include <limits>
#include <nlohmann/json.hpp>
#include <type_traits>

#include "base/file_util.h"
#include "base/json_text.h"
#include "fs/format/format.h"
#include "fs/format/shard_list_json.h"

namespace mmfs::format {

using nlohmann::json;

std::string Manifest::ToJson() const {
  json shard_list = ShardListJson(shards);
  json j = {
      {"format", kFormatName},
      {"version", version},
      {"created", created},
      {"tool", tool},
      {"counts",
       {{"entries", entries},
        {"files", files},
        {"directories", directories},
        {"symlinks", symlinks},
        {"samples", samples},
        {"skipped", skipped}}},
      {"total_bytes", total_bytes},
      {"index", {{"file", index_file}, {"size", index_size}, {"xxh3", HexU64(index_checksum)}}},
      {"shards", shard_list},
      {"source", {{"layout", source_layout}, {"paths", source_paths}}},
      {"pack_options", {{"shard_size", shard_size}, {"on_bad", on_bad}}},
  };
  return JsonText(j, 2) + "\n";
}

namespace {

// Reads j[key] as T, or records why not.
template <typename T>
bool Get(const json& j, const char* key, T* out, std::string* error) {
  auto it = j.find(key);
  if (it == j.end()) {
    *error = std::string("missing field '") + key + "'";
    return false;
  }
  // Checked before converting: nlohmann converts a float or a negative number to an unsigned
  // integer without complaint (undefined behaviour when out of range; found by fuzz_manifest).
  bool right_type;
  if constexpr (std::is_same_v<T, bool>) {
    right_type = it->is_boolean();
  } else if constexpr (std::is_unsigned_v<T>) {
    right_type = it->is_number_unsigned() &&
                 it->template get<uint64_t>() <= std::numeric_limits<T>::max();
  } else if constexpr (std::is_integral_v<T>) {
    right_type = it->is_number_integer() &&
                 it->template get<int64_t>() >= std::numeric_limits<T>::min() &&
                 it->template get<int64_t>() <= std::numeric_limits<T>::max();
  } else if constexpr (std::is_same_v<T, std::string>) {
    right_type = it->is_string();
  } else {
    right_type = true;
  }
  if (right_type) {
    try {
      *out = it->template get<T>();
      return true;
    } catch (const json::exception&) {
    }
  }
  *error = std::string("field '") + key + "' has the wrong type";
  return false;
}

bool GetHex(const json& j, const char* key, uint64_t* out, std::string* error) {
  std::string text;
  if (!Get(j, key, &text, error)) return false;
  if (!ParseHexU64(text, out)) {
    *error = std::string("field '") + key + "' is not a 16-digit hex checksum";
    return false;
  }
  return true;
}

bool SafeFileName(const std::string& name) {
  return !name.empty() && name.find('/') == std::string::npos && name != "." && name != "..";
}

// Informational fields: a value of another type reads as absent. Not json::value(): it converts
// a float such as 1e71 to an unsigned integer (undefined behaviour; found by fuzz_manifest) and
// throws on a string where a number is expected.
uint64_t OptionalUnsigned(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_number_unsigned() ? it->get<uint64_t>() : 0;
}

std::string OptionalString(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

Result<Manifest> Manifest::Parse(const std::string& text, const std::string& origin) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return Status::Corruption(origin + ": not valid JSON");
  }
  std::string error;
  std::string format_name;
  if (!Get(j, "format", &format_name, &error) || format_name != kFormatName) {
    return Status::InvalidArgument(origin + ": not an mmfs dataset manifest (format is not '" +
                                   std::string(kFormatName) + "')");
  }
  Manifest m;
  if (!Get(j, "version", &m.version, &error)) return Status::Corruption(origin + ": " + error);
  if (m.version != kFormatVersion) {
    return Status::NotSupported(origin + ": dataset format version " + std::to_string(m.version) +
                                " is not supported by this mmfs (it reads version " +
                                std::to_string(kFormatVersion) + "); repack or upgrade mmfs");
  }
  bool ok = Get(j, "created", &m.created, &error) && Get(j, "tool", &m.tool, &error) &&
            Get(j, "total_bytes", &m.total_bytes, &error);
  const json* counts = nullptr;
  const json* index = nullptr;
  const json* shards = nullptr;
  if (ok) {
    auto c = j.find("counts");
    auto i = j.find("index");
    auto s = j.find("shards");
    if (c == j.end() || !c->is_object()) {
      error = "missing object 'counts'";
      ok = false;
    } else if (i == j.end() || !i->is_object()) {
      error = "missing object 'index'";
      ok = false;
    } else if (s == j.end() || !s->is_array()) {
      error = "missing array 'shards'";
      ok = false;
    } else {
      counts = &*c;
      index = &*i;
      shards = &*s;
    }
  }
  ok = ok && Get(*counts, "entries", &m.entries, &error) &&
       Get(*counts, "files", &m.files, &error) &&
       Get(*counts, "directories", &m.directories, &error) &&
       Get(*counts, "symlinks", &m.symlinks, &error) &&
       Get(*counts, "samples", &m.samples, &error) &&
       Get(*counts, "skipped", &m.skipped, &error) &&
       Get(*index, "file", &m.index_file, &error) && Get(*index, "size", &m.index_size, &error) &&
       GetHex(*index, "xxh3", &m.index_checksum, &error);
  if (ok) {
    for (const json& s : *shards) {
      ShardInfo info;
      if (!s.is_object()) {
        error = "a shard entry is not an object";
        ok = false;
        break;
      }
      ok = Get(s, "file", &info.file, &error) && Get(s, "size", &info.size, &error) &&
           GetHex(s, "xxh3", &info.checksum, &error) &&
           Get(s, "first_sample", &info.first_sample, &error) &&
           Get(s, "samples", &info.samples, &error) &&
           Get(s, "data_bytes", &info.data_bytes, &error);
      if (!ok) break;
      if (!SafeFileName(info.file)) {
        error = "shard file name '" + info.file + "' is not a plain file name";
        ok = false;
        break;
      }
      m.shards.push_back(std::move(info));
    }
  }
  if (ok && !SafeFileName(m.index_file)) {
    error = "index file name '" + m.index_file + "' is not a plain file name";
    ok = false;
  }
  if (!ok) return Status::Corruption(origin + ": " + error);
  // Optional, informational fields.
  if (auto src = j.find("source"); src != j.end() && src->is_object()) {
    m.source_layout = OptionalString(*src, "layout");
    if (auto p = src->find("paths"); p != src->end() && p->is_array()) {
      for (const json& path : *p) {
        if (path.is_string()) m.source_paths.push_back(path.get<std::string>());
      }
    }
  }
  if (auto opts = j.find("pack_options"); opts != j.end() && opts->is_object()) {
    m.shard_size = OptionalUnsigned(*opts, "shard_size");
    m.on_bad = OptionalString(*opts, "on_bad");
  }
  return m;
}

}  // namespace mmfs::format
