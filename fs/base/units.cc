#include "fs/base/units.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <string>

namespace mmfs {

Result<uint64_t> ParseSize(std::string_view text) {
  std::string s(text);
  size_t pos = 0;
  double value = 0;
  try {
    value = std::stod(s, &pos);
  } catch (...) {
    return Status::InvalidArgument("not a size: '" + s + "' (expected e.g. 4096, 64K, 1G)");
  }
  if (value < 0 || !std::isfinite(value)) {
    return Status::InvalidArgument("not a size: '" + s + "'");
  }
  std::string suffix;
  for (size_t i = pos; i < s.size(); ++i) suffix += static_cast<char>(std::tolower(s[i]));
  double mult = 1;
  if (suffix.empty() || suffix == "b") {
    mult = 1;
  } else if (suffix == "k" || suffix == "kb" || suffix == "kib") {
    mult = 1024.0;
  } else if (suffix == "m" || suffix == "mb" || suffix == "mib") {
    mult = 1024.0 * 1024;
  } else if (suffix == "g" || suffix == "gb" || suffix == "gib") {
    mult = 1024.0 * 1024 * 1024;
  } else if (suffix == "t" || suffix == "tb" || suffix == "tib") {
    mult = 1024.0 * 1024 * 1024 * 1024;
  } else {
    return Status::InvalidArgument("unknown size suffix in '" + s + "' (use K, M, G or T)");
  }
  double bytes = value * mult;
  if (bytes > 1.8e19) return Status::InvalidArgument("size too large: '" + s + "'");
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

}  // namespace mmfs
