// mmfs view add / rm / ls: derived image views of a packed dataset (tools/view/view_builder.h).
// Progress on a TTY (images, images/s, ETA), plain lines otherwise, a summary at the end.

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "base/json_text.h"
#include "base/units.h"
#include "fs/format/dataset.h"
#include "fs/format/local_dataset.h"
#include "fs/format/view_set.h"
#include "fs/origin/printable.h"
#include "tools/mmfs/commands.h"
#include "tools/stage/interrupt.h"
#include "tools/view/view_builder.h"

namespace mmfs::cli {

namespace {

class ViewReporter final : public pack::PackReporter {
 public:
  explicit ViewReporter(bool quiet) : quiet_(quiet), tty_(::isatty(STDERR_FILENO) == 1) {}
  ~ViewReporter() override { ClearLine(); }

  void Warning(const std::string& message) override {
    ClearLine();
    std::fprintf(stderr, "warning: %s\n", origin::Printable(message).c_str());
  }
  void Phase(const std::string& message) override {
    if (quiet_) return;
    ClearLine();
    std::fprintf(stderr, "%s\n", origin::Printable(message).c_str());
  }
  void Progress(const pack::PackProgress& p) override {
    if (quiet_ || (p.finished && printed_done_)) return;
    printed_done_ = printed_done_ || p.finished;
    auto now = std::chrono::steady_clock::now();
    double since = std::chrono::duration<double>(now - last_).count();
    if (!p.finished && since < (tty_ ? 0.1 : 5.0)) return;
    last_ = now;
    double rate = p.elapsed_seconds > 0 ? static_cast<double>(p.files_done - first_done(p)) /
                                              p.elapsed_seconds
                                        : 0;
    double eta = rate > 0 ? static_cast<double>(p.files_total - p.files_done) / rate : 0;
    int pct = p.files_total > 0 ? static_cast<int>(100.0 * static_cast<double>(p.files_done) /
                                                   static_cast<double>(p.files_total))
                                : 100;
    if (!p.finished) pct = std::min(pct, 99);
    char line[256];
    std::snprintf(line, sizeof line, "%3d%% %s/%s images (%s of originals), %.0f images/s%s%s",
                  pct, FormatCount(p.files_done).c_str(), FormatCount(p.files_total).c_str(),
                  FormatBytes(p.bytes_done).c_str(), rate, p.finished ? "" : ", ETA ",
                  p.finished ? "" : FormatDuration(eta).c_str());
    if (tty_) {
      std::fprintf(stderr, "\r\033[K%s", line);
      open_ = true;
      if (p.finished) ClearLine();
    } else {
      std::fprintf(stderr, "%s\n", line);
    }
  }
  void ClearLine() {
    if (open_) std::fprintf(stderr, "\n");
    open_ = false;
  }

