#include "fs/core/view_namespace.h"

#include <sys/stat.h>

#include <algorithm>
#include <string>

#include "fs/read/origin_reader.h"

namespace mmfs::fs {

ViewNamespace::ViewNamespace(const format::Dataset& dataset, ViewFiles& views,
                             OriginReader& origin)
    : dataset_(dataset), views_(views), entries_(dataset.entry_count()), origin_(origin) {}

uint64_t ViewNamespace::Ino(size_t tree, uint64_t index) const {
  if (tree == views_.root_tree()) return 1 + index;
  return 1 + entries_ * tree + index;
}

Result<TreeFile> ViewNamespace::FileOf(uint64_t ino) const {
  if (!Owns(ino)) return Status::NotFound("no such inode");
  size_t tree;
  uint64_t index;
  if (ino <= entries_) {
    tree = views_.root_tree();
    index = ino - 1;
  } else {
    tree = static_cast<size_t>((ino - 1) / entries_);
    index = (ino - 1) % entries_;
  }
  auto e = dataset_.GetEntry(index);
  if (!e.ok()) return origin_.CountError(e.status());
  return views_.Resolve(tree, *e);
}

Attr ViewNamespace::NodeAttr(const TreeFile& n) const {
  Attr a;
  a.ino = Ino(n.tree, n.entry.index);
  a.mode = format::ServedMode(n.entry.record.mode);
  a.size = n.entry.is_dir() ? 4096 : n.file.size;
  a.mtime_ns = n.entry.record.mtime_ns;
  a.nlink = 1;  // as in the original tree: subdirectory count unknown
  return a;
}

std::optional<Attr> ViewNamespace::LookupInRoot(std::string_view name) const {
  uint32_t side = 0;
  if (has_root_view() || name.size() < 2 || name[0] != '@' ||
      !format::ParseViewSide(name.substr(1), &side)) {
    return std::nullopt;
  }
  std::optional<size_t> tree = views_.TreeOfSide(side);
  if (!tree) return std::nullopt;
  auto root = dataset_.GetEntry(0);
  if (!root.ok()) return std::nullopt;
  auto n = views_.Resolve(*tree, *root);
  if (!n.ok()) return std::nullopt;
  return NodeAttr(*n);
}

Result<Attr> ViewNamespace::Lookup(uint64_t parent, std::string_view name) {
  auto dir = FileOf(parent);
  if (!dir.ok()) return dir.status();
  if (!dir->entry.is_dir()) return Status::NotADirectory("not a directory");
  auto child = dataset_.LookupChild(dir->entry, name);
  if (!child.ok()) {
    return child.status().code() == StatusCode::kNotFound ? child.status()
                                                          : origin_.CountError(child.status());
  }
  auto n = views_.Resolve(dir->tree, *child);
  if (!n.ok()) return n.status();
  return NodeAttr(*n);
}

Result<Attr> ViewNamespace::GetAttr(uint64_t ino) {
  auto n = FileOf(ino);
  if (!n.ok()) return n.status();
  return NodeAttr(*n);
}

Status ViewNamespace::ReadDir(
    uint64_t ino, uint64_t offset,
    const std::function<bool(std::string_view, const Attr&, uint64_t)>& emit) {
  auto dir = FileOf(ino);
  if (!dir.ok()) return dir.status();
  if (!dir->entry.is_dir()) return Status::NotADirectory("not a directory");
  // Positions as in the original tree: 1 = ".", 2 = "..", 3 + i = child i (left-out children
  // keep their position unused, so an offset stays valid between calls).
  Attr self = NodeAttr(*dir);
  Attr parent = self;
  if (dir->entry.index == 0) {
    parent.ino = kRootIno;  // @N/.. is the mount's root (with a root view: itself)
  } else if (auto p = dataset_.GetEntry(dir->entry.record.parent); p.ok()) {
    if (auto pn = views_.Resolve(dir->tree, *p); pn.ok()) parent = NodeAttr(*pn);
  }
  std::optional<uint64_t> first = EmitDotEntries(offset, self, parent, emit);
  if (!first) return Status::Ok();
  for (uint64_t i = *first; i < dir->entry.child_count(); ++i) {
    auto child = dataset_.GetEntry(dir->entry.first_child() + i);
    if (!child.ok()) return origin_.CountError(child.status());
    auto n = views_.Resolve(dir->tree, *child);
    if (!n.ok()) {
      if (n.status().code() == StatusCode::kNotFound) continue;
      return n.status();
    }
    if (!emit(child->name, NodeAttr(*n), 3 + i)) return Status::Ok();
  }
  return Status::Ok();
}

Result<std::string> ViewNamespace::ReadLink(uint64_t ino) {
  auto n = FileOf(ino);
  if (!n.ok()) return n.status();
  auto target = dataset_.LinkTarget(n->entry);
  if (!target.ok()) return target.status();
  return std::string(*target);
}

std::vector<std::pair<std::string, std::string>> ViewNamespace::ServedViews() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (size_t tree = 1; tree < views_.tree_count(); ++tree) {
    std::string name = std::to_string(views_.side(tree));
    if (has_root_view()) {
      if (tree == views_.root_tree()) out.emplace_back(name, "../..");
      continue;
    }
    std::string target = "../../@";
    target += name;
    out.emplace_back(std::move(name), std::move(target));
  }
  return out;
}

}  // namespace mmfs::fs
