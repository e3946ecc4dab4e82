// Human-facing sizes and durations: parsing "--shard-size 1G" and printing "1.5 GiB", "2.3 s".
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace mmfs {

// Why a size did not parse (the error's message says it in words too).
enum class SizeProblem { kNone, kNotASize, kUnknownUnit, kTooLarge };

// Parses "4096", "64K", "1.5G", "2GiB", "512MB" (binary multiples: K = 1024), case-insensitive:
// digits, an optional fraction, an optional unit, and nothing else (no sign, space, exponent or
// hex), so "5x" or " -1" is never read as a number. `problem`, if given, says which error.
Result<uint64_t> ParseSize(std::string_view text, SizeProblem* problem = nullptr);

// "0 B", "999 B", "1.0 KiB", "12.3 MiB", "1.50 GiB".
std::string FormatBytes(uint64_t bytes);

// "850 us", "12.3 ms", "4.20 s", "3 min 12 s".
std::string FormatDuration(double seconds);

// "1,234,567".
std::string FormatCount(uint64_t n);

// `part` of `whole` as "12.3%"; "-" when `whole` is 0 (nothing to be a share of).
std::string FormatPercent(uint64_t part, uint64_t whole);

}  // namespace mmfs
