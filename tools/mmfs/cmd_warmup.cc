// mmfs warmup: load files into a cache tier before training, see what is resident (--check),
// or drop files from the caches (--evict).
//
// The daemon does the work: this command writes lines of the control protocol
// (fs/names/control_protocol.h: "warm ssd PATH", "evict PATH", then "sync TOKEN") to
// MNT/.mmfs/control and follows the daemon's counters in MNT/.mmfs/stats (stats_client.h) for
// progress, so the loading is in pack order with large sequential origin reads, straight into
// the chosen tier, and works while training reads the mount. Residency comes from the
// user.mmfs.resident attribute of each file.

#include <fcntl.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "base/file_util.h"
#include "base/json_text.h"
#include "base/units.h"
#include "fs/names/control_protocol.h"
#include "tools/mmfs/commands.h"
#include "tools/mmfs/stats_client.h"

namespace mmfs::cli {

namespace {

namespace fsys = std::filesystem;
using Clock = std::chrono::steady_clock;

// What the warm-up has settled so far: loaded, already cached, not admitted or failed.
uint64_t Settled(const fs::WarmupStats& w) {
  return w.done + w.skipped + w.rejected + w.not_stored + w.errors;
}

// PATH as given (absolute or relative to the current directory) made relative to the mount.
Result<std::string> InsideMount(const std::string& mnt, const std::string& path) {
  std::error_code ec;
  fsys::path abs = fsys::absolute(path, ec).lexically_normal();
  std::string rel = abs.lexically_relative(fsys::path(mnt)).string();
  if (rel.empty() || rel == ".") return std::string();
  if (rel.rfind("..", 0) == 0) return Status::InvalidArgument(path + " is not inside " + mnt);
  return rel;
}

struct Residency {
  uint64_t files = 0, bytes = 0, ram_files = 0, ram_bytes = 0, ssd_files = 0, ssd_bytes = 0;
};

Residency Check(const std::string& dir_or_file) {
  Residency r;
  auto note = [&](const fsys::path& p) {
    std::error_code ec;
    uint64_t size = fsys::file_size(p, ec);
    char value[32] = {};
    ssize_t n = ::getxattr(p.c_str(), "user.mmfs.resident", value, sizeof value - 1);
    std::string v = n > 0 ? std::string(value, static_cast<size_t>(n)) : "";
    ++r.files;
    r.bytes += size;
    if (v.find("ram") != std::string::npos) {
      ++r.ram_files;
      r.ram_bytes += size;
    }
    if (v.find("ssd") != std::string::npos) {
      ++r.ssd_files;
      r.ssd_bytes += size;
    }
  };
  std::error_code ec;
  if (fsys::is_regular_file(dir_or_file, ec)) {
    note(dir_or_file);
    return r;
  }
  for (auto it = fsys::recursive_directory_iterator(dir_or_file, ec);
       !ec && it != fsys::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file(ec)) note(it->path());
  }
  return r;
}

// Drops the kernel's cached pages of every file at PATH, so the next read reaches the daemon.
void DropPageCache(const std::string& path) {
  auto drop = [](const fsys::path& p) {
    int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  };
  std::error_code ec;
  if (fsys::is_regular_file(path, ec)) return drop(path);
  for (auto it = fsys::recursive_directory_iterator(path, ec);
       !ec && it != fsys::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file(ec)) drop(it->path());
  }
}

}  // namespace

