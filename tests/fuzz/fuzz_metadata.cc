// Dataset metadata: the first byte picks Hugging Face metadata.jsonl, metadata.csv or a COCO
// captions file; the rest is its text. Any input gives captions or a Status, never a crash, and
// never a file outside the source tree.
#include <cstddef>
#include <cstdint>
#include <string>

#include "tests/fuzz/fuzz_util.h"
#include "tools/pack/captions.h"
#include "tools/pack/folder_source.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mmfs;
  if (size == 0) return 0;
  std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string root = std::string(fuzz::ScratchDir()) + "/meta";
  std::error_code ec;
  std::filesystem::remove_all(root, ec);
  fuzz::WriteOrDie(root + "/train/a.jpg", "x");
  fuzz::WriteOrDie(root + "/train/img/b.jpg", "y");
  fuzz::WriteOrDie(root + "/train/000000000009.jpg", "z");
  int kind = data[0] % 3;
  std::string coco = root + "/../coco.json";
  if (kind == 0) fuzz::WriteOrDie(root + "/train/metadata.jsonl", text);
  if (kind == 1) fuzz::WriteOrDie(root + "/train/metadata.csv", text);
  if (kind == 2) fuzz::WriteOrDie(coco, text);
  fuzz::QuietReporter r;
  pack::ScanCounts sc;
  auto tree = pack::ScanFolder(root, r, &sc);
  if (!tree.ok()) __builtin_trap();
  pack::CaptionCounts cc;
  Status s = kind == 2 ? pack::AddCocoCaptions(&*tree, coco, r, &cc)
                       : pack::AddHfMetadataCaptions(&*tree, {"text", "caption"}, r, &cc);
  (void)s;
  return 0;
}
