#include "fs/stats/extents_json.h"

#include "fs/stats/field_json.h"
#include "fs/stats/stat_fields.h"

namespace mmfs::fs {

nlohmann::json ExtentsToJson(const ExtentCounters& c) {
  return field_table::FieldsJson(c, stat_fields::kExtentFields);
}

ExtentCounters ExtentsFromJson(const nlohmann::json& j) {
  ExtentCounters c;
  field_table::ReadFields(j, stat_fields::kExtentFields, &c);
  return c;
}

}  // namespace mmfs::fs
