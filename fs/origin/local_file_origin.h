// LocalFileOrigin: the shards of a dataset and of its views as files on a local filesystem.
//
// It owns every shard descriptor. A tree's shards are opened when the tree is added, never
// through a symbolic link (dataset_file.h), each checked against its manifest (size, LMDB magic),
// so that a mount costs the same whatever the number of files and a damaged shard is refused
// before anything is served. Reads are pread at the offsets the index records.
//
// Advice (origin.h), all of which it can honour:
// - direct I/O: each shard opened a second time with O_DIRECT; a read covers the whole aligned
//   blocks around the bytes asked for, into an aligned buffer, past the page cache. The blocks
//   are as small as the filesystem allows (statx STATX_DIOALIGN, often 512 bytes; 4 KiB when it
//   does not say): each read's rounding is bytes of the origin read for nothing. Where the
//   filesystem refuses O_DIRECT (tmpfs, some FUSE filesystems: at open or at the first read)
//   that tree's reads stay buffered.
// - drop-behind: every kDropEveryBytes read from a shard, the shard's whole page cache is
//   dropped (POSIX_FADV_DONTNEED). Per-read advice does not work: the page cache holds large
//   folios (up to 2 MiB) and keeps any folio only partly inside the range, and widening every
//   call to 2 MiB costs more than the read.
// - random access: the kernel's readahead on the shards is turned off (POSIX_FADV_RANDOM).
//
// Ownership: owns the shard descriptors; ReadSpan's bytes are the caller's.
// Thread-safety: as Origin (origin.h): reads from any number of threads; AddTree and Advise
// before the origin is shared.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/file_util.h"
#include "fs/origin/origin.h"

namespace mmfs::origin {

class LocalFileOrigin final : public Origin {
 public:
  // Shards of trees under `root` (a dataset's directory); no tree yet.
  explicit LocalFileOrigin(std::string root);
  ~LocalFileOrigin() override;
  LocalFileOrigin(const LocalFileOrigin&) = delete;
  LocalFileOrigin& operator=(const LocalFileOrigin&) = delete;

  Status AddTree(uint32_t tree, const TreeSpec& spec) override;
  Result<uint64_t> ShardSize(ShardRef ref) const override;
  std::string ShardName(ShardRef ref) const override;
  Result<OriginBytes> ReadSpan(ShardRef ref, uint64_t offset, size_t len) override;
  OriginCapabilities Capabilities() const override;
  void Advise(const OriginAdvice& advice) override;

  const std::string& root() const { return root_; }
  // Whether tree `tree` is read past the page cache now, and the offset alignment of those
  // reads (0 while they are off).
  bool direct_reads(uint32_t tree) const;
  uint32_t direct_alignment(uint32_t tree) const;

  static constexpr uint64_t kDropEveryBytes = 128ull << 20;

 private:
  struct Shard {
    std::string name;  // relative to the root, for messages
    std::string path;  // root/name
    uint64_t size = 0;
    UniqueFd fd;
    UniqueFd direct_fd;  // O_DIRECT; invalid unless the tree's direct reads were enabled
    std::atomic<uint64_t> since_drop{0};  // bytes read since its page cache was last dropped
  };
  struct Tree {
    std::unique_ptr<Shard[]> shards;
    size_t shard_count = 0;
    OriginAdvice advice;  // as the last Advise after the tree was added said
    std::atomic<bool> direct_ok{false};
    // Direct I/O alignment of file offsets and lengths, and of the buffer.
    uint32_t offset_align = 4096, mem_align = 4096;
  };
  const Tree* FindTree(uint32_t tree) const;
  Shard* Find(ShardRef ref) const;
  // Opens `t`'s shards a second time with O_DIRECT; leaves `t` buffered if any open fails.
  static void EnableDirectReads(Tree& t);
  static void AdviseRandom(const Tree& t);
  // Counts `bytes` read from `s`; drops its page cache every kDropEveryBytes.
  static void NoteRead(Shard& s, uint64_t bytes);

  const std::string root_;
  std::vector<std::unique_ptr<Tree>> trees_;  // by tree number; null where none was added
};

}  // namespace mmfs::origin
