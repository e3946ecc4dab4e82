#include "tools/pack/tar_source.h"

#include <archive.h>
#include <archive_entry.h>
#include <locale.h>

#include <exception>

namespace mmfs::pack {

namespace {
bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
archive* A(void* p) { return static_cast<archive*>(p); }

// pax headers (what Python's tarfile writes for non-ASCII names) hold UTF-8 paths, which
// libarchive converts to the current locale's charset: under the C locale every such name came
// with "Pathname can't be converted from UTF-8 to current locale", though the bytes it kept were
// right. Reading under C.UTF-8 (this thread only, for the duration of a libarchive call) makes
// the conversion the identity; names that are not valid UTF-8 still warn, as they should. Without
// a C.UTF-8 locale (glibc has one built in since 2.35) nothing changes.
class ScopedUtf8Locale {
 public:
  ScopedUtf8Locale() {
    static locale_t utf8 = ::newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(0));
    if (utf8 != static_cast<locale_t>(0)) previous_ = ::uselocale(utf8);
  }
  ~ScopedUtf8Locale() {
    if (previous_ != static_cast<locale_t>(0)) ::uselocale(previous_);
  }
  ScopedUtf8Locale(const ScopedUtf8Locale&) = delete;
  ScopedUtf8Locale& operator=(const ScopedUtf8Locale&) = delete;

 private:
  locale_t previous_ = static_cast<locale_t>(0);
};
// libarchive may have no message to give (NULL).
std::string ErrorText(archive* a) {
  const char* e = archive_error_string(a);
  return e != nullptr ? e : "unknown error";
}
}  // namespace

bool IsTarName(std::string_view name) {
  return EndsWith(name, ".tar") || EndsWith(name, ".tar.gz") || EndsWith(name, ".tgz");
}

std::string TarStem(std::string_view name) {
  for (std::string_view ext : {".tar.gz", ".tgz", ".tar"}) {
    if (EndsWith(name, ext)) return std::string(name.substr(0, name.size() - ext.size()));
  }
  return std::string(name);
}

Result<std::string> NormaliseMemberPath(std::string_view path) {
  if (path.empty()) return Status::InvalidArgument("empty path");
  if (path.front() == '/') return Status::InvalidArgument("absolute path");
  std::string out;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    std::string_view part = path.substr(start, slash - start);
    start = slash + 1;
    if (part.empty() || part == ".") continue;  // "./a", "a//b", "a/"
    if (part == "..") return Status::InvalidArgument("'..' in the path");
    if (part.size() > 255) return Status::InvalidArgument("a name longer than 255 bytes");
    if (!out.empty()) out += '/';
    out += part;
  }
  if (out.empty()) return Status::InvalidArgument("no file name");
  return out;
}

Result<std::unique_ptr<TarReader>> TarReader::Open(const std::string& path,
                                                   PackReporter& reporter,
                                                   uint64_t max_member_bytes) {
  ScopedUtf8Locale utf8;  // libarchive takes the charset it converts to at its first use
  std::unique_ptr<TarReader> r(new TarReader(path, reporter, max_member_bytes));
  archive* a = archive_read_new();
  if (a == nullptr) return Status::ResourceExhausted("archive_read_new");
  r->archive_ = a;
  archive_read_support_filter_gzip(a);
  archive_read_support_format_tar(a);
  if (archive_read_open_filename(a, path.c_str(), 1 << 20) != ARCHIVE_OK) {
    return Status::InvalidArgument(path + ": cannot read as a tar archive: " +
                                   ErrorText(a));
  }
  return r;
}

Result<std::unique_ptr<TarReader>> TarReader::OpenStream(std::string name, BlockSource next,
                                                         PackReporter& reporter,
                                                         uint64_t max_member_bytes) {
  ScopedUtf8Locale utf8;
  std::unique_ptr<TarReader> r(new TarReader(std::move(name), reporter, max_member_bytes));
  r->source_ = std::move(next);
  archive* a = archive_read_new();
  if (a == nullptr) return Status::ResourceExhausted("archive_read_new");
  r->archive_ = a;
  archive_read_support_filter_gzip(a);
  archive_read_support_format_tar(a);
  if (archive_read_open(a, r.get(), nullptr, &TarReader::ReadBlock, nullptr) != ARCHIVE_OK) {
    if (!r->source_error_.ok()) return r->source_error_;
    return Status::InvalidArgument(r->path_ + ": cannot read as a tar archive: " + ErrorText(a));
  }
  return r;
}

