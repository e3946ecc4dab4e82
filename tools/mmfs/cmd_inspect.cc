// mmfs verify and mmfs info: checking and describing a packed dataset without mounting it.

#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <chrono>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "base/file_util.h"
#include "base/json_text.h"
#include "base/units.h"
#include "fs/format/dataset.h"
#include "fs/format/local_dataset.h"
#include "fs/format/shard_reads.h"
#include "fs/format/view_set.h"
#include "fs/origin/printable.h"
#include "tools/mmfs/commands.h"
#include "tools/mmfs/remote_dataset.h"
#include "tools/view/view_verify.h"

namespace mmfs::cli {

namespace {

using origin::Printable;

// A progress line on a TTY, nothing otherwise (verify prints its findings as plain lines).
class Progress {
 public:
  Progress(uint64_t files, uint64_t bytes)
      : files_(files), bytes_(bytes), tty_(::isatty(STDERR_FILENO) == 1) {}
  void Update(uint64_t files_done, uint64_t bytes_done) {
    if (!tty_) return;
    auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::milliseconds(100) && bytes_done < bytes_) return;
    last_ = now;
    double secs = std::chrono::duration<double>(now - start_).count();
    double rate = secs > 0 ? static_cast<double>(bytes_done) / secs : 0;
    double eta = rate > 0 ? static_cast<double>(bytes_ - std::min(bytes_, bytes_done)) / rate : 0;
    std::fprintf(stderr, "\r\033[K%3d%% %s/%s files, %s/s, ETA %s",
                 static_cast<int>(100.0 * static_cast<double>(bytes_done) /
                                  static_cast<double>(std::max<uint64_t>(bytes_, 1))),
                 FormatCount(files_done).c_str(), FormatCount(files_).c_str(),
                 FormatBytes(static_cast<uint64_t>(rate)).c_str(), FormatDuration(eta).c_str());
    open_ = true;
  }
  ~Progress() {
    if (open_) std::fprintf(stderr, "\n");
  }

 private:
  uint64_t files_;
  uint64_t bytes_;
  bool tty_;
  bool open_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_{};
};

std::string ModeText(uint32_t mode) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%06o", mode);
  return buf;
}

std::string SpecialBitsText(uint32_t mode) {
  std::string bits;
  if ((mode & 04000) != 0) bits += "setuid";
  if ((mode & 02000) != 0) bits += std::string(bits.empty() ? "" : ", ") + "setgid";
  if ((mode & 01000) != 0) bits += std::string(bits.empty() ? "" : ", ") + "sticky";
  return bits + (bits.find(',') == std::string::npos ? " bit" : " bits");
}

// The dataset `args` name, or an error printed. --cache-dir here is only where a URL's manifest
// and index are copied: given for a local dataset, it is said not to apply rather than ignored.
Result<OpenedDataset> Open(const InspectArgs& args) {
  auto ds = OpenDatasetAt(args.dataset, args.remote);
  if (ds.ok() && !ds->remote && !args.remote.cache_dir.empty()) {
    return Status::InvalidArgument("--cache-dir does not apply: " + args.dataset +
                                   " is a local dataset (--cache-dir is where the manifest and "
                                   "index of a URL are copied)");
  }
  return ds;
}

}  // namespace

