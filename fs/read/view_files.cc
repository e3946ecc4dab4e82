#include "fs/read/view_files.h"

#include <algorithm>
#include <string>
#include <tuple>

namespace mmfs::fs {

ViewFiles::ViewFiles(const format::Dataset& dataset, format::ViewSet views, uint32_t root_side,
                     OriginReader& origin)
    : dataset_(dataset),
      views_(std::move(views)),
      origin_(origin),
      counters_(std::make_unique<Counters[]>(views_.views().size())) {
  if (root_side != 0) root_tree_ = TreeOfSide(root_side).value_or(0);
}

std::optional<size_t> ViewFiles::TreeOfSide(uint32_t side) const {
  for (size_t k = 0; k < views_.views().size(); ++k) {
    if (views_.views()[k]->side() == side) return k + 1;
  }
  return std::nullopt;
}

Result<TreeFile> ViewFiles::Resolve(size_t tree, const format::Entry& e) const {
  TreeFile f;
  f.tree = tree;
  f.entry = e;
  f.key = e.index;
  if (tree == 0) {
    f.file.source = format::ViewFile::Source::kOriginal;
    f.file.size = e.record.size;
    f.file.checksum = e.record.checksum;
    f.file.shard = e.record.shard;
    f.file.data_offset = e.record.data_offset;
    f.file.width = e.record.width;
    f.file.height = e.record.height;
    return f;
  }
  const format::View& view = *views_.views()[tree - 1];
  auto file = view.Lookup(e);
  if (!file.ok()) return origin_.CountError(file.status());
  if (file->source == format::ViewFile::Source::kOmitted) {
    return Status::NotFound("left out of the view");
  }
  f.file = *file;
  if (f.resized()) f.key = ViewKey(view.side(), e.index);
  return f;
}

std::vector<TreeFile> ViewFiles::Members(size_t tree,
                                         const std::vector<format::Entry>& members) const {
  std::vector<TreeFile> out;
  out.reserve(members.size());
  for (const format::Entry& m : members) {
    auto f = Resolve(tree, m);
    if (f.ok()) out.push_back(*f);
  }
  return out;
}

Result<TreeFile> ViewFiles::FileOfKey(cache::CacheKey key) const {
  if (!IsViewKey(key)) return Status::NotFound("not a view key");
  std::optional<size_t> tree = TreeOfSide(ViewKeySide(key));
  if (!tree) return Status::NotFound("no such view");
  MMFS_ASSIGN_OR_RETURN(format::Entry e, dataset_.GetEntry(ViewKeyIndex(key)));
  MMFS_ASSIGN_OR_RETURN(TreeFile f, Resolve(*tree, e));
  if (!f.resized()) return Status::NotFound("not a resized file");
  return f;
}

Result<std::pair<size_t, format::Entry>> ViewFiles::ResolvePath(const std::string& mnt,
                                                                std::string_view path) const {
  if (!mnt.empty() && path.size() > mnt.size() && path.substr(0, mnt.size()) == mnt &&
      path[mnt.size()] == '/') {
    path.remove_prefix(mnt.size());
  }
  while (!path.empty() && path.front() == '/') path.remove_prefix(1);
  size_t tree = root_tree_;
  // "@N/..." names view N's tree, unless the root is a view already (then @N is not served).
  uint32_t side = 0;
  const size_t slash = path.find('/');
  const std::string_view first = path.substr(0, slash);
  if (root_tree_ == 0 && first.size() >= 2 && first[0] == '@' &&
      format::ParseViewSide(first.substr(1), &side)) {
    std::optional<size_t> t = TreeOfSide(side);
    if (!t) return Status::NotFound("no such view");
    tree = *t;
    path.remove_prefix(first.size());
  }
  auto cur = dataset_.GetEntry(0);  // the root
  while (cur.ok()) {
    while (!path.empty() && path.front() == '/') path.remove_prefix(1);
    if (path.empty()) break;
    size_t next = path.find('/');
    std::string_view name = path.substr(0, next);
    path.remove_prefix(next == std::string_view::npos ? path.size() : next);
    if (name == ".") continue;
    if (!cur->is_dir()) return Status::NotADirectory("a step of the path is not a directory");
    cur = dataset_.LookupChild(*cur, name);
  }
  if (!cur.ok()) return cur.status();
  return std::make_pair(tree, *cur);
}

void ViewFiles::CountLoad(size_t tree, ReadCause cause, uint64_t bytes) {
  Counters& c = counters_[tree - 1];
  if (cause == ReadCause::kPrefetch) {
    c.readahead_loads.fetch_add(1, std::memory_order_relaxed);
    c.readahead_load_bytes.fetch_add(bytes, std::memory_order_relaxed);
  } else {
    c.resized_loads.fetch_add(1, std::memory_order_relaxed);
    c.resized_load_bytes.fetch_add(bytes, std::memory_order_relaxed);
  }
}

Result<cache::Blob> ViewFiles::Load(const TreeFile& f, ReadCause cause) {
  if (!f.resized() || f.tree == 0 || f.tree >= tree_count()) {
    return Status::InvalidArgument("not a resized file");
  }
  const format::View& view = *views_.views()[f.tree - 1];
  auto raw = origin_.ReadSpan({view.tree(), f.file.shard}, f.file.data_offset, f.size(), cause);
  if (!raw.ok()) return origin_.CountError(raw.status());
  const std::string_view bytes(raw->data(), raw->size());
  Status s = view.Check(f.file, format::ViewPath(view.side(), dataset_.PathOf(f.entry.index)),
                        bytes);
  if (!s.ok()) return origin_.CountError(s);
  CountLoad(f.tree, cause, f.size());
  return std::make_shared<const std::string>(bytes);
}

void ViewFiles::LoadMany(std::vector<TreeFile> files, ReadCause cause,
                         const std::function<void(const TreeFile&, cache::Blob)>& found) {
  // As OriginReader::ReadCoalesced: neighbours in a shard in one sequential read, small gaps
  // (LMDB's node headers and page padding) included.
  constexpr uint64_t kMaxSpan = 8ull << 20;
  constexpr uint64_t kMaxGap = 64 << 10;
  auto place = [](const TreeFile& f) {
    return std::make_tuple(f.tree, f.file.shard, f.file.data_offset);
  };
  files.erase(std::remove_if(files.begin(), files.end(),
                             [](const TreeFile& f) { return !f.resized(); }),
              files.end());
  std::sort(files.begin(), files.end(),
            [&](const TreeFile& a, const TreeFile& b) { return place(a) < place(b); });
  for (size_t i = 0; i < files.size();) {
    const size_t tree = files[i].tree;
    const uint32_t shard = files[i].file.shard;
    const uint64_t start = files[i].file.data_offset;
    uint64_t end = start + files[i].size();
    size_t j = i + 1;
    while (j < files.size() && files[j].tree == tree && files[j].file.shard == shard &&
           files[j].file.data_offset >= end && files[j].file.data_offset - end <= kMaxGap &&
           files[j].file.data_offset + files[j].size() - start <= kMaxSpan) {
      end = files[j].file.data_offset + files[j].size();
      ++j;
    }
    if (tree > 0 && tree < tree_count()) {
      const format::View& view = *views_.views()[tree - 1];
      auto raw = origin_.ReadSpan({view.tree(), shard}, start, end - start, cause);
      if (raw.ok()) {
        for (size_t m = i; m < j; ++m) {
          std::string_view bytes(raw->data() + (files[m].file.data_offset - start),
                                 files[m].size());
          if (!view.Check(files[m].file, "", bytes).ok()) continue;
          CountLoad(tree, cause, bytes.size());
          found(files[m], std::make_shared<const std::string>(bytes));
        }
      }
    }
    i = j;
  }
}

void ViewFiles::CountServed(size_t tree, uint64_t offset, uint64_t bytes) {
  if (tree == 0) return;
  Counters& c = counters_[tree - 1];
  if (offset == 0) c.files_served.fetch_add(1, std::memory_order_relaxed);
  c.bytes_served.fetch_add(bytes, std::memory_order_relaxed);
}

void ViewFiles::Stats(std::vector<ViewStats>* out) const {
  for (size_t k = 0; k < views_.views().size(); ++k) {
    const Counters& c = counters_[k];
    ViewStats v;
    v.side = views_.views()[k]->side();
    v.files_served = c.files_served.load(std::memory_order_relaxed);
    v.bytes_served = c.bytes_served.load(std::memory_order_relaxed);
    v.resized_loads = c.resized_loads.load(std::memory_order_relaxed);
    v.resized_load_bytes = c.resized_load_bytes.load(std::memory_order_relaxed);
    v.readahead_loads = c.readahead_loads.load(std::memory_order_relaxed);
    v.readahead_load_bytes = c.readahead_load_bytes.load(std::memory_order_relaxed);
    out->push_back(v);
  }
}

}  // namespace mmfs::fs
