#include "fs/core/view_namespace.h"

#include <sys/stat.h>

#include <algorithm>
#include <string>

#include "fs/core/file_reader.h"
#include "fs/core/origin_reader.h"

namespace mmfs::fs {

ViewNamespace::ViewNamespace(const format::Dataset& dataset, format::ViewSet views,
                             uint32_t root_side, FileReader& reader, OriginReader& origin,
                             BaseRead base_read)
    : dataset_(dataset),
      views_(std::move(views)),
      entries_(dataset.entry_count()),
      reader_(reader),
      origin_(origin),
      base_read_(std::move(base_read)),
      counters_(std::make_unique<Counters[]>(views_.views().size())) {
  for (size_t k = 0; k < views_.views().size(); ++k) {
    if (root_side != 0 && views_.views()[k]->side() == root_side) root_k_ = static_cast<int>(k);
  }
}

uint64_t ViewNamespace::Ino(size_t k, uint64_t index) const {
  if (static_cast<int>(k) == root_k_) return 1 + index;
  return 1 + entries_ * (k + 1) + index;
}

Result<ViewNamespace::Node> ViewNamespace::NodeFor(size_t k, const format::Entry& e) const {
  auto file = views_.views()[k]->Lookup(e);
  if (!file.ok()) return origin_.CountError(file.status());
  if (file->source == format::ViewFile::Source::kOmitted) {
    return Status::NotFound("left out of the view");
  }
  return Node{k, e, *file};
}

Result<ViewNamespace::Node> ViewNamespace::NodeOf(uint64_t ino) const {
  if (!Owns(ino)) return Status::NotFound("no such inode");
  size_t k;
  uint64_t index;
  if (ino <= entries_) {
    k = static_cast<size_t>(root_k_);
    index = ino - 1;
  } else {
    k = static_cast<size_t>((ino - 1) / entries_ - 1);
    index = (ino - 1) % entries_;
  }
  auto e = dataset_.GetEntry(index);
  if (!e.ok()) return origin_.CountError(e.status());
  return NodeFor(k, *e);
}

Attr ViewNamespace::NodeAttr(const Node& n) const {
  Attr a;
  a.ino = Ino(n.k, n.entry.index);
  a.mode = n.entry.record.mode;
  a.size = n.entry.is_dir() ? 4096 : n.file.size;
  a.mtime_ns = n.entry.record.mtime_ns;
  a.nlink = 1;  // as in the original tree: subdirectory count unknown
  return a;
}

std::optional<Attr> ViewNamespace::LookupInRoot(std::string_view name) const {
  uint32_t side = 0;
  if (root_k_ >= 0 || name.size() < 2 || name[0] != '@' ||
      !format::ParseViewSide(name.substr(1), &side)) {
    return std::nullopt;
  }
  for (size_t k = 0; k < views_.views().size(); ++k) {
    if (views_.views()[k]->side() != side) continue;
    auto root = dataset_.GetEntry(0);
    if (!root.ok()) return std::nullopt;
    Node n{k, *root, format::ViewFile{}};
    return NodeAttr(n);
  }
  return std::nullopt;
}

Result<Attr> ViewNamespace::Lookup(uint64_t parent, std::string_view name) {
  auto dir = NodeOf(parent);
  if (!dir.ok()) return dir.status();
  if (!dir->entry.is_dir()) return Status::NotADirectory("not a directory");
  auto child = dataset_.LookupChild(dir->entry, name);
  if (!child.ok()) {
    return child.status().code() == StatusCode::kNotFound ? child.status()
                                                          : origin_.CountError(child.status());
  }
  auto n = NodeFor(dir->k, *child);
  if (!n.ok()) return n.status();
  return NodeAttr(*n);
}

Result<Attr> ViewNamespace::GetAttr(uint64_t ino) {
  auto n = NodeOf(ino);
  if (!n.ok()) return n.status();
  return NodeAttr(*n);
}

Status ViewNamespace::ReadDir(
    uint64_t ino, uint64_t offset,
    const std::function<bool(std::string_view, const Attr&, uint64_t)>& emit) {
  auto dir = NodeOf(ino);
  if (!dir.ok()) return dir.status();
  if (!dir->entry.is_dir()) return Status::NotADirectory("not a directory");
  // Positions as in the original tree: 1 = ".", 2 = "..", 3 + i = child i (left-out children
  // keep their position unused, so an offset stays valid between calls).
  Attr self = NodeAttr(*dir);
  Attr parent = self;
  if (dir->entry.index == 0) {
    parent.ino = kRootIno;  // @N/.. is the mount's root (with a root view: itself)
  } else if (auto p = dataset_.GetEntry(dir->entry.record.parent); p.ok()) {
    parent = NodeAttr(Node{dir->k, *p, format::ViewFile{}});
  }
  std::optional<uint64_t> first = EmitDotEntries(offset, self, parent, emit);
  if (!first) return Status::Ok();
  for (uint64_t i = *first; i < dir->entry.child_count(); ++i) {
    auto child = dataset_.GetEntry(dir->entry.first_child() + i);
    if (!child.ok()) return origin_.CountError(child.status());
    auto n = NodeFor(dir->k, *child);
    if (!n.ok()) {
      if (n.status().code() == StatusCode::kNotFound) continue;
      return n.status();
    }
    if (!emit(child->name, NodeAttr(*n), 3 + i)) return Status::Ok();
  }
  return Status::Ok();
}

Result<cache::Blob> ViewNamespace::LoadResized(const Node& n) {
  const format::View& view = *views_.views()[n.k];
  auto bytes = std::make_shared<std::string>(n.file.size, '\0');
  const std::string path = format::ViewPath(view.side(), dataset_.PathOf(n.entry.index));
  Status s = view.ReadVerified(n.file, path, bytes->data());
  if (!s.ok()) return origin_.CountError(s);
  Counters& c = counters_[n.k];
  c.resized_loads.fetch_add(1, std::memory_order_relaxed);
  c.resized_load_bytes.fetch_add(n.file.size, std::memory_order_relaxed);
  return cache::Blob(std::move(bytes));
}

Result<ReadData> ViewNamespace::Read(uint64_t ino, uint64_t offset, size_t size,
                                     uint64_t stream) {
  auto n = NodeOf(ino);
  if (!n.ok()) return n.status();
  if (!n->entry.is_regular()) {
    return n->entry.is_dir() ? Status::IsADirectory("read of a directory")
                             : Status::InvalidArgument("not a regular file");
  }
  Result<ReadData> r = Status::Ok();
  if (n->file.source == format::ViewFile::Source::kView) {
    const uint32_t side = views_.views()[n->k]->side();
    r = reader_.ReadKeyed(ViewKey(side, n->entry.index), n->file.size, offset, size,
                          [&]() { return LoadResized(*n); });
  } else {
    r = base_read_(n->entry, offset, size, stream);
  }
  if (r.ok()) {
    Counters& c = counters_[n->k];
    if (offset == 0) c.files_served.fetch_add(1, std::memory_order_relaxed);
    c.bytes_served.fetch_add(r->size, std::memory_order_relaxed);
  }
  return r;
}

Result<std::string> ViewNamespace::ReadLink(uint64_t ino) {
  auto n = NodeOf(ino);
  if (!n.ok()) return n.status();
  auto target = dataset_.LinkTarget(n->entry);
  if (!target.ok()) return target.status();
  return std::string(*target);
}

void ViewNamespace::Stats(std::vector<ViewStats>* out) const {
  for (size_t k = 0; k < views_.views().size(); ++k) {
    const Counters& c = counters_[k];
    out->push_back({views_.views()[k]->side(), c.files_served.load(std::memory_order_relaxed),
                    c.bytes_served.load(std::memory_order_relaxed),
                    c.resized_loads.load(std::memory_order_relaxed),
                    c.resized_load_bytes.load(std::memory_order_relaxed)});
  }
}

}  // namespace mmfs::fs
