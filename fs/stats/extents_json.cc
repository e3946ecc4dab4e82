#include "fs/stats/extents_json.h"

#include "fs/stats/json_fields.h"

namespace mmfs::fs {

using nlohmann::json;

namespace {

// A file count and its bytes.
json Pair(uint64_t files, uint64_t bytes) { return {{"files", files}, {"bytes", bytes}}; }

using json_fields::Part;
using json_fields::Read;

void ReadPair(const json& j, const char* key, uint64_t* files, uint64_t* bytes) {
  Read(Part(j, key), "files", files);
  Read(Part(j, key), "bytes", bytes);
}

}  // namespace

json ExtentsToJson(const ExtentCounters& c) {
  return {{"mode", c.mode},
          {"reads", c.extents},
          {"bytes", c.extent_bytes},
          {"probes", c.probes},
          {"last_extent_bytes", c.last_extent_bytes},
          {"kept_ram", Pair(c.kept_files, c.kept_bytes)},
          {"kept_ssd", Pair(c.kept_ssd_files, c.kept_ssd_bytes)},
          {"used", Pair(c.used_files, c.used_bytes)},
          {"wasted", Pair(c.wasted_files, c.wasted_bytes)},
          {"used_share", c.used_share},
          {"area_bytes", c.area_bytes},
          {"area_budget", c.area_budget},
          {"sample_reads",
           {{"cost_unknown", c.skipped_unknown},
            {"extent_too_small", c.skipped_small},
            {"no_room", c.skipped_no_room},
            {"neighbours_unused", c.skipped_unused},
            {"busy", c.skipped_busy}}}};
}

ExtentCounters ExtentsFromJson(const json& j) {
  ExtentCounters c;
  c.mode.clear();
  Read(j, "mode", &c.mode);
  Read(j, "reads", &c.extents);
  Read(j, "bytes", &c.extent_bytes);
  Read(j, "probes", &c.probes);
  Read(j, "last_extent_bytes", &c.last_extent_bytes);
  ReadPair(j, "kept_ram", &c.kept_files, &c.kept_bytes);
  ReadPair(j, "kept_ssd", &c.kept_ssd_files, &c.kept_ssd_bytes);
  ReadPair(j, "used", &c.used_files, &c.used_bytes);
  ReadPair(j, "wasted", &c.wasted_files, &c.wasted_bytes);
  Read(j, "used_share", &c.used_share);
  Read(j, "area_bytes", &c.area_bytes);
  Read(j, "area_budget", &c.area_budget);
  const json& r = Part(j, "sample_reads");
  Read(r, "cost_unknown", &c.skipped_unknown);
  Read(r, "extent_too_small", &c.skipped_small);
  Read(r, "no_room", &c.skipped_no_room);
  Read(r, "neighbours_unused", &c.skipped_unused);
  Read(r, "busy", &c.skipped_busy);
  return c;
}

}  // namespace mmfs::fs
