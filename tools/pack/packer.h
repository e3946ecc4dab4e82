// mmfs pack: turns a source tree into a packed dataset directory (fs/format/format.h).
//
// Data is written in path order (depth-first, names sorted), so a sequential walk of the mount is
// a sequential read of the shards; files of one sample (same directory, same key) form one LMDB
// record (a tar's samples are written in the order their last member comes in the archive, which
// is path order for sorted shards; see tar_grouping.h). The dataset is built in a hidden
// sibling directory and renamed into place only when it is complete and synced
// (tools/stage/staging.h), so an interrupted pack never leaves something that mounts.
//
// Thread-safety: Pack() may run on any thread; it is not reentrant with itself on the same DST.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "fs/origin/s3_origin.h"
#include "tools/pack/reporter.h"

namespace mmfs::pack {

enum class OnBadImage { kFail, kSkip, kKeep };

// What a source is. kAuto: a .tar/.tar.gz file is a WebDataset shard; a folder holding tar files
// and no subfolders is a WebDataset (img2dataset) output; a folder with a metadata.jsonl
// somewhere is a Hugging Face imagefolder; any other folder is packed as it is.
enum class SourceFormat { kAuto, kFolder, kWebDataset, kHfImageFolder };

struct PackOptions {
  // Folders and tar files, merged at the root of the dataset (each tar becomes a folder named
  // after it: 00012.tar -> 00012/); a path that two sources both provide is an error.
  std::vector<std::string> sources;
  // A local directory, or a bucket ("s3://BUCKET/PREFIX/ds.mmfs": tools/pack/bucket_destination.h).
  std::string destination;
  // A bucket destination's local staging (at most a few shards); empty: DefaultStagingDir().
  std::string staging_dir;
  // How sources given as s3:// URLs are reached (bucket_source.h): --endpoint, --ca-file.
  origin::RemoteOptions remote;
  uint64_t shard_size = 1ull << 30;
  // A damaged image: stop (kFail), leave out its whole sample with a warning (kSkip), or pack
  // it with a warning (kKeep).
  OnBadImage on_bad = OnBadImage::kFail;
  bool force = false;                        // replace an existing dataset at DST
  SourceFormat format = SourceFormat::kAuto;
  std::vector<std::string> caption_fields = {"text", "caption"};  // Hugging Face metadata
  std::string coco_annotations;  // captions_*.json for the (single) source folder
  // Threads reading, checking and checksumming samples; the output is the same for any number.
  int jobs = 1;
  // The largest file packed: a larger file in a folder fails the pack naming it, before it is
  // read; a larger tar member is left out with a warning. Every file is held in memory while it
  // is checked and checksummed, and so is each file the mount serves.
  uint64_t max_file_bytes = 1ull << 30;
  // Continue the most recent interrupted pack to the same DST (same sources and options): its
  // finished shards are kept, the rest is packed again; the result is the same as one pack.
  bool resume = false;
  const std::atomic<bool>* cancel = nullptr; // set (e.g. by SIGINT) to stop; not owned
};

struct PackSummary {
  uint64_t samples = 0;
  uint64_t files = 0;
  uint64_t directories = 0;
  uint64_t symlinks = 0;
  uint64_t bytes = 0;
  uint64_t skipped = 0;
  uint64_t bad_images = 0;
  // --on-bad skip: samples left out whole because of a bad image (with their captions).
  uint64_t samples_with_bad_image = 0;
  uint64_t samples_without_image = 0;  // tar samples left out (img2dataset failures)
  uint64_t captions_added = 0;         // files made from metadata (HF, COCO)
  // Metadata captions left out because their image is not there (HF rows naming a missing
  // file, COCO annotations whose image_id matches no image or a missing file).
  uint64_t captions_without_image = 0;
  uint64_t shards = 0;
  uint64_t dataset_bytes = 0;  // on disk, all files of DST
  uint64_t bytes_uploaded = 0;  // a bucket destination: body bytes the store acknowledged
  double seconds = 0;
};

Result<PackSummary> Pack(const PackOptions& options, PackReporter& reporter);

// "fail", "skip" or "keep": the --on-bad value, as the manifest records it.
const char* OnBadName(OnBadImage v);

}  // namespace mmfs::pack
