// MemoryOrigin: an origin (fs/origin/origin.h) whose shards are bytes in memory, with faults on
// request, for unit tests of what reads an origin (OriginReader, ViewFiles, MissLoader, ...)
// without a file to damage, a clock to wait on or a server.
//
// Shards come from a packed dataset's files (FromDataset; the trees of its views too, read from
// the same directory when ViewSet::Open adds them) or from strings (FromStrings, or PutShard
// before the tree that lists them is added). AddTree checks what LocalFileOrigin checks (the
// shard is there, has the manifest's size and its magic) and words a refusal the same way.
//
// Faults, each taken by one read, the next reads first: FailNextReads (an IoError),
// ShortenNextReads (half the bytes asked for, as a truncated response: the Origin contract says
// a read is all or an error, so the callers must catch it), CorruptNextReads (one byte flipped,
// in the middle of the read) and CorruptNextReadsAt (the byte at a shard offset flipped, in the
// next reads that cover it). A read takes at most one fault: a failure before a short answer
// before a corruption. SetReadDelay makes every read wait first, as a store's latency. A read
// outside its shard is an InvalidArgument, as from LocalFileOrigin, and takes no fault.
//
// Counters: every ReadSpan call (reads(), reads_of(shard), the log of each read's shard, offset
// and length), the bytes handed back (bytes(): a failed read none, a short one what it gave).
//
// Ownership: owns a copy of each shard's bytes; ReadSpan's bytes are the caller's.
// Thread-safety: every method may be called from any number of threads at any time (AddTree and
// Advise too, which an Origin need not allow): one mutex guards the shards, the faults and the
// log, the delay is an atomic, and the wait and the copy happen outside the lock.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/status.h"
#include "fs/format/dataset.h"
#include "fs/format/format.h"
#include "fs/origin/origin.h"

namespace mmfs::testing {

class MemoryOrigin final : public origin::Origin {
 public:
  // One ReadSpan call, as asked.
  struct ReadRecord {
    origin::ShardRef ref;
    uint64_t offset = 0;
    size_t len = 0;
  };

  // No shards yet. A tree added later takes each shard from PutShard, else from the file of the
  // same name under `root` (a dataset's directory; empty: nowhere).
  explicit MemoryOrigin(std::string root = "") : root_(std::move(root)) {}

  // `dataset`'s shards as origin::kDatasetTree, read from its directory now; its views' trees
  // are read from there when they are added. A test failure if the shards do not check.
  static std::unique_ptr<MemoryOrigin> FromDataset(const format::Dataset& dataset) {
    auto o = std::make_unique<MemoryOrigin>(dataset.dir());
    Status added = o->AddTree(origin::kDatasetTree, dataset.ShardTree());
    EXPECT_TRUE(added.ok()) << added.ToString();
    return o;
  }
  // `shards` as origin::kDatasetTree, named as a pack names them ("shard-00000.mdb", ...), with
  // no magic checked.
  static std::unique_ptr<MemoryOrigin> FromStrings(std::vector<std::string> shards) {
    auto o = std::make_unique<MemoryOrigin>();
    origin::TreeSpec spec;
    for (size_t i = 0; i < shards.size(); ++i) {
      char name[32];
      std::snprintf(name, sizeof name, format::kShardFilePattern, static_cast<unsigned>(i));
      spec.shards.push_back({name, shards[i].size()});
      o->PutShard(name, std::move(shards[i]));
    }
    Status added = o->AddTree(origin::kDatasetTree, spec);
    EXPECT_TRUE(added.ok()) << added.ToString();
    return o;
  }

  // The bytes of the shard at `name` (relative to the root, as a tree's place and shard name
  // make it: "shard-00000.mdb", "views/256/shard-00000.mdb") for a tree added later.
  void PutShard(const std::string& name, std::string bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    put_[name] = std::move(bytes);
  }

