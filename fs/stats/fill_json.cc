#include "fs/stats/fill_json.h"

#include "fs/stats/json_fields.h"

namespace mmfs::fs {

using nlohmann::json;
using json_fields::Part;
using json_fields::Read;

json FillToJson(const FillStats& f) {
  return {{"mode", f.mode},
          {"state", f.state},
          {"trigger", f.trigger},
          {"share", f.share},
          {"target", {{"files", f.target_files}, {"bytes", f.target_bytes}}},
          {"fetched", {{"files", f.fetched_files}, {"bytes", f.fetched_bytes}}},
          {"present", {{"files", f.present_files}, {"bytes", f.present_bytes}}},
          {"failed_files", f.failed_files},
          {"not_stored_files", f.not_stored_files},
          {"requests", f.requests},
          {"in_flight", f.in_flight},
          {"in_flight_target", f.in_flight_target},
          {"bytes_per_second", f.bytes_per_second},
          {"seconds_left", f.seconds_left},
          {"seconds", f.seconds},
          {"hosts",
           {{"shared", f.shared},
            {"chunks", f.hosts.chunks},
            {"own_chunks", f.hosts.own_chunks},
            {"claimed_chunks", f.hosts.claimed_chunks},
            {"peer_chunks", f.hosts.peer_chunks},
            {"peer", {{"files", f.hosts.peer_files}, {"bytes", f.hosts.peer_bytes}}},
            {"waited_out_chunks", f.hosts.waited_out_chunks},
            {"demand_waits", f.hosts.demand_waits},
            {"demand_waits_served", f.hosts.demand_waits_served}}}};
}

FillStats FillFromJson(const json& j) {
  FillStats f;
  Read(j, "mode", &f.mode);
  Read(j, "state", &f.state);
  Read(j, "trigger", &f.trigger);
  Read(j, "share", &f.share);
  Read(Part(j, "target"), "files", &f.target_files);
  Read(Part(j, "target"), "bytes", &f.target_bytes);
  Read(Part(j, "fetched"), "files", &f.fetched_files);
  Read(Part(j, "fetched"), "bytes", &f.fetched_bytes);
  Read(Part(j, "present"), "files", &f.present_files);
  Read(Part(j, "present"), "bytes", &f.present_bytes);
  Read(j, "failed_files", &f.failed_files);
  Read(j, "not_stored_files", &f.not_stored_files);
  Read(j, "requests", &f.requests);
  Read(j, "in_flight", &f.in_flight);
  Read(j, "in_flight_target", &f.in_flight_target);
  Read(j, "bytes_per_second", &f.bytes_per_second);
  Read(j, "seconds_left", &f.seconds_left);
  Read(j, "seconds", &f.seconds);
  const json& hosts = Part(j, "hosts");
  Read(hosts, "shared", &f.shared);
  Read(hosts, "chunks", &f.hosts.chunks);
  Read(hosts, "own_chunks", &f.hosts.own_chunks);
  Read(hosts, "claimed_chunks", &f.hosts.claimed_chunks);
  Read(hosts, "peer_chunks", &f.hosts.peer_chunks);
  Read(Part(hosts, "peer"), "files", &f.hosts.peer_files);
  Read(Part(hosts, "peer"), "bytes", &f.hosts.peer_bytes);
  Read(hosts, "waited_out_chunks", &f.hosts.waited_out_chunks);
  Read(hosts, "demand_waits", &f.hosts.demand_waits);
  Read(hosts, "demand_waits_served", &f.hosts.demand_waits_served);
  return f;
}

}  // namespace mmfs::fs