ssize_t TarReader::ReadBlock(struct archive* a, void* self, const void** buffer) {
  auto* r = static_cast<TarReader*>(self);
  if (!r->source_error_.ok()) return -1;
  // Called from libarchive's C code: nothing may unwind through it.
  try {
    Result<std::string_view> block = r->source_();
    if (block.ok()) {
      *buffer = block->data();
      return static_cast<ssize_t>(block->size());
    }
    r->source_error_ = block.status();
  } catch (const std::exception& e) {
    r->source_error_ = Status::ResourceExhausted(r->path_ + ": reading the archive: " + e.what());
  }
  archive_set_error(a, EIO, "%s", r->source_error_.message().c_str());
  return -1;
}

Status TarReader::Damage(std::string what) {
  if (!source_error_.ok()) return source_error_;
  return Status::Corruption(std::move(what));
}

TarReader::~TarReader() {
  if (archive_ != nullptr) archive_read_free(A(archive_));
}

uint64_t TarReader::bytes_consumed() const {
  la_int64_t n = archive_filter_bytes(A(archive_), -1);
  return n > 0 ? static_cast<uint64_t>(n) : 0;
}

void TarReader::Skip(const std::string& member, const std::string& why) {
  ++skipped_;
  reporter_.Warning("skipping " + path_ + ": member '" + member + "': " + why);
}

Result<bool> TarReader::Next(TarMember* member, bool read_data) {
  ScopedUtf8Locale utf8;
  archive* a = A(archive_);
  for (;;) {
    archive_entry* entry = nullptr;
    int rc = archive_read_next_header(a, &entry);
    if (rc == ARCHIVE_EOF) return false;
    if (rc == ARCHIVE_WARN) {
      reporter_.Warning(path_ + ": " + ErrorText(a));
    } else if (rc != ARCHIVE_OK) {
      return Damage(path_ + ": damaged tar archive (" + ErrorText(a) + ")");
    }
    const char* raw = archive_entry_pathname(entry);
    std::string name = raw != nullptr ? raw : "";
    auto type = archive_entry_filetype(entry);
    if (type == AE_IFDIR) continue;  // directories come from member paths
    if (archive_entry_hardlink(entry) != nullptr) {
      Skip(name, "a hard link (links are never followed)");
      continue;
    }
    if (type != AE_IFREG) {
      Skip(name, type == AE_IFLNK ? "a symbolic link (links are never followed)"
                                  : "not a regular file (device, FIFO or socket)");
      continue;
    }
    auto normal = NormaliseMemberPath(name);
    if (!normal.ok()) {
      Skip(name, normal.status().message());
      continue;
    }
    la_int64_t size = archive_entry_size_is_set(entry) ? archive_entry_size(entry) : -1;
    if (size > 0 && static_cast<uint64_t>(size) > max_member_bytes_) {
      Skip(name, "larger than " + std::to_string(max_member_bytes_) + " bytes");
      continue;
    }
    member->path = std::move(normal).value();
    member->mode = static_cast<uint32_t>(archive_entry_perm(entry)) & 0777;
    if (member->mode == 0) member->mode = 0644;
    member->mtime_ns = static_cast<int64_t>(archive_entry_mtime(entry)) * 1000000000 +
                       archive_entry_mtime_nsec(entry);
    member->data.clear();
    if (!read_data) {
      // A plain tar seeks past the data; a compressed one decompresses it.
      if (archive_read_data_skip(a) != ARCHIVE_OK) {
        return Damage(path_ + ": member '" + name + "': " + ErrorText(a));
      }
      return true;
    }
    if (size > 0) member->data.reserve(static_cast<size_t>(size));
    char buf[1 << 16];
    for (;;) {
      la_ssize_t n = archive_read_data(a, buf, sizeof buf);
      if (n < 0) return Damage(path_ + ": member '" + name + "': " + ErrorText(a));
      if (n == 0) break;
      if (member->data.size() + static_cast<size_t>(n) > max_member_bytes_) {
        return Status::InvalidArgument(path_ + ": member '" + name + "' is larger than " +
                                       std::to_string(max_member_bytes_) + " bytes");
      }
      member->data.append(buf, static_cast<size_t>(n));
    }
    if (size >= 0 && member->data.size() != static_cast<uint64_t>(size)) {
      return Damage(path_ + ": member '" + name + "' is truncated (" +
                                std::to_string(member->data.size()) + " of " +
                                std::to_string(size) + " bytes)");
    }
    return true;
  }
}

}  // namespace mmfs::pack
