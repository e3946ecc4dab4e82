#include "base/mount_table.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string_view>

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

namespace {
// Calls `each(word)` for every comma-separated word of `options` until it returns true.
template <typename Fn>
bool AnyOption(const std::string& options, Fn each) {
  size_t start = 0;
  while (start <= options.size()) {
    size_t comma = options.find(',', start);
    if (comma == std::string::npos) comma = options.size();
    if (each(std::string_view(options).substr(start, comma - start))) return true;
    start = comma + 1;
  }
  return false;
}
}  // namespace

bool HasMountOption(const std::string& options, const std::string& word) {
  return AnyOption(options, [&](std::string_view w) {
    return w == word || (w.size() > word.size() && w.substr(0, word.size()) == word &&
                         w[word.size()] == '=');
  });
}

std::optional<std::string> MountOptionValue(const std::string& options, const std::string& key) {
  std::optional<std::string> value;
  AnyOption(options, [&](std::string_view w) {
    if (w.size() <= key.size() || w.substr(0, key.size()) != key || w[key.size()] != '=') {
      return false;
    }
    value = std::string(w.substr(key.size() + 1));
    return true;
  });
  return value;
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
    head >> id >> parent >> e.device >> e.root >> e.mount_point >> e.mount_options;
    size_t sep = line.find(" - ");
    if (e.mount_point.empty() || sep == std::string::npos) continue;
    char* end = nullptr;
    const long long mount_id = std::strtoll(id.c_str(), &end, 10);
    if (!id.empty() && *end == '\0' && mount_id >= 0) e.mount_id = mount_id;
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