  Status AddTree(uint32_t tree, const origin::TreeSpec& spec) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (trees_.count(tree) > 0) {
      return Status::AlreadyExists(root_ + ": tree " + std::to_string(tree) + " is added already");
    }
    std::vector<Shard> shards;
    for (const origin::ShardSpec& want : spec.shards) {
      Shard s;
      s.name = spec.place.empty() ? want.name : spec.place + "/" + want.name;
      const std::string path = root_.empty() ? s.name : root_ + "/" + s.name;
      auto bytes = BytesOf(s.name, path);
      if (!bytes.ok()) {
        return spec.cannot_open.empty() ? bytes.status()
                                        : bytes.status().WithContext(spec.cannot_open);
      }
      if (bytes->size() != want.size) {
        return Status::Corruption(path + ": size " + std::to_string(bytes->size()) +
                                  " bytes, the manifest says " + std::to_string(want.size) +
                                  spec.size_hint);
      }
      if (spec.magic != 0) {
        uint32_t magic = 0;
        if (want.size < spec.magic_offset + sizeof magic) {
          return Status::Corruption(path + ": " + spec.bad_magic);
        }
        bytes->copy(reinterpret_cast<char*>(&magic), sizeof magic,
                    static_cast<size_t>(spec.magic_offset));
        if (magic != spec.magic) return Status::Corruption(path + ": " + spec.bad_magic);
      }
      s.bytes = std::make_shared<const std::string>(std::move(bytes).value());
      shards.push_back(std::move(s));
    }
    trees_[tree] = std::move(shards);
    return Status::Ok();
  }

  Result<uint64_t> ShardSize(origin::ShardRef ref) const override {
    std::lock_guard<std::mutex> lock(mu_);
    const Shard* s = Find(ref);
    if (s == nullptr) return Status::NotFound(NameOf(ref) + ": no such shard");
    return static_cast<uint64_t>(s->bytes->size());
  }

  std::string ShardName(origin::ShardRef ref) const override {
    std::lock_guard<std::mutex> lock(mu_);
    return NameOf(ref);
  }

  Result<origin::OriginBytes> ReadSpan(origin::ShardRef ref, uint64_t offset, size_t len) override {
    std::shared_ptr<const std::string> shard;
    std::string name;
    {
      std::lock_guard<std::mutex> lock(mu_);
      log_.push_back({ref, offset, len});
      ++per_shard_[{ref.tree, ref.shard}];
      if (const Shard* s = Find(ref)) shard = s->bytes;
      name = NameOf(ref);
    }
    reads_.fetch_add(1, std::memory_order_relaxed);
    if (const auto delay = std::chrono::milliseconds(delay_ms_.load()); delay.count() > 0) {
      std::this_thread::sleep_for(delay);
    }
    if (shard == nullptr || offset > shard->size() || len > shard->size() - offset) {
      return Status::InvalidArgument(name + ": read outside the shard");
    }
    std::string out = shard->substr(static_cast<size_t>(offset), len);
    const Taken fault = TakeFault(ref, offset, len);
    switch (fault.kind) {
      case Fault::kFail:
        return Status::IoError(name + " at offset " + std::to_string(offset) +
                               ": the store failed this read (test)");
      case Fault::kShort:
        out.resize(len / 2);
        break;
      case Fault::kCorrupt:
        out[fault.at] = static_cast<char>(out[fault.at] ^ 0x5a);
        break;
      case Fault::kNone:
        break;
    }
    bytes_.fetch_add(out.size(), std::memory_order_relaxed);
    return origin::OriginBytes(std::move(out));
  }

  // A memory store has no page cache to bypass or drop, and no readahead.
  origin::OriginCapabilities Capabilities() const override { return {}; }
  void Advise(const origin::OriginAdvice& advice) override {
    std::lock_guard<std::mutex> lock(mu_);
    advice_ = advice;
  }
  origin::OriginAdvice last_advice() const {
    std::lock_guard<std::mutex> lock(mu_);
    return advice_;
  }

  // Faults (see above). Each call replaces the count of its kind.
  void FailNextReads(int n) { SetCount(&fail_next_, n); }
  void ShortenNextReads(int n) { SetCount(&short_next_, n); }
  void CorruptNextReads(int n) { SetCount(&corrupt_next_, n); }
  void CorruptNextReadsAt(int n, origin::ShardRef ref, uint64_t shard_offset) {
    std::lock_guard<std::mutex> lock(mu_);
    corrupt_at_next_ = n;
    corrupt_at_ref_ = ref;
    corrupt_at_offset_ = shard_offset;
  }
  void SetReadDelay(std::chrono::milliseconds delay) {
    delay_ms_.store(static_cast<int64_t>(delay.count()));
  }
  // Faults asked for that no read has taken yet, of every kind.
  int pending_faults() const {
    std::lock_guard<std::mutex> lock(mu_);
    return fail_next_ + short_next_ + corrupt_next_ + corrupt_at_next_;
  }

