#include "fs/origin/url_pattern.h"

#include <algorithm>
#include <charconv>

namespace mmfs::origin {
namespace {

// One part of a pattern: its choices (text outside braces is a part of one choice).
using Part = std::vector<std::string>;

bool AllDigits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// The numbers of the range "A..B" (`body`, the text between the braces).
Result<Part> ExpandRange(const std::string& pattern, const std::string& body, size_t dots) {
  const std::string first = body.substr(0, dots), last = body.substr(dots + 2);
  const std::string group = "'{" + body + "}'";
  if (!AllDigits(first) || !AllDigits(last)) {
    return Status::InvalidArgument(pattern + ": " + group +
                                   " is not a range of decimal numbers ({A..B})");
  }
  uint64_t a = 0, b = 0;
  // At most 18 digits: every value, and the count below, fit in 64 bits.
  if (first.size() > 18 || last.size() > 18) {
    return Status::InvalidArgument(pattern + ": " + group + " has a number too large");
  }
  std::from_chars(first.data(), first.data() + first.size(), a);
  std::from_chars(last.data(), last.data() + last.size(), b);
  if (a > b) {
    return Status::InvalidArgument(pattern + ": " + group + " starts above its end");
  }
  if (b - a + 1 > kMaxPatternUrls) {
    return Status::InvalidArgument(pattern + ": " + group + " names " + std::to_string(b - a + 1) +
                                   " values, more than the " + std::to_string(kMaxPatternUrls) +
                                   " a pattern may name");
  }
  // Zero-padded as bash pads (and Python's braceexpand, which WebDataset uses): when either
  // number has a leading zero, every number to the wider one's width.
  const bool padded = (first.size() > 1 && first[0] == '0') || (last.size() > 1 && last[0] == '0');
  const size_t width = padded ? std::max(first.size(), last.size()) : 0;
  Part out;
  out.reserve(b - a + 1);
  for (uint64_t n = a;; ++n) {
    std::string s = std::to_string(n);
    if (s.size() < width) s.insert(0, width - s.size(), '0');
    out.push_back(std::move(s));
    if (n == b) break;
  }
  return out;
}

// The choices of the group `body` (between a '{' and its '}').
Result<Part> ExpandGroup(const std::string& pattern, const std::string& body) {
  if (const size_t dots = body.find(".."); dots != std::string::npos) {
    return ExpandRange(pattern, body, dots);
  }
  if (body.find(',') == std::string::npos) {
    return Status::InvalidArgument(pattern + ": '{" + body +
                                   "}' is neither a range {A..B} nor a list {a,b}");
  }
  Part out;
  size_t from = 0;
  for (;;) {
    const size_t comma = body.find(',', from);
    out.push_back(body.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  return out;
}

}  // namespace

Result<std::vector<std::string>> ExpandBraceRanges(const std::string& pattern) {
  std::vector<Part> parts;
  std::string text;  // the text since the last group
  uint64_t total = 1;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '}') {
      return Status::InvalidArgument(pattern + ": a '}' at byte " + std::to_string(i) +
                                     " closes no '{'");
    }
    if (c != '{') {
      text += c;
      continue;
    }
    const size_t close = pattern.find_first_of("{}", i + 1);
    if (close == std::string::npos || pattern[close] != '}') {
      return Status::InvalidArgument(
          pattern + ": the '{' at byte " + std::to_string(i) +
          (close == std::string::npos ? " is never closed" : " has another '{' inside it"));
    }
    MMFS_ASSIGN_OR_RETURN(Part group, ExpandGroup(pattern, pattern.substr(i + 1, close - i - 1)));
    // Checked before anything is expanded: each factor is at most kMaxPatternUrls, so the
    // product of two never overflows.
    total *= group.size();
    if (total > kMaxPatternUrls) {
      return Status::InvalidArgument(pattern + ": names more than " +
                                     std::to_string(kMaxPatternUrls) + " URLs");
    }
    parts.push_back(Part{std::move(text)});
    text.clear();
    parts.push_back(std::move(group));
    i = close;
  }
  parts.push_back(Part{std::move(text)});

  // The cartesian product, the leftmost part varying slowest.
  std::vector<std::string> out{""};
  for (const Part& part : parts) {
    if (part.size() == 1) {
      for (std::string& s : out) s += part[0];
      continue;
    }
    std::vector<std::string> next;
    next.reserve(out.size() * part.size());
    for (const std::string& s : out) {
      for (const std::string& choice : part) next.push_back(s + choice);
    }
    out = std::move(next);
  }
  return out;
}

}  // namespace mmfs::origin
