#include "fs/names/paths.h"

#include <algorithm>

namespace mmfs::fs {

Result<format::Entry> ResolvePath(const format::Dataset& dataset, const std::string& mnt,
                                  std::string_view path) {
  if (!mnt.empty() && path.size() > mnt.size() && path.substr(0, mnt.size()) == mnt &&
      path[mnt.size()] == '/') {
    path.remove_prefix(mnt.size());
  }
  auto cur = dataset.GetEntry(0);  // the root
  while (cur.ok()) {
    while (!path.empty() && path.front() == '/') path.remove_prefix(1);
    if (path.empty()) return cur;
    size_t slash = path.find('/');
    std::string_view name = path.substr(0, slash);
    path.remove_prefix(slash == std::string_view::npos ? path.size() : slash);
    if (name == ".") continue;
    if (!cur->is_dir()) return Status::NotADirectory("a step of the path is not a directory");
    cur = dataset.LookupChild(*cur, name);
  }
  return cur.status();
}

Result<std::vector<format::Entry>> FilesAt(const format::Dataset& dataset,
                                           const std::string& mountpoint, std::string_view path) {
  MMFS_ASSIGN_OR_RETURN(format::Entry top, ResolvePath(dataset, mountpoint, path));
  std::vector<format::Entry> files;
  std::vector<format::Entry> dirs = {top};
  while (!dirs.empty()) {
    format::Entry d = dirs.back();
    dirs.pop_back();
    if (d.is_regular()) {
      files.push_back(d);
      continue;
    }
    if (!d.is_dir()) continue;
    for (uint64_t i = 0; i < d.child_count(); ++i) {
      auto c = dataset.GetEntry(d.first_child() + i);
      if (c.ok()) dirs.push_back(*c);
    }
  }
  std::sort(files.begin(), files.end(),
            [](const format::Entry& a, const format::Entry& b) { return a.index < b.index; });
  return files;
}

}  // namespace mmfs::fs
