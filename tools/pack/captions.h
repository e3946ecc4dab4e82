// Caption files from dataset metadata, added to a scanned folder tree before packing:
//
// - Hugging Face imagefolder: a `metadata.jsonl` in a split folder, one JSON object per line with
//   a `file_name` (relative to that folder), or a `metadata.csv` with a header row (read with
//   libcsv; every value a string). For each row the caption (the first string field of
//   `caption_fields` present, by default `text` then `caption`) becomes `key.txt` next to the
//   image and the whole row `key.json`. The metadata file itself stays, so Hugging Face's own
//   imagefolder loader still works on the mount.
// - COCO captions: `captions_*.json` (`images` with `id` and `file_name`, `annotations` with
//   `image_id` and `caption`); every caption of an image, one per line, becomes `key.txt` next
//   to the image (file_name relative to the source folder).
//
// A generated name that already exists in the source is an error naming both, never a silent
// overwrite. Rows naming a missing image, and COCO annotations whose image_id matches no image,
// are counted and reported once per metadata file.
//
// Thread-safety: reentrant.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "tools/pack/reporter.h"
#include "tools/pack/source_tree.h"

namespace mmfs::pack {

struct CaptionCounts {
  uint64_t files_added = 0;
  uint64_t bytes_added = 0;  // of the files added (they count in the pack's progress)
  // Hugging Face rows naming an image that is not in the folder; COCO images listed in the
  // annotations file whose file is not in the folder.
  uint64_t rows_without_image = 0;
  uint64_t rows_without_caption = 0;
  // Captions left out because their image is missing: HF rows as above; COCO annotations whose
  // image_id names no entry of "images", or an entry whose file is not in the folder.
  uint64_t captions_without_image = 0;
};

// True if some directory of the tree holds a metadata.jsonl or metadata.csv.
bool HasHfMetadata(const SourceNode& root);

Status AddHfMetadataCaptions(SourceNode* root, const std::vector<std::string>& caption_fields,
                             PackReporter& reporter, CaptionCounts* counts);

Status AddCocoCaptions(SourceNode* root, const std::string& annotations_path,
                       PackReporter& reporter, CaptionCounts* counts);

}  // namespace mmfs::pack