int RunWarmup(const WarmupArgs& in) {
  WarmupArgs args = in;
  std::error_code ec;
  std::string mnt = fsys::absolute(args.mountpoint, ec).lexically_normal().string();
  while (mnt.size() > 1 && mnt.back() == '/') mnt.pop_back();
  auto before_snapshot = ReadStatsSnapshot(mnt);
  if (!before_snapshot.ok()) {
    PrintError(before_snapshot.status().message());
    return 1;
  }
  const fs::WarmupStats before = before_snapshot->warmup;
  if (args.paths.empty()) args.paths.push_back(mnt);
  std::vector<std::string> rels;
  for (const std::string& p : args.paths) {
    auto rel = InsideMount(mnt, p);
    if (!rel.ok()) {
      PrintError(rel.status().message());
      return 2;
    }
    if (!fsys::exists(mnt + "/" + *rel, ec)) {
      PrintError(p + ": no such file or folder in the mount");
      return 1;
    }
    rels.push_back(*rel);
  }

  if (args.check) {
    nlohmann::json out = nlohmann::json::array();
    if (!args.json) {
      std::printf("%-32s %10s %10s %16s %16s\n", "path", "files", "size", "in RAM", "on SSD");
    }
    for (const std::string& rel : rels) {
      Residency r = Check(rel.empty() ? mnt : mnt + "/" + rel);
      std::string name = rel.empty() ? "." : rel;
      if (args.json) {
        out.push_back({{"path", name},
                       {"files", r.files},
                       {"bytes", r.bytes},
                       {"ram_files", r.ram_files},
                       {"ram_bytes", r.ram_bytes},
                       {"ssd_files", r.ssd_files},
                       {"ssd_bytes", r.ssd_bytes}});
      } else {
        std::printf("%-32s %10s %10s %9s (%4s) %9s (%4s)\n", name.c_str(),
                    FormatCount(r.files).c_str(), FormatBytes(r.bytes).c_str(),
                    FormatBytes(r.ram_bytes).c_str(), FormatPercent(r.ram_bytes, r.bytes).c_str(),
                    FormatBytes(r.ssd_bytes).c_str(), FormatPercent(r.ssd_bytes, r.bytes).c_str());
      }
    }
    if (args.json) std::printf("%s\n", JsonText(out, 2).c_str());
    return 0;
  }

  // Commands, then a sync token the daemon shows once it has handled them.
  std::string token = std::to_string(::getpid()) + "-" + std::to_string(std::random_device()());
  std::string text;
  for (const std::string& rel : rels) {
    text += args.evict
                ? fs::FormatControlLine({fs::ControlCommand::Kind::kEvict, "", rel})
                : fs::FormatControlLine({fs::ControlCommand::Kind::kWarm, args.tier, rel});
  }
  text += fs::FormatControlLine({fs::ControlCommand::Kind::kSync, "", token});
  {
    std::string control = mnt + "/.mmfs/control";
    auto fd = OpenFile(control, O_WRONLY | O_CLOEXEC);
    if (!fd.ok() || !WriteFull(fd->get(), text.data(), text.size(), control).ok()) {
      PrintError("cannot write " + control + " (mounted by another user, or an older mmfs?)");
      return 1;
    }
  }
  const bool tty = ::isatty(STDERR_FILENO) == 1;
  auto start = Clock::now();
  fs::WarmupStats w;
  for (;;) {
    auto s = ReadStatsSnapshot(mnt);
    if (!s.ok()) {
      PrintError("the mount stopped answering: " + s.status().message());
      return 1;
    }
    w = s->warmup;
    bool synced = w.last_sync == token;
    uint64_t requested = w.requested - before.requested;
    uint64_t settled = Settled(w) - Settled(before);
    uint64_t bytes = w.bytes - before.bytes;
    double secs = std::chrono::duration<double>(Clock::now() - start).count();
    bool done = synced && (args.evict || settled >= requested);
    if (tty && !args.evict && !args.json) {
      double rate = secs > 0 ? static_cast<double>(bytes) / secs : 0;
      double per_file = settled > 0 ? secs / static_cast<double>(settled) : 0;
      std::fprintf(stderr, "\r\033[K%s/%s files, %s, %s/s, ETA %s", FormatCount(settled).c_str(),
                   FormatCount(requested).c_str(), FormatBytes(bytes).c_str(),
                   FormatBytes(static_cast<uint64_t>(rate)).c_str(),
                   FormatDuration(per_file * static_cast<double>(requested - std::min(requested, settled))).c_str());
    }
    if (done) break;
    if (args.timeout_seconds > 0 && secs > args.timeout_seconds) {
      if (tty) std::fprintf(stderr, "\n");
      PrintError("gave up waiting after " + FormatDuration(secs));
      return 1;
    }
    // A progress tick while the daemon works; the stats file is the only channel back.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (tty && !args.evict && !args.json) std::fprintf(stderr, "\n");
  double secs = std::chrono::duration<double>(Clock::now() - start).count();
  if (args.evict) {
    for (const std::string& rel : rels) DropPageCache(rel.empty() ? mnt : mnt + "/" + rel);
    uint64_t evicted = w.evicted - before.evicted;
    if (args.json) {
      std::printf("%s\n", JsonText({{"evicted_files", evicted}}, 2).c_str());
    } else {
      std::printf("evicted %s files from the RAM and SSD tiers (and the page cache)\n",
                  FormatCount(evicted).c_str());
    }
    return 0;
  }
  uint64_t done = w.done - before.done;
  uint64_t skipped = w.skipped - before.skipped;
  uint64_t rejected = w.rejected - before.rejected;
  uint64_t not_stored = w.not_stored - before.not_stored;
  uint64_t errors = w.errors - before.errors;
  uint64_t bytes = w.bytes - before.bytes;
  if (args.json) {
    std::printf("%s\n", JsonText({{"tier", args.tier},
                                  {"loaded_files", done},
                                  {"loaded_bytes", bytes},
                                  {"already_cached", skipped},
                                  {"not_admitted", rejected},
                                  {"not_stored", not_stored},
                                  {"not_stored_reason", not_stored > 0 ? w.problem : ""},
                                  {"errors", errors},
                                  {"seconds", secs}},
                                 2)
                            .c_str());
  } else {
    std::printf("warmed %s files (%s) into the %s tier in %s (%s/s); %s already there",
                FormatCount(done).c_str(), FormatBytes(bytes).c_str(), args.tier.c_str(),
                FormatDuration(secs).c_str(),
                FormatBytes(static_cast<uint64_t>(secs > 0 ? bytes / secs : 0)).c_str(),
                FormatCount(skipped).c_str());
    if (rejected > 0) std::printf(", %s did not fit (tier full)", FormatCount(rejected).c_str());
    if (not_stored > 0) {
      std::printf(", %s could not be stored: %s", FormatCount(not_stored).c_str(),
                  w.problem.c_str());
    }
    if (errors > 0) std::printf(", %s could not be read (see the daemon's log)", FormatCount(errors).c_str());
    std::printf("\n");
  }
  // Not stored is a failure of the disk or directory, not a full budget: a script must see it.
  return errors > 0 || not_stored > 0 ? 1 : 0;
}

}  // namespace mmfs::cli