int RunVerify(const InspectArgs& args) {
  auto ds = Open(args);
  if (!ds.ok()) {
    PrintError(ds.status().message());
    return 1;
  }
  const format::Manifest& m = ds->dataset->manifest();
  std::vector<std::string> problems;
  // Whole-file checksums of the index and the shards, then every file's own checksum (so the
  // damaged paths can be named), on `jobs` threads. Findings are sorted, so the output does
  // not depend on the thread count. The shards are read through the origin, as the mount
  // reads them.
  auto index_sum = HashFile(ds->local_dir + "/" + m.index_file);
  if (!index_sum.ok() || *index_sum != m.index_checksum) {
    problems.push_back(m.index_file + ": checksum does not match the manifest");
  }
  const unsigned jobs = args.jobs > 0 ? static_cast<unsigned>(args.jobs)
                                      : std::max(1u, std::thread::hardware_concurrency());
  std::atomic<size_t> next_shard{0};
  std::atomic<uint64_t> next_entry{0}, files_done{0}, bytes_done{0}, damaged_count{0};
  std::mutex mu;
  std::vector<std::pair<uint64_t, std::string>> shard_problems, file_problems;  // guarded by mu
  const format::Dataset& dataset = *ds->dataset;
  origin::Origin& shards = *ds->origin;
  auto worker = [&] {
    for (size_t i = next_shard++; i < m.shards.size(); i = next_shard++) {
      const format::ShardInfo& shard = m.shards[i];
      auto sum = format::HashShard(shards, {origin::kDatasetTree, static_cast<uint32_t>(i)});
      std::string why = !sum.ok() ? sum.status().message()
                        : *sum != shard.checksum ? "checksum does not match the manifest (damaged)"
                                                 : "";
      bytes_done += shard.size;
      if (!why.empty()) {
        std::lock_guard<std::mutex> lock(mu);
        shard_problems.emplace_back(i, shard.file + ": " + why);
      }
    }
    constexpr uint64_t kBatch = 256;
    for (uint64_t first = next_entry.fetch_add(kBatch); first < dataset.entry_count();
         first = next_entry.fetch_add(kBatch)) {
      for (uint64_t i = first; i < std::min(first + kBatch, dataset.entry_count()); ++i) {
        auto e = dataset.GetEntry(i);
        std::string why;
        if (!e.ok()) {
          why = (i > 0 ? dataset.PathOf(i) + ": " : "") + e.status().message();
        } else if ((e->record.mode & 07000) != 0) {
          // mmfs pack never writes these; an index that holds them was edited to ask a mount
          // for them (a setuid root program, on a mount with suid).
          why = (i > 0 ? dataset.PathOf(i) : std::string("the root directory")) + ": mode " +
                ModeText(e->record.mode) + " has " + SpecialBitsText(e->record.mode) +
                ", which mmfs pack never writes (the index was edited)";
        } else if (e->is_regular()) {
          auto read = format::ReadVerified(shards, dataset, *e);
          if (!read.ok()) why = dataset.PathOf(i) + ": " + read.status().message();
          ++files_done;
          bytes_done += e->size();
        }
        if (!why.empty()) {
          ++damaged_count;
          std::lock_guard<std::mutex> lock(mu);
          file_problems.emplace_back(i, why);
        }
      }
    }
  };
  {
    // Shards are read twice (whole-file sum, then per file): progress counts both passes.
    uint64_t total_bytes = m.total_bytes;
    for (const auto& sh : m.shards) total_bytes += sh.size;
    Progress progress(m.files, total_bytes);
    std::vector<std::thread> threads;
    std::condition_variable done_cv;
    unsigned running = jobs;  // guarded by mu
    for (unsigned t = 0; t < jobs; ++t) {
      threads.emplace_back([&] {
        worker();
        std::lock_guard<std::mutex> lock(mu);
        if (--running == 0) done_cv.notify_all();
      });
    }
    {
      // Redraw the progress line every 100 ms until the workers are done.
      std::unique_lock<std::mutex> lock(mu);
      while (!done_cv.wait_for(lock, std::chrono::milliseconds(100), [&] { return running == 0; })) {
        lock.unlock();
        progress.Update(files_done.load(), bytes_done.load());
        lock.lock();
      }
    }
    for (auto& t : threads) t.join();
    progress.Update(files_done.load(), bytes_done.load());
  }
  std::sort(shard_problems.begin(), shard_problems.end());
  std::sort(file_problems.begin(), file_problems.end());
  for (auto& [i, p] : shard_problems) problems.push_back(std::move(p));
  for (auto& [i, p] : file_problems) problems.push_back(std::move(p));
  // Views (DST/views/N): their own index, shards and every resized image.
  format::ViewSet views = format::ViewSet::Open(dataset, shards);
  view::ViewVerifyResult view_result = view::VerifyViews(dataset, views, shards);
  for (std::string& p : view_result.problems) problems.push_back(std::move(p));
  uint64_t files = files_done.load(), bytes = m.total_bytes,
           damaged = damaged_count.load() + view_result.damaged_files;
  if (args.json) {
    nlohmann::json j = {{"dataset", args.dataset}, {"files_checked", files},
                        {"bytes_checked", bytes},  {"damaged_files", damaged},
                        {"problems", problems},    {"ok", problems.empty()},
                        {"views_checked", views.views().size()},
                        {"view_files_checked", view_result.files_checked},
                        {"view_bytes_checked", view_result.bytes_checked}};
    std::printf("%s\n", JsonText(j, 2).c_str());
  } else {
    for (const std::string& p : problems) std::printf("DAMAGED %s\n", Printable(p).c_str());
    std::printf("%s: %s files (%s) checked, %s damaged, %zu shard(s) %s\n",
                Printable(args.dataset).c_str(),
                FormatCount(files).c_str(), FormatBytes(bytes).c_str(),
                FormatCount(damaged).c_str(), m.shards.size(),
                problems.empty() ? "intact" : "with problems (see above)");
    if (!views.views().empty() || !views.problems().empty()) {
      std::printf("  views: %zu checked (%s resized images, %s), %zu unusable\n",
                  views.views().size(), FormatCount(view_result.files_checked).c_str(),
                  FormatBytes(view_result.bytes_checked).c_str(), views.problems().size());
    }
  }
  return problems.empty() ? 0 : 1;
}

