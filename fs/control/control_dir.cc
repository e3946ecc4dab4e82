#include "fs/control/control_dir.h"

#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <utility>
#include <vector>

namespace mmfs::fs {

namespace {
constexpr size_t kMaxSnapshots = 64;

Attr SnapshotAttr(uint64_t ino, uint64_t size) {
  Attr a;
  a.ino = ino;
  a.mode = S_IFREG | 0444;
  a.size = size;
  a.is_volatile = true;
  return a;
}
}  // namespace

Result<StatsQuery> ParseStatsQuery(std::string_view query) {
  StatsQuery q;
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view item = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      return Status::InvalidArgument("no value in " + std::string(item));
    }
    std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
    double v = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || end != value.data() + value.size()) {
      return Status::InvalidArgument("not a number: " + std::string(item));
    }
    if (key == "window" && v > 0 && v <= 3600) {
      q.reader_window_seconds = v;
    } else if (key == "top" && v >= 1 && v <= 1000) {
      q.reader_top = static_cast<size_t>(v);
    } else {
      return Status::InvalidArgument("unknown or out of range: " + std::string(item));
    }
  }
  return q;
}

ControlDir::ControlDir(uint64_t dir_ino, Render render)
    : dir_ino_(dir_ino), render_(std::move(render)) {}

Attr ControlDir::DirAttr(uint64_t ino) const {
  Attr a;
  a.ino = ino;
  a.mode = S_IFDIR | 0555;
  a.size = 4096;
  a.nlink = 2;
  a.is_volatile = true;
  return a;
}

Attr ControlDir::LinkAttr(uint64_t ino, const std::string& target) const {
  Attr a;
  a.ino = ino;
  a.mode = S_IFLNK | 0777;
  a.size = target.size();
  a.is_volatile = true;
  return a;
}

std::optional<Attr> ControlDir::LookupInRoot(std::string_view name) const {
  const bool linked = !link_target_.empty();
  if (name == kControlDirName) {
    return linked ? LinkAttr(link_ino(), link_target_) : DirAttr(dir_ino_);
  }
  if (name == kControlDirDirectName && linked) return DirAttr(dir_ino_);
  return std::nullopt;
}

Result<Attr> ControlDir::Lookup(uint64_t parent, std::string_view name) {
  if (!IsDir(parent)) return Status::NotADirectory("not a directory");
  if (parent == views_ino()) {
    for (size_t i = 0; i < views_.size(); ++i) {
      if (views_[i].first == name) return LinkAttr(view_link_ino(i), views_[i].second);
    }
    return Status::NotFound(std::string(name));
  }
  if (name == kViewsDirName && has_views()) return DirAttr(views_ino());
  StatsQuery query;
  const std::string_view stats_query_prefix = "stats?";
  const bool queried = name.substr(0, stats_query_prefix.size()) == stats_query_prefix;
  if (queried) {
    auto q = ParseStatsQuery(name.substr(stats_query_prefix.size()));
    if (!q.ok()) return Status::NotFound(std::string(name) + ": " + q.status().message());
    query = *q;
  }
  if (queried || name == kStatsFileName || name == kMetricsFileName) {
    auto blob = std::make_shared<const std::string>(
        render_(name == kMetricsFileName ? File::kMetrics : File::kStats, query));
    std::lock_guard<std::mutex> lock(mu_);
    uint64_t ino = first_snapshot_ino() + next_snapshot_++;
    snapshots_[ino] = blob;
    while (snapshots_.size() > kMaxSnapshots) snapshots_.erase(snapshots_.begin());
    return SnapshotAttr(ino, blob->size());
  }
  if (name == kHintFileName && !hint_target_.empty()) return LinkAttr(hint_ino(), hint_target_);
  if (name == kControlFileName && !control_target_.empty()) {
    return LinkAttr(control_ino(), control_target_);
  }
  return Status::NotFound(std::string(name));
}

