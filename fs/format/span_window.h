// SpanWindow: turns the spans of the index a directory walk is about to read into few large
// reads ahead of it, so a cold walk of a million entries waits on a few reads, not thousands.
//
// A walk lists directories in index order (os.walk, find, ImageFolder over class folders:
// breadth-first numbering puts sibling directories' children in adjacent runs), and each run of
// a 1,000-entry directory is about 64 KB of records and 12 KB of names: asking the kernel for
// each run on its own is two reads a directory, each a doorbell and a wait. Once a run follows
// the one before it (a walk moving forward), the run and what follows it up to `ahead` bytes are
// asked for, and then nothing until a run leaves that window: the same bytes in one request per
// window. A run that does not follow the last (a lookup elsewhere, a depth-first walk stepping
// between levels) is asked for alone, as before: no read-ahead where nothing says it is wanted.
//
// Offsets are bytes from the start of the spanned mapping.
// Thread-safety: Want is thread-safe (one mutex; called once per looked-up directory).
#pragma once

#include <algorithm>
#include <cstdint>
#include <mutex>

namespace mmfs::format {

class SpanWindow {
 public:
  struct Span {
    uint64_t begin = 0, end = 0;
    bool empty() const { return begin >= end; }
  };

  explicit SpanWindow(uint64_t ahead) : ahead_(ahead) {}

  // [begin, end) of a mapping of `limit` bytes is about to be read: what to ask the kernel to
  // read, or an empty span when what was last asked for already holds it.
  Span Want(uint64_t begin, uint64_t end, uint64_t limit) {
    end = std::min(end, limit);
    if (begin >= end) return {};
    std::lock_guard<std::mutex> lock(mu_);
    // Starts where the last run ended, or a little after (empty directories, small gaps).
    const bool follows = begin >= last_.begin && begin <= last_.end + ahead_ / 16;
    last_ = {begin, end};
    if (begin >= window_.begin && end <= window_.end) return {};
    window_ = {begin, follows ? std::min(limit, std::max(end, begin + ahead_)) : end};
    return window_;
  }

 private:
  const uint64_t ahead_;
  std::mutex mu_;
  Span last_;    // the last run wanted
  Span window_;  // the last span asked for
};

}  // namespace mmfs::format
