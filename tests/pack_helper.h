// Packs a folder with the library packer for tests, collecting warnings.
#pragma once

#include <string>
#include <vector>

#include "tools/pack/packer.h"

namespace mmfs::testing {

class CollectingReporter final : public pack::PackReporter {
 public:
  void Warning(const std::string& message) override { warnings.push_back(message); }
  void Phase(const std::string&) override {}
  void Progress(const pack::PackProgress& p) override {
    last = p;
    all.push_back(p);
    finished_calls += p.finished ? 1 : 0;
    past_total |= p.bytes_done > p.bytes_total || (!p.finished && p.bytes_done == p.bytes_total &&
                                                  p.bytes_total > 0);
  }
  std::vector<std::string> warnings;
  pack::PackProgress last;
  std::vector<pack::PackProgress> all;
  int finished_calls = 0;  // calls that said the pack is finished
  bool past_total = false;  // a call before the end at or past 100%
};

inline Result<pack::PackSummary> PackFolder(const std::string& src, const std::string& dst,
                                            CollectingReporter* reporter = nullptr,
                                            pack::OnBadImage on_bad = pack::OnBadImage::kFail,
                                            uint64_t shard_size = 1ull << 30, bool force = false) {
  CollectingReporter local;
  pack::PackOptions options;
  options.sources = {src};
  options.destination = dst;
  options.on_bad = on_bad;
  options.shard_size = shard_size;
  options.force = force;
  return pack::Pack(options, reporter != nullptr ? *reporter : local);
}

}  // namespace mmfs::testing
