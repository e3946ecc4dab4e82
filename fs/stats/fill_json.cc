#include "fs/stats/fill_json.h"

#include "fs/stats/field_json.h"
#include "fs/stats/stat_fields.h"

namespace mmfs::fs {

nlohmann::json FillToJson(const FillStats& f) {
  nlohmann::json j = field_table::FieldsJson(f, stat_fields::kFillFields);
  field_table::WriteFields(f.hosts, stat_fields::kFillHostsFields, j["hosts"]);
  return j;
}

FillStats FillFromJson(const nlohmann::json& j) {
  FillStats f;
  field_table::ReadFields(j, stat_fields::kFillFields, &f);
  field_table::ReadFields(json_fields::Part(j, "hosts"), stat_fields::kFillHostsFields, &f.hosts);
  return f;
}

}  // namespace mmfs::fs
