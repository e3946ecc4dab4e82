// manifest.json: what a dataset directory contains and how it was made.
//
// The manifest is written last by the packer, so a directory without one is never mistaken for a
// complete dataset. Parsing checks the format name and version and every field it needs, and
// reports a clear error for a foreign or newer file.
//
// Thread-safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace mmfs::format {

struct ShardInfo {
  std::string file;         // "shard-00000.mdb", relative to the dataset directory
  uint64_t size = 0;        // bytes of the shard file
  uint64_t checksum = 0;    // XXH3-64 of the whole shard file
  uint64_t first_sample = 0;
  uint64_t samples = 0;
  uint64_t data_bytes = 0;  // bytes of file contents stored in this shard
};

struct Manifest {
  uint32_t version = 0;
  std::string created;      // UTC, ISO 8601
  std::string tool;         // "mmfs 0.1.0"
  uint64_t entries = 0;
  uint64_t files = 0;
  uint64_t directories = 0;
  uint64_t symlinks = 0;
  uint64_t samples = 0;
  uint64_t total_bytes = 0;  // bytes of all regular files
  uint64_t skipped = 0;      // inputs left out (bad images with --on-bad skip, sockets, ...)
  std::string index_file;
  uint64_t index_size = 0;
  uint64_t index_checksum = 0;
  std::vector<ShardInfo> shards;
  std::string source_layout;  // "folder"
  std::vector<std::string> source_paths;
  uint64_t shard_size = 0;    // pack option --shard-size
  std::string on_bad;         // pack option --on-bad

  std::string ToJson() const;
  // `origin` names the file in error messages.
  static Result<Manifest> Parse(const std::string& text, const std::string& origin);
};

}  // namespace mmfs::format