int RunInfo(const InspectArgs& args) {
  // The shards are opened (and checked) too: a dataset whose shard is missing or replaced is
  // not described as if it were whole.
  auto local = Open(args);
  if (!local.ok()) {
    PrintError(local.status().message());
    return 1;
  }
  const format::Dataset& dataset = *local->dataset;
  const format::Manifest& m = dataset.manifest();
  // Samples per directory and image sizes, from the index alone (no data is read).
  std::map<std::string, uint64_t> per_dir;
  std::map<std::string, uint64_t> sizes;  // "<=256 px", ...
  uint64_t images = 0;
  for (uint64_t i = 0; i < dataset.entry_count(); ++i) {
    auto e = dataset.GetEntry(i);
    if (!e.ok() || !e->is_regular()) continue;
    if (e->record.width > 0) {
      ++images;
      uint32_t side = std::max(e->record.width, e->record.height);
      const char* bucket = side <= 256 ? "<= 256 px" : side <= 512 ? "257-512 px"
                           : side <= 1024 ? "513-1024 px" : "> 1024 px";
      sizes[bucket]++;
      per_dir[dataset.PathOf(e->record.parent)]++;
    }
  }
  std::vector<std::pair<std::string, uint64_t>> top(per_dir.begin(), per_dir.end());
  std::sort(top.begin(), top.end(), [](auto& a, auto& b) { return a.second > b.second; });
  if (top.size() > 10) top.resize(10);
  uint64_t on_disk = m.index_size;
  for (const auto& s : m.shards) on_disk += s.size;
  format::ViewSet views = format::ViewSet::Open(dataset, *local->origin);
  nlohmann::json view_list = nlohmann::json::array();
  for (const auto& v : views.views()) {
    view_list.push_back({{"side", v->side()},
                         {"resized", v->manifest().resized},
                         {"bytes_on_disk", v->bytes_on_disk()},
                         {"quality", v->manifest().quality}});
  }
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
                        {"images", images}, {"image_sizes", sizes}, {"top_directories", top},
                        {"views", view_list}};
    std::printf("%s\n", JsonText(j, 2).c_str());
    return 0;
  }
  std::printf("%s: mmfs dataset, format version %u, packed %s by %s\n",
              Printable(args.dataset).c_str(), m.version, Printable(m.created).c_str(),
              Printable(m.tool).c_str());
  std::printf("  %s samples, %s files, %s directories, %s symlinks, %s skipped while packing\n",
              FormatCount(m.samples).c_str(), FormatCount(m.files).c_str(),
              FormatCount(m.directories).c_str(), FormatCount(m.symlinks).c_str(),
              FormatCount(m.skipped).c_str());
  std::printf("  %s of files, %s on disk in %zu shard(s) (target %s each)\n",
              FormatBytes(m.total_bytes).c_str(), FormatBytes(on_disk).c_str(), m.shards.size(),
              FormatBytes(m.shard_size).c_str());
  for (const auto& s : m.shards) {
    std::printf("    %s  %10s  %s samples\n", Printable(s.file).c_str(), FormatBytes(s.size).c_str(),
                FormatCount(s.samples).c_str());
  }
  std::printf("  source: %s", Printable(m.source_layout).c_str());
  for (const auto& p : m.source_paths) std::printf(" %s", Printable(p).c_str());
  std::printf(" (--on-bad %s)\n", Printable(m.on_bad).c_str());
  std::string by_side;
  for (const auto& [bucket, n] : sizes) {
    by_side += (by_side.empty() ? "" : ", ") + std::string(bucket) + ": " + FormatCount(n);
  }
  std::printf("  images: %s (longest side %s)\n", FormatCount(images).c_str(), by_side.c_str());
  if (views.views().empty()) {
    std::printf("  views: none (mmfs view add %s 256 makes one)\n", Printable(args.dataset).c_str());
  }
  for (const auto& v : views.views()) {
    std::printf("  view @%u: %s images resized, %s on disk (%.1f%% of the dataset), quality %u\n",
                v->side(), FormatCount(v->manifest().resized).c_str(),
                FormatBytes(v->bytes_on_disk()).c_str(),
                on_disk > 0 ? 100.0 * static_cast<double>(v->bytes_on_disk()) /
                                  static_cast<double>(on_disk)
                            : 0.0,
                v->manifest().quality);
  }
  for (const Status& p : views.problems()) {
    std::printf("  view UNUSABLE: %s\n", Printable(p.message()).c_str());
  }
  std::printf("  largest directories by images:\n");
  for (const auto& [dir, n] : top) {
    std::printf("    %10s  %s\n", FormatCount(n).c_str(), Printable(dir).c_str());
  }
  return 0;
}

}  // namespace mmfs::cli
