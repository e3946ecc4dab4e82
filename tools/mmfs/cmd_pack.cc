// mmfs pack: progress on a TTY, plain lines otherwise, a summary at the end.

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <algorithm>

#include "base/json_text.h"
#include "base/units.h"
#include "fs/origin/printable.h"
#include "fs/origin/s3_location.h"
#include "tools/mmfs/commands.h"
#include "tools/pack/packer.h"
#include "tools/stage/interrupt.h"

namespace mmfs::cli {

namespace {

class ConsoleReporter final : public pack::PackReporter {
 public:
  explicit ConsoleReporter(bool quiet)
      : quiet_(quiet),
        tty_(::isatty(STDERR_FILENO) == 1),
        last_(std::chrono::steady_clock::now()) {}

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
    if (quiet_) return;
    auto now = std::chrono::steady_clock::now();
    // 100% is the packer's word that everything is written, said once (the byte counts alone
    // reached the total early for a .tar.gz and printed "100%" a dozen times).
    bool done = p.finished;
    if (done && printed_done_) return;
    printed_done_ = printed_done_ || done;
    double since = std::chrono::duration<double>(now - last_).count();
    if (tty_) {
      if (since < 0.1 && !done) return;
    } else if (since < 5.0 && !done) {
      return;  // plain lines: one every 5 s
    }
    last_ = now;
    double frac = done                ? 1.0
                  : p.bytes_total > 0 ? std::min(0.99, static_cast<double>(p.bytes_done) /
                                                           static_cast<double>(p.bytes_total))
                                      : 0.0;
    double rate = p.elapsed_seconds > 0 ? static_cast<double>(p.bytes_done) / p.elapsed_seconds : 0;
    double eta = rate > 0 && p.bytes_total > p.bytes_done
                     ? static_cast<double>(p.bytes_total - p.bytes_done) / rate
                     : 0;
    std::string line = FormatCount(p.files_done) + " files, " +
                       FormatBytes(p.bytes_done) + "/" + FormatBytes(p.bytes_total) + ", " +
                       FormatBytes(static_cast<uint64_t>(rate)) + "/s";
    if (p.bytes_uploaded > 0) line += ", uploaded " + FormatBytes(p.bytes_uploaded);
    if (!done) line += ", ETA " + FormatDuration(eta);
    if (tty_) {
      constexpr int kWidth = 24;
      int filled = static_cast<int>(frac * kWidth);
      std::string bar(static_cast<size_t>(filled), '#');
      bar.resize(kWidth, '.');
      std::fprintf(stderr, "\r\033[K[%s] %3d%% %s", bar.c_str(), static_cast<int>(frac * 100),
                   line.c_str());
      line_open_ = true;
      if (done) ClearLine();
    } else {
      std::fprintf(stderr, "%3d%% %s\n", static_cast<int>(frac * 100), line.c_str());
    }
  }
  void ClearLine() {
    if (line_open_) std::fprintf(stderr, "\n");
    line_open_ = false;
  }

 private:
  bool quiet_;
  bool tty_;
  bool line_open_ = false;
  bool printed_done_ = false;
  std::chrono::steady_clock::time_point last_;  // of the last progress output
};

}  // namespace

// Escaped (origin::Printable): messages name what a dataset or its source holds (paths,
// shards, tar members), and such a name must not drive the user's terminal.
void PrintError(const std::string& message) {
  std::fprintf(stderr, "mmfs: error: %s\n", origin::Printable(message).c_str());
}

