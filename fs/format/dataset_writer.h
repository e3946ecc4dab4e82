// Writing the pieces of a packed dataset: LMDB shard files and the index file.
//
// The packer (tools/pack) decides what goes where; this module only knows the bytes of
// fs/format/format.h. A ShardWriter appends sample records to one single-file LMDB environment and,
// when finished, reports the byte offset of each record's value inside the file, which the index
// stores so that the mount can serve a file with one pread.
//
// Thread-safety: a ShardWriter is used by one thread at a time.
#pragma once

#include <lmdb.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "fs/format/format.h"

namespace mmfs::format {

class ShardWriter {
 public:
  // Creates a new LMDB environment file at `path`; fails if it exists.
  static Result<std::unique_ptr<ShardWriter>> Create(const std::string& path);
  ~ShardWriter();
  ShardWriter(const ShardWriter&) = delete;
  ShardWriter& operator=(const ShardWriter&) = delete;

  // Appends the record of one sample: key = `sample` (big-endian), value = the members' bytes
  // concatenated in order.
  // REQUIRES: `sample` greater than every sample appended before.
  Status Append(uint64_t sample, std::span<const std::string_view> members);

  // Commits, syncs and closes the environment, then maps it read-only and returns the byte
  // offset inside the file of each record's value, in append order.
  Result<std::vector<uint64_t>> Finish();

  uint64_t data_bytes() const { return data_bytes_; }
  uint64_t samples() const { return samples_; }
  const std::string& path() const { return path_; }

 private:
  explicit ShardWriter(std::string path) : path_(std::move(path)) {}
  Status Lmdb(int rc, std::string_view what) const;
  Status BeginTxn();
  Status CommitTxn();
  // Commits and grows the map when `bytes` more might not fit.
  Status EnsureRoom(uint64_t bytes);

  std::string path_;
  MDB_env* env_ = nullptr;   // owned
  MDB_txn* txn_ = nullptr;   // owned; the open write transaction, if any
  MDB_dbi dbi_ = 0;
  uint64_t map_size_ = 0;
  uint64_t data_bytes_ = 0;
  uint64_t txn_bytes_ = 0;
  uint64_t samples_ = 0;
  uint64_t last_sample_ = 0;
  std::vector<uint64_t> keys_;
};

struct IndexFileInfo {
  uint64_t size = 0;
  uint64_t checksum = 0;  // XXH3-64 of the whole file
};

// Writes index.mmfs: header, `entries`, then `strings`; fsyncs it. The entries must be laid
// out as format.h says; IndexBuilder makes them so.
Result<IndexFileInfo> WriteIndexFile(const std::string& path,
                                     std::span<const EntryRecord> entries,
                                     std::string_view strings);

// Where a regular file's bytes are: what the index records besides its name, mode and time.
struct FileLocation {
  uint32_t shard = 0;
  uint32_t sample = 0;
  uint64_t data_offset = 0;  // of the file's bytes inside the shard file
  uint64_t size = 0;
  uint64_t checksum = 0;     // XXH3-64 of the contents
  uint16_t width = 0;        // images; 0 otherwise
  uint16_t height = 0;
};

// Numbers the entries of index.mmfs the way format.h lays them out, so that no writer has to
// know the rule: entry 0 is the root; entries are numbered breadth-first, so the children of
// each directory are one contiguous run, in name order, which the directory's record points at
// (data_offset = index of the first child, size = number of children); each child's `parent`
// is its directory's index. Entry i is inode i + 1 at mount time.
//
// The caller walks its tree breadth-first alongside the builder:
//
//   IndexBuilder index(root_mode, root_mtime_ns);
//   std::deque<const Node*> dirs = {&root};
//   while (index.NextDirectory()) {          // the root, then directories in the order added
//     const Node* dir = dirs.front(); dirs.pop_front();
//     for (const Node& child : dir->children)  // in name order
//       ... index.AddFile / AddSymlink / AddDirectory(child), dirs.push_back(&child) for a dir
//   }
//   index.Write(path);
//
// NextDirectory hands out the directories in the order they were added, which is what makes
// the numbering breadth-first; the Add calls check what the format needs of names (non-empty,
// at most kMaxNameLength bytes, strictly increasing within a directory) and the 2^32 entry limit.
//
// Thread-safety: used by one thread at a time.
class IndexBuilder {
 public:
  IndexBuilder(uint32_t root_mode, int64_t root_mtime_ns);

  // Starts the children of the next directory: the root first, then each directory in the
  // order AddDirectory added it. False when every directory added has had its turn.
  bool NextDirectory();

  // Add the next child of the directory NextDirectory started. `mode` holds the type bits, of
  // the kind added, and permission bits only: setuid, setgid and sticky bits are refused (and
  // masked off the root's), so no dataset this writes can ask a mount for them.
  // REQUIRES: NextDirectory returned true.
  Status AddFile(std::string_view name, uint32_t mode, int64_t mtime_ns,
                 const FileLocation& file);
  Status AddSymlink(std::string_view name, uint32_t mode, int64_t mtime_ns,
                    std::string_view target);
  // The new directory's children come after those of every directory added before it.
  Status AddDirectory(std::string_view name, uint32_t mode, int64_t mtime_ns);

  // Writes index.mmfs from the entries so far (WriteIndexFile).
  Result<IndexFileInfo> Write(const std::string& path) const;

  uint64_t entry_count() const { return entries_.size(); }

 private:
  // Appends the common part of a child's record; `*record` is the new entry.
  Status AddChild(std::string_view name, uint32_t mode, int64_t mtime_ns,
                  EntryRecord** record);

  std::vector<EntryRecord> entries_;
  std::string strings_;                // the name table: names and symlink targets
  std::vector<uint32_t> directories_;  // entry index of every directory, in the order added
  size_t next_directory_ = 0;          // in directories_: the next one NextDirectory starts
  bool started_ = false;               // NextDirectory has returned true
  uint32_t current_ = 0;  // entry index of the directory whose children are being added
};

// "0100644": a mode in octal with its type bits, for messages.
std::string OctalMode(uint32_t mode);

// Big-endian 8-byte LMDB key of a sample.
std::string SampleKey(uint64_t sample);

}  // namespace mmfs::format