  // Counters (see above).
  int reads() const { return static_cast<int>(reads_.load(std::memory_order_relaxed)); }
  uint64_t bytes() const { return bytes_.load(std::memory_order_relaxed); }
  int reads_of(origin::ShardRef ref) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = per_shard_.find({ref.tree, ref.shard});
    return it == per_shard_.end() ? 0 : static_cast<int>(it->second);
  }
  std::vector<ReadRecord> read_log() const {
    std::lock_guard<std::mutex> lock(mu_);
    return log_;
  }
  void ResetCounters() {
    std::lock_guard<std::mutex> lock(mu_);
    log_.clear();
    per_shard_.clear();
    reads_.store(0);
    bytes_.store(0);
  }

 private:
  struct Shard {
    std::string name;  // relative to the root, for messages
    std::shared_ptr<const std::string> bytes;
  };
  enum class Fault { kNone, kFail, kShort, kCorrupt };
  struct Taken {
    Fault kind = Fault::kNone;
    size_t at = 0;  // kCorrupt: the byte of the read to flip
  };

  // Callers hold mu_.
  const Shard* Find(origin::ShardRef ref) const {
    auto it = trees_.find(ref.tree);
    if (it == trees_.end() || ref.shard >= it->second.size()) return nullptr;
    return &it->second[ref.shard];
  }
  std::string NameOf(origin::ShardRef ref) const {
    if (const Shard* s = Find(ref)) return s->name;
    return "tree " + std::to_string(ref.tree) + " shard " + std::to_string(ref.shard);
  }
  Result<std::string> BytesOf(const std::string& name, const std::string& path) const {
    if (auto it = put_.find(name); it != put_.end()) return it->second;
    if (root_.empty()) return Status::NotFound(path + ": no such shard (test)");
    std::ifstream in(path, std::ios::binary);
    if (!in) return Status::NotFound("open " + path + ": no such file");
    std::ostringstream bytes;
    bytes << in.rdbuf();
    return bytes.str();
  }

  void SetCount(int* count, int n) {
    std::lock_guard<std::mutex> lock(mu_);
    *count = n;
  }
  // The fault this read of `len` bytes at `offset` of `ref` takes, if any (one at most).
  Taken TakeFault(origin::ShardRef ref, uint64_t offset, size_t len) {
    std::lock_guard<std::mutex> lock(mu_);
    if (fail_next_ > 0) {
      --fail_next_;
      return {Fault::kFail};
    }
    if (short_next_ > 0 && len > 0) {
      --short_next_;
      return {Fault::kShort};
    }
    if (corrupt_next_ > 0 && len > 0) {
      --corrupt_next_;
      return {Fault::kCorrupt, len / 2};
    }
    if (corrupt_at_next_ > 0 && ref == corrupt_at_ref_ && corrupt_at_offset_ >= offset &&
        corrupt_at_offset_ - offset < len) {
      --corrupt_at_next_;
      return {Fault::kCorrupt, static_cast<size_t>(corrupt_at_offset_ - offset)};
    }
    return {};
  }

  const std::string root_;
  mutable std::mutex mu_;
  std::map<std::string, std::string> put_;
  std::map<uint32_t, std::vector<Shard>> trees_;
  origin::OriginAdvice advice_;
  int fail_next_ = 0, short_next_ = 0, corrupt_next_ = 0, corrupt_at_next_ = 0;
  origin::ShardRef corrupt_at_ref_;
  uint64_t corrupt_at_offset_ = 0;
  std::atomic<int64_t> delay_ms_{0};
  std::atomic<uint64_t> reads_{0}, bytes_{0};
  std::vector<ReadRecord> log_;
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> per_shard_;
};

}  // namespace mmfs::testing
