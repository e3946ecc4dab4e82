#include "fs/names/control_protocol.h"

namespace mmfs::fs {

namespace {
// The first word of `s` and the rest after one space.
std::pair<std::string_view, std::string_view> Split(std::string_view s) {
  size_t sp = s.find(' ');
  if (sp == std::string_view::npos) return {s, {}};
  return {s.substr(0, sp), s.substr(sp + 1)};
}
}  // namespace

Result<ControlCommand> ParseControlLine(std::string_view line) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  auto [cmd, arg] = Split(line);
  ControlCommand c;
  if (cmd == "sync") {
    c.kind = ControlCommand::Kind::kSync;
    c.arg = std::string(arg);
  } else if (cmd == "evict") {
    c.kind = ControlCommand::Kind::kEvict;
    c.arg = std::string(arg);
  } else if (cmd == "warm") {
    auto [tier, path] = Split(arg);
    if (tier.empty()) return Status::InvalidArgument("warm: no tier (ram or ssd)");
    c.kind = ControlCommand::Kind::kWarm;
    c.tier = std::string(tier);
    c.arg = std::string(path);
  } else {
    return Status::InvalidArgument("unknown command '" + std::string(cmd) + "'");
  }
  return c;
}

std::string FormatControlLine(const ControlCommand& c) {
  switch (c.kind) {
    case ControlCommand::Kind::kWarm: return "warm " + c.tier + " " + c.arg + "\n";
    case ControlCommand::Kind::kEvict: return "evict " + c.arg + "\n";
    case ControlCommand::Kind::kSync: return "sync " + c.arg + "\n";
  }
  return "\n";
}

}  // namespace mmfs::fs
