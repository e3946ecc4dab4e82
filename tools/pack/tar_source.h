// Reads WebDataset / img2dataset tar shards (`.tar`, `.tar.gz`, `.tgz`) as a stream of members,
// with libarchive: no extraction to disk, one pass, memory bounded by the largest member.
//
// Only regular files come out. Everything else is reported and skipped, never followed or
// written: directories (implied by member paths), symbolic and hard links, devices, FIFOs.
// Member paths are normalised (leading "./" and "." components dropped) and refused when they
// could escape or cannot be a file name: absolute paths, ".." components, empty paths, a
// component over 255 bytes.
//
// An archive comes from a local file (Open) or from any source of consecutive blocks of its
// bytes (OpenStream: an object read from a bucket, fs/origin/object_stream.h), which is read once,
// front to back, never seeked.
//
// Thread-safety: one TarReader per thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "tools/pack/reporter.h"

struct archive;

namespace mmfs::pack {

struct TarMember {
  std::string path;  // normalised, relative, '/'-separated
  uint32_t mode = 0;  // permission bits only
  int64_t mtime_ns = 0;
  std::string data;
};

// True for names ending in .tar, .tar.gz or .tgz.
bool IsTarName(std::string_view name);
// "00012.tar.gz" -> "00012".
std::string TarStem(std::string_view name);

// Checks a member path and returns it normalised, or InvalidArgument with the reason.
Result<std::string> NormaliseMemberPath(std::string_view path);

class TarReader {
 public:
  // Members larger than `max_member_bytes` are skipped with a warning.
  static Result<std::unique_ptr<TarReader>> Open(const std::string& path, PackReporter& reporter,
                                                 uint64_t max_member_bytes = 1ull << 30);
  // The next bytes of an archive, in order: a view valid until the next call, empty at the end.
  using BlockSource = std::function<Result<std::string_view>()>;
  // Reads the archive `name` (what messages call it: the object's URL) from `next`; an error of
  // `next` ends the archive and comes back from Next as it is, not as damage.
  static Result<std::unique_ptr<TarReader>> OpenStream(std::string name, BlockSource next,
                                                       PackReporter& reporter,
                                                       uint64_t max_member_bytes = 1ull << 30);
  ~TarReader();
  TarReader(const TarReader&) = delete;
  TarReader& operator=(const TarReader&) = delete;

  // The next regular-file member; false at the end of the archive. With `read_data` false only
  // its path, mode and time are filled in (`data` is left empty) and its bytes are skipped.
  Result<bool> Next(TarMember* member, bool read_data = true);
  // Bytes of the archive file consumed so far (compressed bytes for .tar.gz).
  uint64_t bytes_consumed() const;
  uint64_t skipped() const { return skipped_; }

 private:
  TarReader(std::string path, PackReporter& reporter, uint64_t max_member_bytes)
      : path_(std::move(path)), reporter_(reporter), max_member_bytes_(max_member_bytes) {}
  void Skip(const std::string& member, const std::string& why);
  // Damage reported by libarchive, unless the block source failed: then its own error.
  Status Damage(std::string what);
  // libarchive's read callback for OpenStream (archive_read_callback; la_ssize_t is ssize_t).
  static ssize_t ReadBlock(struct archive* a, void* self, const void** buffer);

  std::string path_;
  PackReporter& reporter_;
  uint64_t max_member_bytes_;
  void* archive_ = nullptr;  // owned struct archive*
  BlockSource source_;       // OpenStream only
  Status source_error_;      // the first error of source_
  uint64_t skipped_ = 0;
};

}  // namespace mmfs::pack
