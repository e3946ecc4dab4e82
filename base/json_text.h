// JSON text that never throws. File names and paths may be any bytes, and nlohmann::json throws
// on strings that are not UTF-8 when writing them; here such bytes become U+FFFD instead, so a
// strange name can never take down the daemon (stats) or a pack (manifest, checkpoint).
//
// Thread-safety: a pure function.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace mmfs {

inline std::string JsonText(const nlohmann::json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace mmfs
