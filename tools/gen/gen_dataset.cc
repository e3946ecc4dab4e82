// mmfs-gen-dataset: writes a deterministic image-caption dataset in the ImageFolder layout
// (OUT/<split>/<class>/<key>.jpg + <key>.txt), with real JPEG encodings of varied sizes, for the
// demo, the tests and the benchmarks. Single-threaded; --first lets several processes write
// disjoint ranges of samples of one dataset side by side (bench/million.py does).

#include <sys/stat.h>
#include <turbojpeg.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace {

// splitmix64: a tiny, portable generator, so a seed means the same bytes on every machine.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi].
  int Range(int lo, int hi) {
    return lo + static_cast<int>(Next() % static_cast<uint64_t>(hi - lo + 1));
  }

 private:
  uint64_t state_;
};

const char* const kWords[] = {
    "a",      "photo",   "of",      "the",    "cat",    "dog",      "sitting", "on",
    "red",    "blue",    "green",   "small",  "large",  "wooden",   "table",   "near",
    "window", "in",      "morning", "light",  "street", "city",     "at",      "night",
    "with",   "two",     "people",  "walking", "beach", "sunset",   "over",    "mountains",
    "bowl",   "fruit",   "close-up", "old",   "car",    "parked",   "outside", "house",
    "bird",   "flying",  "above",   "lake",   "child",  "playing",  "ball",    "garden"};

std::string Caption(Rng& rng) {
  int target = rng.Range(50, 300);
  std::string text;
  while (static_cast<int>(text.size()) < target) {
    if (!text.empty()) text += ' ';
    text += kWords[rng.Next() % (sizeof kWords / sizeof kWords[0])];
  }
  text.resize(static_cast<size_t>(target));
  text += '\n';
  return text;
}

std::vector<unsigned char> Image(Rng& rng, int min_side, int max_side, tjhandle tj) {
  int w = rng.Range(min_side, max_side);
  int h = rng.Range(min_side, max_side);
  int noise = rng.Range(2, 48);  // texture: drives the JPEG size from ~10 KB to ~150 KB
  int c0[3], c1[3];
  for (int k = 0; k < 3; ++k) {
    c0[k] = rng.Range(0, 255);
    c1[k] = rng.Range(0, 255);
  }
  std::vector<unsigned char> rgb(static_cast<size_t>(w) * h * 3);
  uint64_t n = rng.Next();
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      n ^= n << 13;
      n ^= n >> 7;
      n ^= n << 17;
      for (int k = 0; k < 3; ++k) {
        int base = c0[k] + (c1[k] - c0[k]) * (x + y) / (w + h);
        int v = base + static_cast<int>((n >> (k * 8)) % static_cast<uint64_t>(2 * noise + 1)) - noise;
        rgb[(static_cast<size_t>(y) * w + x) * 3 + k] =
            static_cast<unsigned char>(v < 0 ? 0 : (v > 255 ? 255 : v));
      }
    }
  }
  unsigned char* jpeg = nullptr;
  unsigned long size = 0;
  int quality = rng.Range(80, 95);
  if (tjCompress2(tj, rgb.data(), w, 0, h, TJPF_RGB, &jpeg, &size, TJSAMP_420, quality, 0) != 0) {
    std::fprintf(stderr, "mmfs-gen-dataset: JPEG encoding failed: %s\n", tjGetErrorStr2(tj));
    std::exit(1);
  }
  std::vector<unsigned char> out(jpeg, jpeg + size);
  tjFree(jpeg);
  return out;
}

