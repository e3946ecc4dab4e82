// AccessPatternDetector: predicts which samples a reader stream will want next.
//
// A stream is one reader (FUSE gives each request the caller's pid; a DataLoader worker is one
// stream). Positions are sample positions in pack order (path order). The detector sees runs:
// consecutive samples (a validation pass, `cp -r`, a directory scan) and strided runs (a stream
// taking every k-th sample). After two steps of the same stride it predicts the next `window`
// positions along it; the window doubles while the stream stays on the run and collapses when
// it jumps elsewhere. Predictions come in batches (the window is topped up once half of it is
// consumed) so that the prefetcher can turn each batch into one large origin read. Random (shuffled) access never forms a run, so it predicts nothing.
//
// Thread-safety: all methods are thread-safe (one mutex; a few integer updates per call).
#pragma once

#include <cstdint>
#include <list>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace mmfs::cache {

struct ReadaheadConfig {
  uint32_t initial_window = 4;   // samples predicted when a run is first recognized
  uint32_t max_window = 128;     // samples
  int64_t max_stride = 16;       // larger jumps are not runs
  size_t max_streams = 1024;     // least recently seen streams are forgotten
};

class AccessPatternDetector {
 public:
  explicit AccessPatternDetector(ReadaheadConfig config = {});

  // Records that `stream` read the sample at `position`; returns the positions to load ahead
  // (each at most once per run, in order), possibly none.
  std::vector<int64_t> OnRead(uint64_t stream, int64_t position);

  uint64_t runs_detected() const;

 private:
  struct Stream {
    int64_t last = -1;
    int64_t stride = 0;
    uint32_t steps = 0;     // consecutive steps of `stride`
    uint32_t window = 0;
    int64_t predicted_to = 0;  // last position already predicted on this run
    std::list<uint64_t>::iterator lru;
  };

  const ReadaheadConfig config_;
  mutable std::mutex mu_;
  std::unordered_map<uint64_t, Stream> streams_;  // guarded by mu_
  std::list<uint64_t> lru_;                       // most recent first; guarded by mu_
  uint64_t runs_ = 0;                             // guarded by mu_
};

}  // namespace mmfs::cache
