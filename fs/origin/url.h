// URLs as messages show them.
//
// A credential never reaches a message: RedactUrl hides the user name and password of a URL
// ("http://alice:secret@host/ds" -> "http://***@host/ds"). mmfs refuses such URLs, and the
// refusal itself must not print what it refuses; every message that shows a URL the user typed
// shows it through RedactUrl. (URLs mmfs builds itself come from a refused-if-credentialled base
// and hold none.)
//
// Thread-safety: pure functions of their arguments.
#pragma once

#include <string>
#include <string_view>

namespace mmfs::origin {

// The scheme `text` starts with, lower-cased ("http" for "HTTP://h/x"): RFC 3986's letter, then
// letters, digits, '+', '-' or '.', then ':'. "" when it starts with none (a path).
std::string UrlScheme(std::string_view text);

// `text` with the user name and password of the URL it holds replaced by "***": the part of the
// authority (after "SCHEME://", up to the first '/', '?' or '#') before its last '@' or "%40".
// Text that is not a URL comes back as it is.
std::string RedactUrl(std::string_view text);

}  // namespace mmfs::origin