bool WriteFile(const std::string& path, const void* data, size_t size) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  bool ok = std::fwrite(data, 1, size, f) == size;
  return std::fclose(f) == 0 && ok;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Write a deterministic image-caption dataset (ImageFolder layout) for demos, tests\n"
               "and benchmarks: OUT/<split>/class_NNN/NNNNNNNN.jpg and .txt.",
               "mmfs-gen-dataset"};
  std::string out;
  uint64_t samples = 2000, seed = 1, first = 0;
  int classes = 10, min_side = 160, max_side = 640;
  std::string split = "train";
  bool no_captions = false;
  bool metadata_only = false;
  bool empty = false;
  app.add_option("OUT", out, "Folder to write (created)")->required();
  app.add_option("-n,--samples", samples, "Number of samples")->capture_default_str();
  app.add_option("-c,--classes", classes, "Number of class folders")->capture_default_str();
  app.add_option("--seed", seed, "Seed: same seed, same bytes")->capture_default_str();
  app.add_option("--first", first,
                 "Index of the first sample: writes samples FIRST..FIRST+N-1 (sample i in class "
                 "i mod C), so that processes given disjoint ranges write one dataset")
      ->capture_default_str();
  app.add_option("--min-side", min_side, "Smallest image side in pixels")->capture_default_str();
  app.add_option("--max-side", max_side, "Largest image side in pixels")->capture_default_str();
  app.add_option("--split", split, "Split folder name")->capture_default_str();
  app.add_flag("--no-captions", no_captions, "Write images only");
  app.add_flag("--metadata-only", metadata_only,
               "Write only small caption files (no images): for listing and mount-time tests "
               "with millions of entries");
  app.add_flag("--empty", empty,
               "With --metadata-only: the files are empty (no data block each on disk: 10M "
               "entries fit where 4 KB files would take 40 GB)");
  CLI11_PARSE(app, argc, argv);
  if (classes < 1) {
    std::fprintf(stderr, "mmfs-gen-dataset: --classes must be at least 1 (got %d)\n", classes);
    return 2;
  }
  if (min_side < 8 || max_side < min_side) {
    std::fprintf(stderr,
                 "mmfs-gen-dataset: image sides must satisfy 8 <= --min-side <= --max-side "
                 "(got --min-side %d, --max-side %d)\n",
                 min_side, max_side);
    return 2;
  }
  if (empty && !metadata_only) {
    std::fprintf(stderr, "mmfs-gen-dataset: --empty needs --metadata-only\n");
    return 2;
  }
  tjhandle tj = tjInitCompress();
  // From 0, the stream of every dataset made before --first existed; from elsewhere, a stream
  // derived from (seed, first) rather than a shifted copy of seed's.
  Rng rng(first == 0 ? seed : Rng(seed ^ (first * 0xD1B54A32D192ED03ull)).Next());
  uint64_t bytes = 0;
  for (int c = 0; c < classes; ++c) {
    char dir[64];
    std::snprintf(dir, sizeof dir, "class_%03d", c);
    std::filesystem::create_directories(out + "/" + split + "/" + dir);
  }
  for (uint64_t i = first; i < first + samples; ++i) {
    char rel[96];
    std::snprintf(rel, sizeof rel, "/%s/class_%03d/%08llu", split.c_str(),
                  static_cast<int>(i % static_cast<uint64_t>(classes)),
                  static_cast<unsigned long long>(i));
    std::string base = out + rel;
    if (metadata_only) {
      std::string caption = empty ? std::string() : Caption(rng);
      if (!WriteFile(base + ".txt", caption.data(), caption.size())) {
        std::fprintf(stderr, "mmfs-gen-dataset: cannot write %s.txt: %s\n", base.c_str(),
                     std::strerror(errno));
        return 1;
      }
      bytes += caption.size();
      continue;
    }
    std::vector<unsigned char> jpg = Image(rng, min_side, max_side, tj);
    std::string caption = Caption(rng);
    if (!WriteFile(base + ".jpg", jpg.data(), jpg.size()) ||
        (!no_captions && !WriteFile(base + ".txt", caption.data(), caption.size()))) {
      std::fprintf(stderr, "mmfs-gen-dataset: cannot write %s: %s\n", base.c_str(),
                   std::strerror(errno));
      return 1;
    }
    bytes += jpg.size() + (no_captions ? 0 : caption.size());
  }
  tjDestroy(tj);
  std::printf("wrote %llu samples (%.1f MiB) to %s\n", static_cast<unsigned long long>(samples),
              static_cast<double>(bytes) / (1 << 20), out.c_str());
  return 0;
}
