#include "tools/pack/source_scan.h"

#include <sys/stat.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <unordered_map>
#include <vector>

#include "fs/format/format.h"
#include "tools/pack/bucket_source.h"
#include "tools/pack/captions.h"
#include "tools/pack/folder_source.h"
#include "tools/pack/tar_source.h"

namespace mmfs::pack {

namespace {

namespace fsys = std::filesystem;

// Adds a file read whole from outside a scanned folder (a tar, an annotation file).
void AddToTally(AccessTally* tally, const std::string& path, const struct stat& st) {
  std::error_code ec;
  fsys::path real = fsys::canonical(path, ec);
  std::string folder = ec ? fsys::absolute(path, ec).parent_path().string()
                          : real.parent_path().string();
  tally->AddFile(path, st.st_uid, st.st_gid, st.st_mode, FolderReach(folder));
}

// A folder with tar files and no subfolders: what img2dataset and WebDataset writers make.
bool IsWebDatasetFolder(const std::string& dir) {
  bool any_tar = false;
  std::error_code ec;
  for (const auto& e : fsys::directory_iterator(dir, ec)) {
    if (e.is_directory()) return false;
    if (e.is_regular_file() && IsTarName(e.path().filename().string())) any_tar = true;
  }
  return any_tar;
}

// Moves `tree`'s children into `into` (at `prefix`), merging folders; the same file path from
// two sources is an error naming it.
Status Merge(SourceNode* into, SourceNode tree, const std::string& src,
             const std::string& prefix = "") {
  std::unordered_map<std::string, size_t> existing;
  for (size_t i = 0; i < into->children.size(); ++i) existing[into->children[i].name] = i;
  for (SourceNode& child : tree.children) {
    auto it = existing.find(child.name);
    if (it == existing.end()) {
      into->children.push_back(std::move(child));
      continue;
    }
    SourceNode& have = into->children[it->second];
    bool both_dirs = (have.mode & format::kModeTypeMask) == format::kModeDirectory &&
                     (child.mode & format::kModeTypeMask) == format::kModeDirectory &&
                     have.tar_path.empty() && child.tar_path.empty();
    if (!both_dirs) {
      return Status::AlreadyExists("'" + prefix + child.name + "' is in " + src +
                                   " and in an earlier source; every path must come from one "
                                   "source (rename one, or pack them separately)");
    }
    std::string below = prefix + child.name + "/";
    MMFS_RETURN_IF_ERROR(Merge(&have, std::move(child), src, below));
  }
  return Status::Ok();
}

class SourceScanner {
 public:
  SourceScanner(const PackOptions& options, PackReporter& reporter, PackSummary* summary)
      : options_(options), reporter_(reporter), summary_(summary) {
    out_.root.mode = format::kModeDirectory | 0755;
  }

  Status AddSource(const std::string& src) {
    if (IsRemoteSource(src)) return AddBucket(src);
    struct stat st;
    if (::stat(src.c_str(), &st) != 0) return Status::FromErrno(errno, "source " + src);
    // The mount's root is the source's root (the latest of several): `find -newer` and rsync
    // compare it like any other directory.
    out_.root.mtime_ns = std::max<int64_t>(out_.root.mtime_ns, MtimeNs(st));
    SourceNode tree;
    tree.mode = format::kModeDirectory | 0755;
    if (S_ISREG(st.st_mode)) {
      if (!IsTarName(src) && options_.format != SourceFormat::kWebDataset) {
        return Status::InvalidArgument(src + ": a file source must be a .tar, .tar.gz or .tgz "
                                       "WebDataset shard");
      }
      tree.children.push_back(TarFolder(src));
      return Merge(&out_.root, std::move(tree), src);
    }
    if (!S_ISDIR(st.st_mode)) return Status::InvalidArgument(src + ": not a folder or a tar file");
    if (options_.format == SourceFormat::kWebDataset ||
        (options_.format == SourceFormat::kAuto && IsWebDatasetFolder(src))) {
      std::vector<std::string> tars;
      uint64_t others = 0;
      for (const auto& e : fsys::directory_iterator(src)) {
        std::string name = e.path().filename().string();
        if (e.is_regular_file() && IsTarName(name)) {
          tars.push_back(e.path().string());
        } else {
          ++others;
        }
      }
      std::sort(tars.begin(), tars.end());
      if (tars.empty()) return Status::InvalidArgument(src + ": no .tar files (--from webdataset)");
      if (others > 0) {
        reporter_.Warning(src + ": " + std::to_string(others) + " entries that are not tar files "
                          "(img2dataset's .parquet and _stats.json, ...) are left out");
        summary_->skipped += others;
      }
      for (const std::string& t : tars) tree.children.push_back(TarFolder(t));
      return Merge(&out_.root, std::move(tree), src);
    }
    ScanCounts counts;
    counts.access = &out_.access;
    MMFS_ASSIGN_OR_RETURN(tree, ScanFolder(src, reporter_, &counts));
    summary_->skipped += counts.skipped;
    out_.files += counts.files;
    out_.bytes += counts.bytes;
    CaptionCounts cc;
    if (options_.format == SourceFormat::kHfImageFolder ||
        (options_.format == SourceFormat::kAuto && HasHfMetadata(tree))) {
      MMFS_RETURN_IF_ERROR(AddHfMetadataCaptions(&tree, options_.caption_fields, reporter_, &cc));
      out_.layouts.insert("hf-imagefolder");
    } else if (!options_.coco_annotations.empty()) {
      struct stat ast;
      if (::stat(options_.coco_annotations.c_str(), &ast) == 0) {
        AddToTally(&out_.access, options_.coco_annotations, ast);
      }
      MMFS_RETURN_IF_ERROR(AddCocoCaptions(&tree, options_.coco_annotations, reporter_, &cc));
      out_.layouts.insert("coco");
    } else {
      out_.layouts.insert("folder");
    }
    summary_->captions_added += cc.files_added;
    summary_->captions_without_image += cc.captions_without_image;
    out_.files += cc.files_added;
    // Generated captions are written like files: without their bytes in the total, progress
    // went past 100% (192% for a source of small images with long metadata rows).
    out_.bytes += cc.bytes_added;
    return Merge(&out_.root, std::move(tree), src);
  }

