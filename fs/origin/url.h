// URLs as users type them and as messages show them.
//
// A dataset is named by a local path or by a URL of a scheme mmfs reads: http://, https:// and
// s3://. RFC 3986 makes a scheme case-insensitive, so "HTTP://host/ds" is read as
// "http://host/ds": the scheme is lower-cased, which also gives a dataset one local copy however
// its scheme was typed. Anything else that looks like a URL is refused, naming the scheme and
// what is read instead: taken as a local path, "ftp://host/ds" or "http:/host/ds" would fail
// with "No such file or directory", which names neither the scheme nor the missing slash.
//
// A credential never reaches a message: RedactUrl hides the user name and password of a URL
// ("http://alice:secret@host/ds" -> "http://***@host/ds"). mmfs refuses such URLs, and the
// refusal itself must not print what it refuses; every message that shows a URL the user typed
// shows it through RedactUrl. (URLs mmfs builds itself start from a base that would have been
// refused with one, so they hold none.)
//
// Thread-safety: pure functions of their arguments.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace mmfs::origin {

// The scheme `text` starts with, lower-cased ("http" for "HTTP://h/x"): RFC 3986's letter, then
// letters, digits, '+', '-' or '.', then ':'. "" when it starts with none (a path).
std::string UrlScheme(std::string_view text);

// `where` as mmfs opens it: a URL of a scheme mmfs reads, with the scheme lower-cased; anything
// that is not a URL (a local path), as it is. InvalidArgument for a URL of another scheme
// ("ftp://h/x", "file:///x") and for a scheme mmfs reads without its "//" ("http:/h/x",
// "s3:bucket/x"), naming the scheme and what mmfs reads.
Result<std::string> DatasetLocation(const std::string& where);

// `text` with the user name and password of the URL it holds replaced by "***": the part of the
// authority (after "SCHEME://", up to the first '/', '?' or '#') before its last '@' or "%40".
// Text that is not a URL comes back as it is.
std::string RedactUrl(std::string_view text);

}  // namespace mmfs::origin
