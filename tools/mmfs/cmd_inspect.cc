// mmfs verify and mmfs info: checking and describing a packed dataset without mounting it.

#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fs/base/file_util.h"
#include "fs/base/units.h"
#include "fs/format/dataset.h"
#include "tools/mmfs/commands.h"

namespace mmfs::cli {

namespace {

// A progress line on a TTY, nothing otherwise (verify prints its findings as plain lines).
class Progress {
 public:
  explicit Progress(uint64_t total) : total_(total), tty_(::isatty(STDERR_FILENO) == 1) {}
  void Update(uint64_t done, uint64_t bytes) {
    if (!tty_) return;
    auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::milliseconds(100) && done != total_) return;
    last_ = now;
    double secs = std::chrono::duration<double>(now - start_).count();
    std::fprintf(stderr, "\r\033[K%3d%% %s/%s files, %s/s", static_cast<int>(100.0 * done / std::max<uint64_t>(total_, 1)),
                 FormatCount(done).c_str(), FormatCount(total_).c_str(),
                 FormatBytes(static_cast<uint64_t>(secs > 0 ? bytes / secs : 0)).c_str());
    open_ = true;
  }
  ~Progress() {
    if (open_) std::fprintf(stderr, "\n");
  }

 private:
  uint64_t total_;
  bool tty_;
  bool open_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace

int RunVerify(const InspectArgs& args) {
  auto ds = format::Dataset::Open(args.dataset);
  if (!ds.ok()) {
    PrintError(ds.status().message());
    return 1;
  }
  const format::Manifest& m = (*ds)->manifest();
  std::vector<std::string> problems;
  // Whole-file checksums of the index and the shards.
  auto index_sum = HashFile(args.dataset + "/" + m.index_file);
  if (!index_sum.ok() || *index_sum != m.index_checksum) {
    problems.push_back(m.index_file + ": checksum does not match the manifest");
  }
  for (const format::ShardInfo& shard : m.shards) {
    auto sum = HashFile(args.dataset + "/" + shard.file);
    if (!sum.ok()) {
      problems.push_back(shard.file + ": " + sum.status().message());
    } else if (*sum != shard.checksum) {
      problems.push_back(shard.file + ": checksum does not match the manifest (damaged)");
    }
  }
  // Every file's own checksum, so the damaged paths can be named.
  uint64_t files = 0, bytes = 0, damaged = 0;
  {
    Progress progress(m.files);
    std::string buf;
    for (uint64_t i = 0; i < (*ds)->entry_count(); ++i) {
      auto e = (*ds)->GetEntry(i);
      if (!e.ok()) {
        problems.push_back(e.status().message());
        ++damaged;
        continue;
      }
      if (!e->is_regular()) continue;
      buf.resize(e->size());
      Status s = (*ds)->ReadVerified(*e, buf.data());
      if (!s.ok()) {
        problems.push_back((*ds)->PathOf(i) + ": " + s.message());
        ++damaged;
      }
      ++files;
      bytes += e->size();
      progress.Update(files, bytes);
    }
  }
  if (args.json) {
    nlohmann::json j = {{"dataset", args.dataset}, {"files_checked", files},
                        {"bytes_checked", bytes},  {"damaged_files", damaged},
                        {"problems", problems},    {"ok", problems.empty()}};
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    for (const std::string& p : problems) std::printf("DAMAGED %s\n", p.c_str());
    std::printf("%s: %s files (%s) checked, %s damaged, %zu shard(s) %s\n", args.dataset.c_str(),
                FormatCount(files).c_str(), FormatBytes(bytes).c_str(),
                FormatCount(damaged).c_str(), m.shards.size(),
                problems.empty() ? "intact" : "with problems (see above)");
  }
  return problems.empty() ? 0 : 1;
}

int RunInfo(const InspectArgs& args) {
  auto ds = format::Dataset::Open(args.dataset);
  if (!ds.ok()) {
    PrintError(ds.status().message());
    return 1;
  }
  const format::Manifest& m = (*ds)->manifest();
  // Samples per directory and image sizes, from the index alone (no data is read).
  std::map<std::string, uint64_t> per_dir;
  std::map<std::string, uint64_t> sizes;  // "<=256 px", ...
  uint64_t images = 0;
  for (uint64_t i = 0; i < (*ds)->entry_count(); ++i) {
    auto e = (*ds)->GetEntry(i);
    if (!e.ok() || !e->is_regular()) continue;
    if (e->record.width > 0) {
      ++images;
      uint32_t side = std::max(e->record.width, e->record.height);
      const char* bucket = side <= 256 ? "<= 256 px" : side <= 512 ? "257-512 px"
                           : side <= 1024 ? "513-1024 px" : "> 1024 px";
      sizes[bucket]++;
      per_dir[(*ds)->PathOf(e->record.parent)]++;
    }
  }
  std::vector<std::pair<std::string, uint64_t>> top(per_dir.begin(), per_dir.end());
  std::sort(top.begin(), top.end(), [](auto& a, auto& b) { return a.second > b.second; });
  if (top.size() > 10) top.resize(10);
  uint64_t on_disk = m.index_size;
  for (const auto& s : m.shards) on_disk += s.size;
  if (args.json) {
    nlohmann::json shards = nlohmann::json::array();
    for (const auto& s : m.shards) {
      shards.push_back({{"file", s.file}, {"size", s.size}, {"samples", s.samples}});
    }
    nlohmann::json j = {{"dataset", args.dataset}, {"version", m.version}, {"created", m.created},
                        {"tool", m.tool}, {"files", m.files}, {"directories", m.directories},
                        {"symlinks", m.symlinks}, {"samples", m.samples}, {"bytes", m.total_bytes},
                        {"bytes_on_disk", on_disk}, {"skipped", m.skipped}, {"shards", shards},
                        {"source", {{"layout", m.source_layout}, {"paths", m.source_paths}}},
                        {"pack_options", {{"shard_size", m.shard_size}, {"on_bad", m.on_bad}}},
                        {"images", images}, {"image_sizes", sizes}, {"top_directories", top}};
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  std::printf("%s: mmfs dataset, format version %u, packed %s by %s\n", args.dataset.c_str(),
              m.version, m.created.c_str(), m.tool.c_str());
  std::printf("  %s samples, %s files, %s directories, %s symlinks, %s skipped while packing\n",
              FormatCount(m.samples).c_str(), FormatCount(m.files).c_str(),
              FormatCount(m.directories).c_str(), FormatCount(m.symlinks).c_str(),
              FormatCount(m.skipped).c_str());
  std::printf("  %s of files, %s on disk in %zu shard(s) (target %s each)\n",
              FormatBytes(m.total_bytes).c_str(), FormatBytes(on_disk).c_str(), m.shards.size(),
              FormatBytes(m.shard_size).c_str());
  for (const auto& s : m.shards) {
    std::printf("    %s  %10s  %s samples\n", s.file.c_str(), FormatBytes(s.size).c_str(),
                FormatCount(s.samples).c_str());
  }
  std::printf("  source: %s", m.source_layout.c_str());
  for (const auto& p : m.source_paths) std::printf(" %s", p.c_str());
  std::printf(" (--on-bad %s)\n", m.on_bad.c_str());
  std::string by_side;
  for (const auto& [bucket, n] : sizes) {
    by_side += (by_side.empty() ? "" : ", ") + std::string(bucket) + ": " + FormatCount(n);
  }
  std::printf("  images: %s (longest side %s)\n", FormatCount(images).c_str(), by_side.c_str());
  std::printf("  largest directories by images:\n");
  for (const auto& [dir, n] : top) std::printf("    %10s  %s\n", FormatCount(n).c_str(), dir.c_str());
  return 0;
}

}  // namespace mmfs::cli
