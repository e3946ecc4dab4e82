// ControlDir: the hidden `.mmfs` directory and its files.
//
// Inodes above the dataset's entries: the directory, `hint` and `control` (symlinks to the
// daemon's FIFOs, when open), the `.mmfs` symlink of an overlay front, then one fresh inode per
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

#include "fs/base/status.h"
#include "fs/core/fs_types.h"
#include "fs/core/stats.h"

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
  // A name inside `.mmfs`. `stats?window=SECONDS&top=N` (either, in any order) is `stats`
  // rendered with that query (ParseStatsQuery); not listed.
  Result<Attr> Lookup(std::string_view name);
  Result<Attr> GetAttr(uint64_t ino) const;
  Status ReadDir(uint64_t offset,
                 const std::function<bool(std::string_view, const Attr&, uint64_t)>& emit) const;
  Result<ReadData> Read(uint64_t ino, uint64_t offset, size_t size) const;
  // NotFound when `ino` is not a symlink.
  Result<std::string> ReadLink(uint64_t ino) const;
  void Forget(uint64_t ino);

  // Targets of `hint`, `control` and of `.mmfs` as a symlink; empty: absent.
  void SetHintTarget(std::string target) { hint_target_ = std::move(target); }
  void SetControlTarget(std::string target) { control_target_ = std::move(target); }
  void SetLinkTarget(std::string target) { link_target_ = std::move(target); }
  bool has_hint() const { return !hint_target_.empty(); }

 private:
  uint64_t hint_ino() const { return dir_ino_ + 1; }
  uint64_t control_ino() const { return dir_ino_ + 2; }
  uint64_t link_ino() const { return dir_ino_ + 3; }
  bool IsSnapshot(uint64_t ino) const { return ino > link_ino(); }
  Attr DirAttr() const;
  Attr LinkAttr(uint64_t ino, const std::string& target) const;

  const uint64_t dir_ino_;
  const Render render_;
  std::string hint_target_, control_target_, link_target_;
  mutable std::mutex mu_;
  uint64_t next_snapshot_ = 0;                                        // guarded by mu_
  std::map<uint64_t, std::shared_ptr<const std::string>> snapshots_;  // by inode; guarded by mu_
};

}  // namespace mmfs::fs
