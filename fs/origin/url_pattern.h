// URL patterns as WebDataset and img2dataset write them: "https://host/shards/{00000..00099}.tar"
// names 100 shards. ExpandBraceRanges turns such a pattern into the list of URLs it names, for
// packing a dataset straight from a web server that cannot list its files.
//
// A numeric range {A..B} counts from A to B (both included). As bash pads them (and Python's
// braceexpand, which WebDataset uses): when A or B has a leading zero, every number is
// zero-padded to the wider one's width ({00000..00099}; {01..100}: 001 ... 100; {1..010}:
// 001 ... 010); otherwise not ({0..10}: 0 ... 10). A list {a,b,c} names its
// items in order. Several groups make the cartesian product, the leftmost varying slowest (as
// bash expands them). Text outside braces is kept as it is; there is no escape and no nesting.
//
// Thread-safety: pure functions of their arguments.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace mmfs::origin {

// The most URLs one pattern may name: far above any real dataset's shards (img2dataset's are
// thousands), low enough that a typo ({0..99999999}) is refused rather than filling memory.
inline constexpr uint64_t kMaxPatternUrls = 1'000'000;

// The strings `pattern` names, in order; `pattern` itself when it has no braces.
// InvalidArgument naming the pattern and the problem: a '{' without its '}' or a '}' without its
// '{', a '{' inside braces, a group that is neither A..B with decimal numbers nor a list with a
// ',', a range whose start is above its end, more than kMaxPatternUrls strings in all.
Result<std::vector<std::string>> ExpandBraceRanges(const std::string& pattern);

}  // namespace mmfs::origin
