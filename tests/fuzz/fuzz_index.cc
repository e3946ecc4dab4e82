// index.mmfs: a dataset whose index is replaced by the input (the manifest adjusted to match its
// size and entry count, as an attacker controlling both could) either fails to open with a
// Status or serves every entry, name lookup, path and read within bounds (reads through the
// dataset's origin, as the mount and the tools read).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "fs/format/dataset.h"
#include "fs/format/format.h"
#include "fs/format/local_dataset.h"
#include "fs/format/manifest.h"
#include "fs/format/shard_reads.h"
#include "tests/fuzz/fuzz_util.h"
#include "tools/pack/packer.h"

namespace {
using namespace mmfs;

const std::string& TemplateDir() {
  static const std::string dir = [] {
    std::string src = std::string(fuzz::ScratchDir()) + "/src";
    fuzz::WriteOrDie(src + "/a/1.txt", "one");
    fuzz::WriteOrDie(src + "/a/1.json", "{}");
    fuzz::WriteOrDie(src + "/b/2.txt", "two");
    pack::PackOptions o;
    o.sources = {src};
    o.destination = std::string(fuzz::ScratchDir()) + "/ds";
    fuzz::QuietReporter r;
    if (!pack::Pack(o, r).ok()) __builtin_trap();
    return o.destination;
  }();
  return dir;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& dir = TemplateDir();
  static const std::string manifest_text =
      *ReadWholeFile(dir + "/" + format::kManifestFileName, 1 << 20);
  auto m = format::Manifest::Parse(manifest_text, "template");
  if (!m.ok()) __builtin_trap();
  m->index_size = size;
  if (size >= sizeof(format::IndexHeader)) {
    format::IndexHeader h;
    std::memcpy(&h, data, sizeof h);
    m->entries = h.entry_count;
  }
  fuzz::WriteOrDie(dir + "/" + format::kManifestFileName, m->ToJson());
  fuzz::WriteOrDie(dir + "/" + m->index_file, std::string_view(reinterpret_cast<const char*>(data), size));
  auto local = format::OpenLocalDataset(dir);
  if (!local.ok()) return 0;
  const format::Dataset& ds = *local->dataset;
  for (uint64_t i = 0; i < ds.entry_count() && i < 4096; ++i) {
    auto e = ds.GetEntry(i);
    if (!e.ok()) continue;
    (void)ds.PathOf(i);
    if (e->is_dir()) {
      (void)ds.LookupChild(*e, "1.txt");
      (void)ds.LookupChild(*e, "zzz");
    } else if (e->is_symlink()) {
      (void)ds.LinkTarget(*e);
    } else if (e->is_regular() && e->size() < (1 << 20)) {
      (void)format::ReadVerified(*local->origin, ds, *e);
    }
  }
  return 0;
}