Result<Attr> ControlDir::GetAttr(uint64_t ino) const {
  if (IsDir(ino)) return DirAttr(ino);
  if (ino >= view_link_ino(0) && ino < first_snapshot_ino()) {
    return LinkAttr(ino, views_[ino - view_link_ino(0)].second);
  }
  if (ino == link_ino() && !link_target_.empty()) return LinkAttr(link_ino(), link_target_);
  if (ino == hint_ino() && !hint_target_.empty()) return LinkAttr(hint_ino(), hint_target_);
  if (ino == control_ino() && !control_target_.empty()) {
    return LinkAttr(control_ino(), control_target_);
  }
  if (IsSnapshot(ino)) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = snapshots_.find(ino);
    if (it != snapshots_.end()) return SnapshotAttr(ino, it->second->size());
    return Status::NotFound("stats snapshot expired");
  }
  return Status::NotFound("no such inode");
}

Status ControlDir::ReadDir(
    uint64_t ino, uint64_t offset,
    const std::function<bool(std::string_view, const Attr&, uint64_t)>& emit) const {
  if (!IsDir(ino)) return Status::NotADirectory("not a directory");
  // Positions: 1 = ".", 2 = "..", 3 + i = name i.
  Attr parent;
  parent.ino = kRootIno;
  parent.mode = S_IFDIR | 0755;
  std::vector<std::pair<std::string_view, Attr>> names;
  if (ino == views_ino()) {
    names = {{".", DirAttr(ino)}, {"..", DirAttr(dir_ino_)}};
    for (size_t i = 0; i < views_.size(); ++i) {
      names.emplace_back(views_[i].first, LinkAttr(view_link_ino(i), views_[i].second));
    }
  } else {
    Attr file;
    file.mode = S_IFREG | 0444;
    file.ino = first_snapshot_ino();  // the kernel looks the name up before using it
    names = {{".", DirAttr(dir_ino_)}, {"..", parent}};
    names.emplace_back(kStatsFileName, file);
    names.emplace_back(kMetricsFileName, file);
    if (!hint_target_.empty()) {
      names.emplace_back(kHintFileName, LinkAttr(hint_ino(), hint_target_));
    }
    if (!control_target_.empty()) {
      names.emplace_back(kControlFileName, LinkAttr(control_ino(), control_target_));
    }
    if (has_views()) names.emplace_back(kViewsDirName, DirAttr(views_ino()));
  }
  for (uint64_t pos = offset; pos < names.size(); ++pos) {
    if (!emit(names[pos].first, names[pos].second, pos + 1)) return Status::Ok();
  }
  return Status::Ok();
}

Result<ReadData> ControlDir::Read(uint64_t ino, uint64_t offset, size_t size) const {
  if (IsDir(ino)) return Status::IsADirectory("read of a directory");
  if (!IsSnapshot(ino)) return Status::NotFound("no such inode");
  std::lock_guard<std::mutex> lock(mu_);
  auto it = snapshots_.find(ino);
  if (it == snapshots_.end()) {
    return Status::NotFound("stats snapshot expired; open the file again");
  }
  ReadData d;
  d.owner = it->second;
  if (offset < d.owner->size()) {
    d.data = d.owner->data() + offset;
    d.size = static_cast<size_t>(std::min<uint64_t>(size, d.owner->size() - offset));
  }
  return d;
}

Result<std::string> ControlDir::ReadLink(uint64_t ino) const {
  if (ino == hint_ino() && !hint_target_.empty()) return hint_target_;
  if (ino == control_ino() && !control_target_.empty()) return control_target_;
  if (ino == link_ino() && !link_target_.empty()) return link_target_;
  if (ino >= view_link_ino(0) && ino < first_snapshot_ino()) {
    return views_[ino - view_link_ino(0)].second;
  }
  return Status::NotFound("not a symlink");
}

void ControlDir::Forget(uint64_t ino) {
  if (!IsSnapshot(ino)) return;
  std::lock_guard<std::mutex> lock(mu_);
  snapshots_.erase(ino);
}

}  // namespace mmfs::fs