int RunPack(const PackArgs& args) {
  pack::PackOptions options;
  const std::string destination = args.paths.back();
  options.sources.assign(args.paths.begin(), args.paths.end() - 1);
  options.destination = destination;
  options.format = args.from == "folder"       ? pack::SourceFormat::kFolder
                   : args.from == "webdataset" ? pack::SourceFormat::kWebDataset
                   : args.from == "hf"         ? pack::SourceFormat::kHfImageFolder
                                               : pack::SourceFormat::kAuto;
  if (!args.caption_fields.empty()) options.caption_fields = args.caption_fields;
  options.coco_annotations = args.coco_annotations;
  options.remote.endpoint = args.endpoint;
  options.remote.ca_file = args.ca_file;
  options.staging_dir = args.staging_dir;
  options.resume = args.resume;
  options.jobs = args.jobs > 0 ? args.jobs
                               : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  options.force = args.force;
  auto shard_size = ParseSize(args.shard_size);
  if (!shard_size.ok()) {
    PrintError("--shard-size: " + shard_size.status().message());
    return 2;
  }
  options.shard_size = *shard_size;
  options.on_bad = args.on_bad == "skip"   ? pack::OnBadImage::kSkip
                   : args.on_bad == "keep" ? pack::OnBadImage::kKeep
                                           : pack::OnBadImage::kFail;
  options.cancel = stage::CatchInterrupts();

  if (!args.views.empty() && origin::IsS3Url(destination)) {
    // A view is built from the dataset's files on this machine.
    PrintError("--view builds a view of a local dataset; for " + destination +
               ", pack to a local directory with --view, or build the view there and upload it");
    return 2;
  }
  ConsoleReporter reporter(args.quiet);
  auto summary = pack::Pack(options, reporter);
  reporter.ClearLine();
  if (!summary.ok()) {
    if (summary.status().code() == StatusCode::kCancelled) {
      PrintError(summary.status().message().find("--resume") != std::string::npos
                     ? summary.status().message()
                     : "interrupted; nothing was written to " + destination);
      return 130;
    }
    PrintError(summary.status().message());
    return 1;
  }
  const pack::PackSummary& s = *summary;
  double rate = s.seconds > 0 ? static_cast<double>(s.bytes) / s.seconds : 0;
  if (args.json) {
    nlohmann::json j = {{"destination", destination},
                        {"samples", s.samples},
                        {"files", s.files},
                        {"directories", s.directories},
                        {"symlinks", s.symlinks},
                        {"bytes", s.bytes},
                        {"skipped", s.skipped},
                        {"bad_images", s.bad_images},
                        {"samples_with_bad_image", s.samples_with_bad_image},
                        {"samples_without_image", s.samples_without_image},
                        {"captions_added", s.captions_added},
                        {"captions_without_image", s.captions_without_image},
                        {"shards", s.shards},
                        {"dataset_bytes", s.dataset_bytes},
                        {"bytes_uploaded", s.bytes_uploaded},
                        {"seconds", s.seconds},
                        {"bytes_per_second", rate}};
    std::printf("%s\n", JsonText(j, 2).c_str());
  } else if (!args.quiet) {
    std::printf("packed %s samples (%s files, %s) into %s\n", FormatCount(s.samples).c_str(),
                FormatCount(s.files).c_str(), FormatBytes(s.bytes).c_str(),
                destination.c_str());
    std::printf("  %s shard%s, %s %s, %s directories, %s (%s/s)%s\n", FormatCount(s.shards).c_str(),
                s.shards == 1 ? "" : "s", FormatBytes(s.dataset_bytes).c_str(),
                origin::IsS3Url(destination) ? "in the bucket" : "on disk",
                FormatCount(s.directories).c_str(), FormatDuration(s.seconds).c_str(),
                FormatBytes(static_cast<uint64_t>(rate)).c_str(),
                s.skipped > 0 ? (", " + FormatCount(s.skipped) + " inputs skipped").c_str() : "");
    if (s.bytes_uploaded > 0) {
      std::printf("  %s uploaded; mount it with: mmfs mount %s MNT\n",
                  FormatBytes(s.bytes_uploaded).c_str(), destination.c_str());
    }
    if (s.samples_with_bad_image > 0) {
      std::printf("  %s samples left out whole for a bad image (--on-bad skip; see the warnings)\n",
                  FormatCount(s.samples_with_bad_image).c_str());
    } else if (s.bad_images > 0) {
      std::printf("  %s bad images kept (--on-bad keep; see the warnings)\n",
                  FormatCount(s.bad_images).c_str());
    }
    if (s.samples_without_image > 0) {
      std::printf("  %s samples without an image left out (failed downloads)\n",
                  FormatCount(s.samples_without_image).c_str());
    }
    if (s.captions_added > 0) {
      std::printf("  %s caption files made from metadata\n", FormatCount(s.captions_added).c_str());
    }
    if (s.captions_without_image > 0) {
      std::printf("  %s metadata captions left out: their image is not in the source\n",
                  FormatCount(s.captions_without_image).c_str());
    }
  }
  // --view N: built on the finished dataset, exactly as 'mmfs view add' would.
  for (uint32_t side : args.views) {
    ViewArgs view;
    view.dataset = destination;
    view.side = side;
    view.jobs = options.jobs;
    view.quality = args.view_quality;
    view.on_bad = args.on_bad;
    view.quiet = args.quiet || args.json;
    int rc = RunViewAdd(view);
    if (rc != 0) return rc;
  }
  return 0;
}

}  // namespace mmfs::cli
