// Tests' way to a dataset's shards: a LocalFileOrigin over them as format::OpenLocalDataset
// opens it, one that counts its reads (and fails or slows them on request), and whole files
// read through it (format/shard_reads.h) as strings.
//
// Thread-safety: test-only helpers; they record failures with gtest. CountingOrigin's counters
// and knobs are atomics, read and set from any thread.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "fs/format/dataset.h"
#include "fs/format/shard_reads.h"
#include "fs/format/view_set.h"
#include "fs/origin/local_file_origin.h"

namespace mmfs::testing {

// The entry at `path` (relative to the root, '/'-separated) of `dataset`, found name by name
// from the root as a lookup through the mount would; NotFound where a name is missing.
inline Result<format::Entry> EntryAtPath(const format::Dataset& dataset, const std::string& path) {
  auto e = dataset.GetEntry(0);
  size_t start = 0;
  while (e.ok() && start < path.size()) {
    const size_t slash = std::min(path.find('/', start), path.size());
    e = dataset.LookupChild(*e, path.substr(start, slash - start));
    start = slash + 1;
  }
  return e;
}

// `dataset`'s shards as origin::kDatasetTree of a LocalFileOrigin rooted at its directory; a
// test failure if they do not open.
inline std::unique_ptr<origin::LocalFileOrigin> LocalOrigin(const format::Dataset& dataset) {
  auto o = std::make_unique<origin::LocalFileOrigin>(dataset.dir());
  Status added = o->AddTree(origin::kDatasetTree, dataset.ShardTree());
  EXPECT_TRUE(added.ok()) << added.ToString();
  return o;
}

// The dataset's shards (LocalOrigin) with every read counted; the next `fail_next` reads fail
// with an IoError, and each read waits `delay_ms` first, as a store's latency.
class CountingOrigin final : public origin::OriginWrapper {
 public:
  explicit CountingOrigin(const format::Dataset& dataset)
      : OriginWrapper(LocalOrigin(dataset)) {}
  Result<origin::OriginBytes> ReadSpan(origin::ShardRef ref, uint64_t offset,
                                       size_t len) override {
    ++reads;
    if (const int ms = delay_ms.load(); ms > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    }
    if (fail_next.load() > 0) {
      --fail_next;
      return Status::IoError("the store failed this read (test)");
    }
    bytes += len;
    return OriginWrapper::ReadSpan(ref, offset, len);
  }
  std::atomic<int> reads{0};
  std::atomic<uint64_t> bytes{0};
  std::atomic<int> fail_next{0};
  std::atomic<int> delay_ms{0};
};

// Regular file `e` read whole through `o` and checked against the index; "" and a test failure
// if it does not read or check.
inline std::string ReadChecked(origin::Origin& o, const format::Dataset& dataset,
                               const format::Entry& e) {
  auto bytes = format::ReadVerified(o, dataset, e);
  EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
  return bytes.ok() ? std::string(bytes->data(), bytes->size()) : std::string();
}

// Resized file `f` of view `v` read whole through `o` (the origin the view was opened on) and
// checked; "" and a test failure if it does not read or check.
inline std::string ReadChecked(origin::Origin& o, const format::View& v,
                               const format::ViewFile& f) {
  auto bytes = format::ReadVerified(o, v, f, "test");
  EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
  return bytes.ok() ? std::string(bytes->data(), bytes->size()) : std::string();
}

}  // namespace mmfs::testing
