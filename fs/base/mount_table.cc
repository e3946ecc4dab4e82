#include "fs/base/mount_table.h"

#include <fstream>
#include <sstream>

namespace mmfs {

std::string UnescapeMountField(const std::string& field) {
  std::string out;
  out.reserve(field.size());
  for (size_t i = 0; i < field.size(); ++i) {
    auto octal = [&](size_t k) { return field[k] >= '0' && field[k] <= '7'; };
    bool escape = field[i] == '\\' && i + 3 < field.size() && octal(i + 1) && octal(i + 2) &&
                  octal(i + 3);
    if (escape) {
      out += static_cast<char>((field[i + 1] - '0') * 64 + (field[i + 2] - '0') * 8 +
                               (field[i + 3] - '0'));
      i += 3;
    } else {
      out += field[i];
    }
  }
  return out;
}

std::vector<MountEntry> ReadMountTable(const std::string& path) {
  std::vector<MountEntry> entries;
  std::ifstream info(path);
  std::string line;
  while (std::getline(info, line)) {
    // id parent MAJ:MIN root mount-point options [optional fields...] - type source super-options
    std::istringstream head(line);
    std::string id, parent;
    MountEntry e;
    head >> id >> parent >> e.device >> e.root >> e.mount_point;
    size_t sep = line.find(" - ");
    if (e.mount_point.empty() || sep == std::string::npos) continue;
    std::istringstream tail(line.substr(sep + 3));
    tail >> e.fs_type >> e.source >> e.super_options;
    e.root = UnescapeMountField(e.root);
    e.mount_point = UnescapeMountField(e.mount_point);
    e.source = UnescapeMountField(e.source);
    e.super_options = UnescapeMountField(e.super_options);
    entries.push_back(std::move(e));
  }
  return entries;
}

std::optional<MountEntry> FindMount(const std::string& mount_point, const std::string& table) {
  std::optional<MountEntry> found;
  for (MountEntry& e : ReadMountTable(table)) {
    if (e.mount_point == mount_point) found = std::move(e);
  }
  return found;
}

}  // namespace mmfs