  ScannedSources Finish() {
    SortTree(&out_.root);
    std::string mixed = out_.access.MixedWarning();
    if (!mixed.empty()) reporter_.Warning(mixed);
    for (const SourceNode& child : out_.root.children) {
      if (child.name == ".mmfs") {
        reporter_.Warning(".mmfs is packed but the mount shows its control directory there "
                          "instead; rename it to reach it through the mount");
      }
      if (child.name.size() > 1 && child.name[0] == '@' &&
          child.name.find_first_not_of("0123456789", 1) == std::string::npos) {
        reporter_.Warning(child.name + " is packed at the top level, where the mount shows the "
                          "view of that side once one is made (mmfs view add refuses it); "
                          "rename it to keep both");
      }
    }
    return std::move(out_);
  }

 private:
  // A tar file becomes a folder named after it, filled while packing.
  SourceNode TarFolder(const std::string& path) {
    SourceNode dir;
    dir.name = TarStem(fsys::path(path).filename().string());
    dir.mode = format::kModeDirectory | 0755;
    dir.tar_path = path;
    struct stat st;
    if (::stat(path.c_str(), &st) == 0) {
      AddToTally(&out_.access, path, st);
      dir.mtime_ns = MtimeNs(st);
      dir.size = static_cast<uint64_t>(st.st_size);  // the progress total counts the archive
      out_.bytes += dir.size;
    }
    ++out_.tars;
    out_.layouts.insert("webdataset");
    return dir;
  }

  // The tars a URL source names (a bucket prefix's, a pattern's), each a folder as a local tar
  // is (bucket_source.h).
  Status AddBucket(const std::string& src) {
    if (options_.format != SourceFormat::kAuto && options_.format != SourceFormat::kWebDataset) {
      return Status::InvalidArgument(src + ": only WebDataset tars are packed from a URL "
                                     "(--from webdataset or auto)");
    }
    if (!options_.coco_annotations.empty()) {
      return Status::InvalidArgument(src + ": --coco-annotations takes a local image folder");
    }
    uint64_t left_out = 0;
    MMFS_ASSIGN_OR_RETURN(std::vector<BucketTarObject> tars,
                          ListRemoteTars(src, options_.remote, &left_out, options_.cancel));
    if (left_out > 0) {
      reporter_.Warning(src + ": " + std::to_string(left_out) + " objects that are not tar files "
                        "directly under it (img2dataset's .parquet and _stats.json, deeper "
                        "keys, ...) are left out");
      summary_->skipped += left_out;
    }
    // A tar's folder has its object's time (LastModified), so that packing an unchanged bucket
    // again gives the same dataset; the scan's time where the listing gave none.
    const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
    SourceNode tree;
    tree.mode = format::kModeDirectory | 0755;
    for (const BucketTarObject& t : tars) {
      SourceNode dir;
      dir.name = TarStem(t.name);
      dir.mode = format::kModeDirectory | 0755;
      dir.mtime_ns = t.mtime_ns != 0 ? t.mtime_ns : now;
      out_.root.mtime_ns = std::max(out_.root.mtime_ns, dir.mtime_ns);
      dir.tar_path = t.url;
      dir.size = t.size;
      out_.bytes += t.size;
      // No file modes in a bucket: readable by this user alone, as far as the outputs go.
      out_.access.AddFile(t.url, ::geteuid(), ::getegid(), S_IFREG | 0600, 0);
      ++out_.tars;
      tree.children.push_back(std::move(dir));
    }
    out_.layouts.insert("webdataset");
    return Merge(&out_.root, std::move(tree), src);
  }

  const PackOptions& options_;
  PackReporter& reporter_;
  PackSummary* summary_;
  ScannedSources out_;
};

}  // namespace

Result<ScannedSources> ScanSources(const PackOptions& options, PackReporter& reporter,
                                   PackSummary* summary) {
  SourceScanner scanner(options, reporter, summary);
  for (const std::string& src : options.sources) {
    reporter.Phase("scanning " + src);
    MMFS_RETURN_IF_ERROR(scanner.AddSource(src));
  }
  return scanner.Finish();
}

}  // namespace mmfs::pack
