// The JSON side of the field tables (field_table.h): a table's fields written into a group's
// object of the `.mmfs/stats` document and read back, at their key paths. Reading is tolerant
// as json_fields.h: a missing or null key leaves the default, a key of the wrong kind throws
// nlohmann::json's type_error, which the parser turns into a Status. Derived fields are written,
// never read.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "fs/stats/field_table.h"
#include "fs/stats/json_fields.h"

namespace mmfs::fs::field_table {

// The object at `path`'s parent in `j`, made if missing; `*leaf` = the last key.
inline nlohmann::json& PathParent(nlohmann::json& j, std::string_view path, std::string* leaf) {
  nlohmann::json* at = &j;
  for (size_t dot = path.find('.'); dot != std::string_view::npos; dot = path.find('.')) {
    at = &(*at)[std::string(path.substr(0, dot))];
    path.remove_prefix(dot + 1);
  }
  *leaf = std::string(path);
  return *at;
}

// As PathParent, reading: an empty object where a part is missing.
inline const nlohmann::json& PathParentOf(const nlohmann::json& j, std::string_view path,
                                          std::string* leaf) {
  const nlohmann::json* at = &j;
  for (size_t dot = path.find('.'); dot != std::string_view::npos; dot = path.find('.')) {
    at = &json_fields::Part(*at, std::string(path.substr(0, dot)).c_str());
    path.remove_prefix(dot + 1);
  }
  *leaf = std::string(path);
  return *at;
}

// Every field of `table` into the object `j` (other keys of j stay).
template <typename S, size_t N>
void WriteFields(const S& s, const Field<S> (&table)[N], nlohmann::json& j) {
  if (!j.is_object()) j = nlohmann::json::object();
  std::string leaf;
  for (const Field<S>& f : table) {
    if (f.key == nullptr) continue;
    nlohmann::json& parent = PathParent(j, f.key, &leaf);
    if (f.u64 != nullptr) {
      parent[leaf] = s.*f.u64;
    } else if (f.f64 != nullptr) {
      parent[leaf] = s.*f.f64;
    } else if (f.flag != nullptr) {
      parent[leaf] = s.*f.flag;
    } else if (f.text != nullptr) {
      parent[leaf] = s.*f.text;
    } else if (f.derived != nullptr) {
      parent[leaf] = f.derived(s);
    }
  }
}

template <typename S, size_t N>
nlohmann::json FieldsJson(const S& s, const Field<S> (&table)[N]) {
  nlohmann::json j = nlohmann::json::object();
  WriteFields(s, table, j);
  return j;
}

// Every field `table` can read back from `j` into `*s`; derived ones are left.
template <typename S, size_t N>
void ReadFields(const nlohmann::json& j, const Field<S> (&table)[N], S* s) {
  std::string leaf;
  for (const Field<S>& f : table) {
    if (f.key == nullptr || f.derived != nullptr) continue;
    const nlohmann::json& parent = PathParentOf(j, f.key, &leaf);
    if (f.u64 != nullptr) {
      json_fields::Read(parent, leaf.c_str(), &(s->*f.u64));
    } else if (f.f64 != nullptr) {
      json_fields::Read(parent, leaf.c_str(), &(s->*f.f64));
    } else if (f.flag != nullptr) {
      json_fields::Read(parent, leaf.c_str(), &(s->*f.flag));
    } else if (f.text != nullptr) {
      json_fields::Read(parent, leaf.c_str(), &(s->*f.text));
    }
  }
}

}  // namespace mmfs::fs::field_table
