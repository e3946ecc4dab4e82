// ControlDir: the hidden `.mmfs` directory and its files.
//
// Inodes above the dataset's entries: the directory, `hint` and `control` (symlinks to the
// daemon's FIFOs, when open), the `.mmfs` symlink of an overlay front, the `views` directory
// (when the mount serves views: one symlink per view, `256 -> ../../@256`, so that `ls
// MNT/.mmfs/views` lists them) and its links, then one fresh inode per
// lookup of `stats` or `metrics`, holding a snapshot rendered at that lookup, so that the
// kernel's page cache (kept for data files) never shows stale numbers. Snapshots are freed when
// the kernel forgets them (at most 64 are kept).
//
// Ownership: `render` is called to make a snapshot's text (it must stay callable while serving).
// Thread-safety: all methods are thread-safe, except the Set*Target setters, which must be
// called before serving. mu_ is a leaf lock (render runs without it).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "fs/names/fs_types.h"
#include "fs/stats/stats.h"

namespace mmfs::fs {

// The query of a `stats?...` name (without "stats?"); InvalidArgument for an unknown key or a
// value out of range (window 0 < s <= 3600, top 1..1000).
Result<StatsQuery> ParseStatsQuery(std::string_view query);

class ControlDir {
 public:
  enum class File { kStats, kMetrics };
  using Render = std::function<std::string(File, const StatsQuery&)>;

  // `dir_ino`: the directory's inode, the first above the dataset's.
  ControlDir(uint64_t dir_ino, Render render);

  // Whether `ino` is one of the control inodes.
  bool Owns(uint64_t ino) const { return ino >= dir_ino_; }
  uint64_t dir_ino() const { return dir_ino_; }
  // `.mmfs` (or `.mmfs.d` under an overlay front) in the root; nullopt for any other name.
  std::optional<Attr> LookupInRoot(std::string_view name) const;
  // Whether `ino` is one of the control directories (`.mmfs`, `.mmfs/views`).
  bool IsDir(uint64_t ino) const { return ino == dir_ino_ || (ino == views_ino() && has_views()); }
  // A name inside control directory `parent`. In `.mmfs`, `stats?window=SECONDS&top=N` (either,
  // in any order) is `stats` rendered with that query (ParseStatsQuery); not listed.
  Result<Attr> Lookup(uint64_t parent, std::string_view name);
  Result<Attr> GetAttr(uint64_t ino) const;
  Status ReadDir(uint64_t ino, uint64_t offset,
                 const std::function<bool(std::string_view, const Attr&, uint64_t)>& emit) const;
  Result<ReadData> Read(uint64_t ino, uint64_t offset, size_t size) const;
  // NotFound when `ino` is not a symlink.
  Result<std::string> ReadLink(uint64_t ino) const;
  void Forget(uint64_t ino);

  // Targets of `hint`, `control` and of `.mmfs` as a symlink; empty: absent.
  void SetHintTarget(std::string target) { hint_target_ = std::move(target); }
  void SetControlTarget(std::string target) { control_target_ = std::move(target); }
  void SetLinkTarget(std::string target) { link_target_ = std::move(target); }
  // The views served, as (name, symlink target) pairs (ViewNamespace::ServedViews).
  void SetViews(std::vector<std::pair<std::string, std::string>> views) {
    views_ = std::move(views);
  }
  bool has_hint() const { return !hint_target_.empty(); }

 private:
  uint64_t hint_ino() const { return dir_ino_ + 1; }
  uint64_t control_ino() const { return dir_ino_ + 2; }
  uint64_t link_ino() const { return dir_ino_ + 3; }
  uint64_t views_ino() const { return dir_ino_ + 4; }
  uint64_t view_link_ino(size_t i) const { return dir_ino_ + 5 + i; }
  uint64_t first_snapshot_ino() const { return view_link_ino(views_.size()); }
  bool has_views() const { return !views_.empty(); }
  bool IsSnapshot(uint64_t ino) const { return ino >= first_snapshot_ino(); }
  Attr DirAttr(uint64_t ino) const;
  Attr LinkAttr(uint64_t ino, const std::string& target) const;

  const uint64_t dir_ino_;
  const Render render_;
  std::string hint_target_, control_target_, link_target_;
  std::vector<std::pair<std::string, std::string>> views_;
  mutable std::mutex mu_;
  uint64_t next_snapshot_ = 0;                                        // guarded by mu_
  std::map<uint64_t, std::shared_ptr<const std::string>> snapshots_;  // by inode; guarded by mu_
};

}  // namespace mmfs::fs
