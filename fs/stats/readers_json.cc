#include "fs/stats/readers_json.h"

#include <string>

#include "fs/readers/reader_verdict.h"

namespace mmfs::fs {

namespace {

using nlohmann::json;

const char* KindName(ReaderRow::Kind k) {
  switch (k) {
    case ReaderRow::Kind::kProcess:
      return "process";
    case ReaderRow::Kind::kOthers:
      return "others";
    case ReaderRow::Kind::kFinished:
      break;
  }
  return "finished";
}

json RowToJson(const ReaderRow& r) {
  json j = {{"kind", KindName(r.kind)},
            {"processes", r.processes},
            {"threads", r.threads},
            {"wall_seconds", r.wall_seconds},
            {"stall_seconds", r.stall_seconds},
            {"cpu_seconds", r.cpu_seconds},
            {"runq_seconds", r.runq_seconds},
            {"stall_share", r.stall_share()},
            {"cpu_share", r.cpu_share()},
            {"runq_share", r.runq_share()},
            {"requests", r.requests},
            {"served_bytes", r.served_bytes},
            {"verdict", ReaderVerdictName(r.verdict)}};
  if (r.kind == ReaderRow::Kind::kProcess) {
    j["pid"] = r.pid;
    j["comm"] = r.comm;
  }
  // rchar is the process's total (any file, pipe or socket): null where /proc/PID/io was not
  // readable.
  j["rchar_bytes"] = r.has_rchar ? json(r.rchar_bytes) : json(nullptr);
  j["page_cache_share_estimate"] =
      r.has_rchar ? json(r.page_cache_share_estimate()) : json(nullptr);
  return j;
}

ReaderRow RowFromJson(const json& j) {
  ReaderRow r;
  const std::string kind = j.at("kind").get<std::string>();
  r.kind = kind == "process"  ? ReaderRow::Kind::kProcess
           : kind == "others" ? ReaderRow::Kind::kOthers
                              : ReaderRow::Kind::kFinished;
  r.processes = j.at("processes").get<uint32_t>();
  r.threads = j.at("threads").get<uint32_t>();
  r.wall_seconds = j.at("wall_seconds").get<double>();
  r.stall_seconds = j.at("stall_seconds").get<double>();
  r.cpu_seconds = j.at("cpu_seconds").get<double>();
  r.runq_seconds = j.at("runq_seconds").get<double>();
  r.requests = j.at("requests").get<uint64_t>();
  r.served_bytes = j.at("served_bytes").get<uint64_t>();
  r.verdict = ReaderVerdictFromName(j.at("verdict").get<std::string>());
  if (r.kind == ReaderRow::Kind::kProcess) {
    r.pid = j.at("pid").get<uint64_t>();
    r.comm = j.at("comm").get<std::string>();
  }
  const json& rchar = j.at("rchar_bytes");
  r.has_rchar = !rchar.is_null();
  if (r.has_rchar) r.rchar_bytes = rchar.get<uint64_t>();
  return r;
}

}  // namespace

ReaderVerdict ReaderVerdictFromName(std::string_view name) {
  for (ReaderVerdict v :
       {ReaderVerdict::kIoBound, ReaderVerdict::kComputeBound, ReaderVerdict::kIdle}) {
    if (ReaderVerdictName(v) == name) return v;
  }
  return ReaderVerdict::kNone;
}

json ReadersToJson(const ReadersStats& r) {
  json j = {{"enabled", r.enabled}};
  if (!r.enabled) return j;
  json rows = json::array();
  for (const ReaderRow& row : r.rows) rows.push_back(RowToJson(row));
  json by_command = json::array();
  for (const ReaderCommandTotals& c : r.by_command) {
    by_command.push_back({{"comm", c.comm},
                          {"stall_seconds", c.stall_seconds},
                          {"cpu_seconds", c.cpu_seconds},
                          {"requests", c.requests},
                          {"served_bytes", c.served_bytes}});
  }
  j["window_seconds"] = r.window_seconds;
  j["verdict"] = ReaderVerdictName(r.verdict);
  j["advice"] = r.advice;
  j["thresholds"] = {{"io_bound_stall_share", kIoBoundStallShare},
                     {"compute_bound_cpu_share", kComputeBoundCpuShare},
                     {"min_wall_seconds", kMinWallSeconds}};
  j["rchar_scope"] = "process: every byte the process read, from any file, pipe or socket";
  j["total"] = RowToJson(r.total);
  j["rows"] = rows;
  j["tracked_threads"] = r.tracked_threads;
  j["tracked_processes"] = r.tracked_processes;
  j["untracked_requests"] = r.untracked_requests;
  j["by_command"] = by_command;
  return j;
}

Result<ReadersStats> ReadersFromJson(const json& j) {
  ReadersStats r;
  if (j.is_null()) return r;
  try {
    r.enabled = j.at("enabled").get<bool>();
    if (!r.enabled) return r;
    r.window_seconds = j.at("window_seconds").get<double>();
    r.verdict = ReaderVerdictFromName(j.at("verdict").get<std::string>());
    r.advice = j.at("advice").get<std::string>();
    r.total = RowFromJson(j.at("total"));
    for (const json& row : j.at("rows")) r.rows.push_back(RowFromJson(row));
    r.tracked_threads = j.at("tracked_threads").get<uint64_t>();
    r.tracked_processes = j.at("tracked_processes").get<uint64_t>();
    r.untracked_requests = j.at("untracked_requests").get<uint64_t>();
    for (const json& c : j.at("by_command")) {
      r.by_command.push_back({c.at("comm").get<std::string>(), c.at("stall_seconds").get<double>(),
                              c.at("cpu_seconds").get<double>(), c.at("requests").get<uint64_t>(),
                              c.at("served_bytes").get<uint64_t>()});
    }
  } catch (const json::exception& e) {
    return Status::Corruption(std::string("readers: ") + e.what());
  }
  return r;
}

}  // namespace mmfs::fs
