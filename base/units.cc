#include "base/units.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace mmfs {

Result<uint64_t> ParseSize(std::string_view text, SizeProblem* problem) {
  const std::string s(text);
  auto fail = [&](SizeProblem why, const std::string& message) -> Status {
    if (problem != nullptr) *problem = why;
    return Status::InvalidArgument(message);
  };
  if (problem != nullptr) *problem = SizeProblem::kNone;
  size_t i = 0;
  auto digits = [&] {
    const size_t start = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) != 0) ++i;
    return i > start;
  };
  bool number = digits();
  if (number && i < s.size() && s[i] == '.') {
    ++i;
    number = digits();
  }
  const size_t number_end = i;
  std::string unit;
  for (; number && i < s.size(); ++i) {
    if (std::isalpha(static_cast<unsigned char>(s[i])) == 0) number = false;
    unit += static_cast<char>(std::tolower(static_cast<unsigned char>(s[i])));
  }
  if (!number) {
    return fail(SizeProblem::kNotASize, "not a size: '" + s + "' (expected e.g. 4096, 64K, 1.5G)");
  }
  double mult = 1;
  if (unit.empty() || unit == "b") {
    mult = 1;
  } else if (unit == "k" || unit == "kb" || unit == "kib") {
    mult = 1024.0;
  } else if (unit == "m" || unit == "mb" || unit == "mib") {
    mult = 1024.0 * 1024;
  } else if (unit == "g" || unit == "gb" || unit == "gib") {
    mult = 1024.0 * 1024 * 1024;
  } else if (unit == "t" || unit == "tb" || unit == "tib") {
    mult = 1024.0 * 1024 * 1024 * 1024;
  } else {
    return fail(SizeProblem::kUnknownUnit, "unknown size suffix in '" + s + "' (use K, M, G or T)");
  }
  // Digits and one point only: strtod reads exactly them (a huge one as infinity).
  const double bytes = std::strtod(s.substr(0, number_end).c_str(), nullptr) * mult;
  if (!std::isfinite(bytes) || bytes > 1.8e19) {
    return fail(SizeProblem::kTooLarge, "size too large: '" + s + "'");
  }
  return static_cast<uint64_t>(bytes);
}

std::string FormatBytes(uint64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double v = static_cast<double>(bytes);
  int unit = 0;
  while (v >= 1024 && unit < 5) {
    v /= 1024;
    ++unit;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, v < 10 ? "%.2f %s" : (v < 100 ? "%.1f %s" : "%.0f %s"), v,
                kUnits[unit]);
  return buf;
}

std::string FormatDuration(double seconds) {
  char buf[48];
  if (seconds < 1e-3) {
    std::snprintf(buf, sizeof buf, "%.0f us", seconds * 1e6);
  } else if (seconds < 1) {
    std::snprintf(buf, sizeof buf, "%.1f ms", seconds * 1e3);
  } else if (seconds < 120) {
    std::snprintf(buf, sizeof buf, "%.2f s", seconds);
  } else {
    auto total = static_cast<uint64_t>(seconds);
    std::snprintf(buf, sizeof buf, "%llu min %llu s", static_cast<unsigned long long>(total / 60),
                  static_cast<unsigned long long>(total % 60));
  }
  return buf;
}

std::string FormatCount(uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  int since_comma = static_cast<int>(digits.size() % 3);
  if (since_comma == 0) since_comma = 3;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && since_comma == 0) {
      out += ',';
      since_comma = 3;
    }
    out += digits[i];
    --since_comma;
  }
  return out;
}

std::string FormatPercent(uint64_t part, uint64_t whole) {
  if (whole == 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%",
                100.0 * static_cast<double>(part) / static_cast<double>(whole));
  return buf;
}

}  // namespace mmfs
