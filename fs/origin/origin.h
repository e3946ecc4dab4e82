// Origin: where the bytes of a dataset's shards live, and the one way they are read (LevelDB's
// Env, for the shards). Every shard byte the daemon serves, the tools check and the fuzzers read
// goes through an Origin, so that counters, the cost model and fault injection see every byte.
//
// An origin holds trees of shard files. Tree 0 is the dataset's own shards; each published view
// of the dataset is another tree (its shards in views/<side>/). A shard is named by a ShardRef:
// its tree and its position in the tree's shard list (the manifest's order).
//
// LocalFileOrigin (local_file_origin.h) is the one over local files; HttpOrigin (http_origin.h)
// the one over a web server or, signed, an S3 bucket (s3_origin.h); NewDelayedOrigin
// (delayed_origin.h) slows any origin down; tests wrap one to count or fail reads
// (OriginWrapper). An origin need not be a local file (an object store, an HTTP server): no
// caller may assume a file descriptor, a mapping of a shard or O_DIRECT. What an origin can do
// beyond reading (direct I/O, drop-behind, random-access advice) it reports as capabilities and
// honours as advice.
//
// Ownership: an OriginWrapper owns the origin it wraps.
// Thread-safety: ReadSpan, ShardSize, ShardName and Capabilities may be called from any number of
// threads. AddTree and Advise are set-up calls: they must not run concurrently with any other
// call (the daemon makes them before it serves).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "fs/origin/origin_bytes.h"
#include "fs/origin/remote_stats.h"

namespace mmfs::origin {

// The tree of the dataset's own shards.
inline constexpr uint32_t kDatasetTree = 0;

// One shard: tree 0 is the dataset's own shards, each published view another tree.
struct ShardRef {
  uint32_t tree = 0;
  uint32_t shard = 0;  // position in the tree's shard list
  friend bool operator==(const ShardRef&, const ShardRef&) = default;
};

// One shard of a tree as its manifest lists it.
struct ShardSpec {
  std::string name;   // "shard-00000.mdb", inside the tree's place
  uint64_t size = 0;  // bytes the manifest says it holds
};

// A tree of shards to add, and what each shard must be.
struct TreeSpec {
  // Where the shards are, relative to the origin's root: "" for the root itself (the dataset's
  // own shards), "views/256" for a view's.
  std::string place;
  std::vector<ShardSpec> shards;
  // Each shard must hold `magic` (four bytes, host order) at `magic_offset`: an LMDB meta page's
  // magic for the shards of a dataset or a view. 0: not checked.
  uint64_t magic_offset = 0;
  uint32_t magic = 0;
  // How a refusal is worded (the dataset's and a view's messages differ, and users know both):
  // the context put before a failure to open a shard (empty: none), what follows a size that
  // differs from the manifest's ("PATH: size N bytes, the manifest says M<size_hint>"), and what
  // follows "PATH: " for a shard without its magic.
  std::string cannot_open;
  std::string size_hint;
  std::string bad_magic = "bad magic";
};

// Advice an origin may honour, each part only if it has the capability (below).
struct OriginAdvice {
  // Read past the operating system's page cache (O_DIRECT for local files): no kernel copy and
  // no page-cache work for bytes the daemon caches itself.
  bool direct_io = false;
  // Let the page cache drop what was read (mmfs keeps its own copies: the shard's page cache
  // would be a third copy of the same bytes).
  bool drop_behind = false;
  // Turn the operating system's readahead off: the daemon reads whole samples and prefetches by
  // itself, where it can count what was used.
  bool random_access = false;
};

// What an origin can do of OriginAdvice.
struct OriginCapabilities {
  bool direct_io = false;
  bool drop_behind = false;
  bool random_access = false;
};

class Origin {
 public:
  virtual ~Origin() = default;

  // Adds `spec`'s shards as tree `tree`, each checked as it is added (present, the size the
  // manifest says, its magic), with no advice taken for them yet. All or nothing: after an
  // error no shard of the tree is kept and `tree` may be added again. AlreadyExists if `tree`
  // is there already.
  virtual Status AddTree(uint32_t tree, const TreeSpec& spec) = 0;
  // The bytes shard `ref` holds; NotFound for a shard never added.
  virtual Result<uint64_t> ShardSize(ShardRef ref) const = 0;
  // The shard as messages name it, relative to the root: "shard-00000.mdb",
  // "views/256/shard-00000.mdb" ("tree T shard S" for one never added).
  virtual std::string ShardName(ShardRef ref) const = 0;
  // `len` bytes at `offset` of shard `ref`, all of them: a read that ends early is an error,
  // never fewer bytes. InvalidArgument outside the shard.
  virtual Result<OriginBytes> ReadSpan(ShardRef ref, uint64_t offset, size_t len) = 0;

  virtual OriginCapabilities Capabilities() const = 0;
  // Takes `advice` for the trees added so far (a tree added later is read without advice until
  // the next call); the parts the origin has no capability for are ignored.
  virtual void Advise(const OriginAdvice& advice) = 0;

  // What the requests to a remote store did (remote_stats.h); nothing for an origin that sends
  // no requests (local files).
  virtual std::optional<RemoteStatsSnapshot> RequestStats() const { return std::nullopt; }
};

// An origin that passes every call to the one it wraps: the base of origins that change a
// little (a delay, a fault, a count), as LevelDB's EnvWrapper.
class OriginWrapper : public Origin {
 public:
  explicit OriginWrapper(std::unique_ptr<Origin> target) : target_(std::move(target)) {}

  Status AddTree(uint32_t tree, const TreeSpec& spec) override {
    return target_->AddTree(tree, spec);
  }
  Result<uint64_t> ShardSize(ShardRef ref) const override { return target_->ShardSize(ref); }
  std::string ShardName(ShardRef ref) const override { return target_->ShardName(ref); }
  Result<OriginBytes> ReadSpan(ShardRef ref, uint64_t offset, size_t len) override {
    return target_->ReadSpan(ref, offset, len);
  }
  OriginCapabilities Capabilities() const override { return target_->Capabilities(); }
  void Advise(const OriginAdvice& advice) override { target_->Advise(advice); }
  std::optional<RemoteStatsSnapshot> RequestStats() const override {
    return target_->RequestStats();
  }

  Origin& target() { return *target_; }

 private:
  const std::unique_ptr<Origin> target_;
};

}  // namespace mmfs::origin
