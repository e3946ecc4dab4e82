// Names from a dataset as messages show them: one line of text, with no byte that a terminal
// would act on.
//
// A dataset's names (its paths, the shard and index files its manifest lists) are whatever whoever
// made it wrote, and a remote dataset's come from a server: ESC would recolour or rewrite the
// user's terminal, CR would overwrite the line, LF would start one that looks like another
// finding. Every message that names something of a dataset names it through Printable. It lives
// here, in the lowest layer that names such things (an origin's ShardName), so that the format
// reader and the command line use the same one.
//
// Thread-safety: a pure function.
#pragma once

#include <string>
#include <string_view>

namespace mmfs::origin {

// `text` with control characters (\n, \t, \r, \xHH for the others), DEL and backslash escaped;
// UTF-8 and every other byte kept.
std::string Printable(std::string_view text);

}  // namespace mmfs::origin
