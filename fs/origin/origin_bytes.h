// OriginBytes: bytes read from an origin, in a buffer they own.
//
// A local file origin reads into a buffer of its choosing (whole aligned blocks for direct
// reads, the bytes asked for in the middle) and hands it over without a copy; another origin
// (a fake in a test, a remote store) hands over a string.
//
// Ownership: owns its buffer or string; movable, not copyable.
// Thread-safety: a value type; const methods may be called from any number of threads.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <string>

namespace mmfs::origin {

class OriginBytes {
 public:
  OriginBytes() = default;
  explicit OriginBytes(std::string bytes) : text_(std::move(bytes)) {}
  // An uninitialised buffer of at least `capacity` bytes (at least one), aligned to
  // `alignment` (a power of two; 0: malloc's own), its size rounded up to a multiple of it.
  // Not zero-filled: the read overwrites it (callgrind: zeroing cost as much as hashing).
  // buffer() is null when memory is short.
  static OriginBytes Allocate(size_t capacity, size_t alignment = 0);

  // The whole buffer, for the origin to read into (null for a string).
  char* buffer() { return buffer_.get(); }
  // Marks [buffer() + offset, buffer() + offset + size) as the bytes read.
  void Keep(size_t offset, size_t size) {
    offset_ = offset;
    size_ = size;
  }

  const char* data() const { return buffer_ != nullptr ? buffer_.get() + offset_ : text_.data(); }
  size_t size() const { return buffer_ != nullptr ? size_ : text_.size(); }

 private:
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  std::unique_ptr<char, Free> buffer_;
  size_t offset_ = 0;
  size_t size_ = 0;
  std::string text_;  // used when buffer_ is null
};

}  // namespace mmfs::origin
