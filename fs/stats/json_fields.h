// Tolerant field readers for the `.mmfs/stats` JSON parsers (field_table.h, stats_parse.cc):
// a newer `mmfs stats` must read an older daemon's document, so a missing or null field leaves
// the typed value at its default; a field of the wrong kind throws (nlohmann::json's
// type_error), which the callers turn into a Status.
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>

namespace mmfs::fs::json_fields {

// `*out` = j[key] when j is an object holding it.
template <typename T>
void Read(const nlohmann::json& j, const char* key, T* out) {
  if (!j.is_object()) return;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  *out = it->get<T>();
}

// j[key], or an empty object: the parts a daemon may not have.
inline const nlohmann::json& Part(const nlohmann::json& j, const char* key) {
  static const nlohmann::json kEmpty = nlohmann::json::object();
  if (!j.is_object()) return kEmpty;
  auto it = j.find(key);
  return it == j.end() ? kEmpty : *it;
}

}  // namespace mmfs::fs::json_fields