 private:
  // Images taken over by --resume are not counted in the rate.
  uint64_t first_done(const pack::PackProgress& p) {
    if (!have_first_) {
      first_ = p.files_done > 0 ? p.files_done - 1 : 0;
      have_first_ = true;
    }
    return std::min(first_, p.files_done);
  }
  bool quiet_;
  bool tty_;
  bool open_ = false;
  bool printed_done_ = false;
  bool have_first_ = false;
  uint64_t first_ = 0;
  std::chrono::steady_clock::time_point last_{};
};

uint64_t DatasetBytesOnDisk(const format::Manifest& m) {
  uint64_t n = m.index_size;
  for (const auto& s : m.shards) n += s.size;
  return n;
}

// A view of side N appears in the mount as the top-level folder "@N": a packed folder of that
// name would be hidden behind it without a word. The dataset is opened with its shards, as the
// build opens it: a damaged one is named before anything else.
Status CheckViewNameIsFree(const std::string& dataset, uint32_t side) {
  MMFS_ASSIGN_OR_RETURN(format::LocalDataset local, format::OpenLocalDataset(dataset));
  const std::unique_ptr<format::Dataset>& ds = local.dataset;
  MMFS_ASSIGN_OR_RETURN(format::Entry root, ds->GetEntry(0));
  std::string name = "@";  // appended: GCC 12 -O3 reports a false -Wrestrict for "@" + ...
  name += std::to_string(side);
  if (!ds->LookupChild(root, name).ok()) return Status::Ok();
  return Status::AlreadyExists(dataset + " has a top-level folder '" + name +
                               "' of its own, which the view of side " + std::to_string(side) +
                               " would hide in the mount (both are '" + name +
                               "'); choose another side, or rename the folder and pack again");
}

}  // namespace

int RunViewAdd(const ViewArgs& args) {
  if (Status free = CheckViewNameIsFree(args.dataset, args.side); !free.ok()) {
    PrintError(free.message());
    return 1;
  }
  view::ViewOptions options;
  options.dataset = args.dataset;
  options.side = args.side;
  options.quality = args.quality;
  options.jobs = args.jobs > 0 ? args.jobs
                               : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  options.resume = args.resume;
  if (args.on_bad == "fail") options.on_bad = pack::OnBadImage::kFail;
  if (args.on_bad == "skip") options.on_bad = pack::OnBadImage::kSkip;
  if (args.on_bad == "keep") options.on_bad = pack::OnBadImage::kKeep;
  auto shard_size = ParseSize(args.shard_size);
  if (!shard_size.ok()) {
    PrintError("--shard-size: " + shard_size.status().message());
    return 2;
  }
  options.shard_size = *shard_size;
  options.cancel = stage::CatchInterrupts();

  ViewReporter reporter(args.quiet || args.json);
  auto summary = view::BuildView(options, reporter);
  reporter.ClearLine();
  if (!summary.ok()) {
    PrintError(summary.status().message());
    return summary.status().code() == StatusCode::kCancelled ? 130 : 1;
  }
  const view::ViewSummary& s = *summary;
  double rate = s.seconds > 0 ? static_cast<double>(s.images - s.resumed) / s.seconds : 0;
  if (args.json) {
    nlohmann::json j = {{"dataset", args.dataset},
                        {"side", s.side},
                        {"images", s.images},
                        {"resized", s.resized},
                        {"unchanged_images", s.unchanged_images},
                        {"bad_images", s.bad_images},
                        {"omitted", s.omitted},
                        {"resumed", s.resumed},
                        {"source_bytes", s.source_bytes},
                        {"view_bytes", s.view_bytes},
                        {"view_bytes_on_disk", s.view_bytes_on_disk},
                        {"dataset_bytes_on_disk", s.dataset_bytes_on_disk},
                        {"shards", s.shards},
                        {"seconds", s.seconds},
                        {"images_per_second", rate}};
    std::printf("%s\n", JsonText(j, 2).c_str());
  } else if (!args.quiet) {
    std::printf("view %u of %s: %s of %s images resized (%s -> %s), %s served as they are\n",
                s.side, args.dataset.c_str(), FormatCount(s.resized).c_str(),
                FormatCount(s.images).c_str(), FormatBytes(s.source_bytes).c_str(),
                FormatBytes(s.view_bytes).c_str(), FormatCount(s.unchanged_images).c_str());
    std::printf("  %s on disk in %s shard%s, %s of the dataset's %s; %s (%.0f images/s)\n",
                FormatBytes(s.view_bytes_on_disk).c_str(), FormatCount(s.shards).c_str(),
                s.shards == 1 ? "" : "s",
                FormatPercent(s.view_bytes_on_disk, s.dataset_bytes_on_disk).c_str(),
                FormatBytes(s.dataset_bytes_on_disk).c_str(), FormatDuration(s.seconds).c_str(),
                rate);
    if (s.resumed > 0) {
      std::printf("  %s images taken over from the interrupted build\n",
                  FormatCount(s.resumed).c_str());
    }
    if (s.omitted > 0) {
      std::printf("  %s bad images left out of the view (--on-bad skip; see the warnings)\n",
                  FormatCount(s.omitted).c_str());
    } else if (s.bad_images > 0) {
      std::printf("  %s bad images served as the originals (--on-bad keep; see the warnings)\n",
                  FormatCount(s.bad_images).c_str());
    }
  }
  return 0;
}

int RunViewRm(const ViewArgs& args) {
  Status st = view::RemoveView(args.dataset, args.side);
  if (!st.ok()) {
    PrintError(st.message());
    return 1;
  }
  if (!args.quiet) std::printf("removed view %u of %s\n", args.side, args.dataset.c_str());
  return 0;
}

int RunViewLs(const ViewArgs& args) {
  // The dataset's and the views' shards are checked as a mount would open them.
  auto ds = format::OpenLocalDataset(args.dataset);
  if (!ds.ok()) {
    PrintError(ds.status().message());
    return 1;
  }
  format::ViewSet views = format::ViewSet::Open(*ds->dataset, *ds->origin);
  std::vector<view::PartialView> partials = view::ListPartials(args.dataset);
  const uint64_t base_bytes = DatasetBytesOnDisk(ds->dataset->manifest());
  if (args.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& v : views.views()) {
      const format::ViewManifest& m = v->manifest();
      list.push_back({{"side", m.side},
                      {"path", v->dir()},
                      {"resized", m.resized},
                      {"unchanged_images", m.unchanged_images},
                      {"bad_images", m.bad_images},
                      {"omitted", m.omitted},
                      {"bytes_on_disk", v->bytes_on_disk()},
                      {"share_of_dataset", base_bytes > 0 ? static_cast<double>(v->bytes_on_disk()) /
                                                                static_cast<double>(base_bytes)
                                                          : 0.0},
                      {"quality", m.quality},
                      {"created", m.created}});
    }
    nlohmann::json broken = nlohmann::json::array();
    for (const Status& s : views.problems()) broken.push_back(s.message());
    nlohmann::json partial = nlohmann::json::array();
    for (const auto& p : partials) {
      partial.push_back({{"side", p.side}, {"path", p.dir}, {"running", p.running},
                         {"finished_shards", p.finished_shards}});
    }
    nlohmann::json j = {{"dataset", args.dataset}, {"dataset_bytes_on_disk", base_bytes},
                        {"views", list}, {"unusable", broken}, {"unpublished", partial}};
    std::printf("%s\n", JsonText(j, 2).c_str());
    return views.problems().empty() ? 0 : 1;
  }
  if (views.views().empty() && views.problems().empty() && partials.empty()) {
    std::printf("%s has no views (add one: mmfs view add %s 256)\n", args.dataset.c_str(),
                args.dataset.c_str());
    return 0;
  }
  if (!views.views().empty()) {
    std::printf("%-6s %10s %10s %10s %8s %4s  %s\n", "side", "resized", "as-is", "on disk",
                "share", "Q", "created");
  }
  for (const auto& v : views.views()) {
    const format::ViewManifest& m = v->manifest();
    std::printf("%-6u %10s %10s %10s %8s %4u  %s\n", m.side, FormatCount(m.resized).c_str(),
                FormatCount(m.unchanged_images).c_str(), FormatBytes(v->bytes_on_disk()).c_str(),
                FormatPercent(v->bytes_on_disk(), base_bytes).c_str(), m.quality,
                origin::Printable(m.created).c_str());
  }
  for (const Status& s : views.problems()) {
    std::printf("UNUSABLE %s\n", origin::Printable(s.message()).c_str());
  }
  for (const auto& p : partials) {
    std::printf("%s build of view %u in %s (%s finished shards)%s\n",
                p.running ? "running" : "interrupted", p.side, p.dir.c_str(),
                FormatCount(p.finished_shards).c_str(),
                p.running ? "" : ": 'mmfs view add --resume' continues it");
  }
  return views.problems().empty() ? 0 : 1;
}

}  // namespace mmfs::cli
