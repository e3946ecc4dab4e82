#include "fs/origin/local_file_origin.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "fs/origin/dataset_file.h"

namespace mmfs::origin {

LocalFileOrigin::LocalFileOrigin(std::string root) : root_(std::move(root)) {}

LocalFileOrigin::~LocalFileOrigin() = default;

OriginCapabilities LocalFileOrigin::Capabilities() const {
  OriginCapabilities c;
  c.direct_io = true;
  c.drop_behind = true;
  c.random_access = true;
  return c;
}

const LocalFileOrigin::Tree* LocalFileOrigin::FindTree(uint32_t tree) const {
  return tree < trees_.size() ? trees_[tree].get() : nullptr;
}

LocalFileOrigin::Shard* LocalFileOrigin::Find(ShardRef ref) const {
  const Tree* t = FindTree(ref.tree);
  if (t == nullptr || ref.shard >= t->shard_count) return nullptr;
  return &t->shards[ref.shard];
}

Status LocalFileOrigin::AddTree(uint32_t tree, const TreeSpec& spec) {
  if (FindTree(tree) != nullptr) {
    return Status::AlreadyExists(root_ + ": tree " + std::to_string(tree) + " is added already");
  }
  auto t = std::make_unique<Tree>();
  t->shard_count = spec.shards.size();
  t->shards = std::make_unique<Shard[]>(t->shard_count);
  for (size_t i = 0; i < t->shard_count; ++i) {
    const ShardSpec& want = spec.shards[i];
    Shard& s = t->shards[i];
    s.name = spec.place.empty() ? want.name : spec.place + "/" + want.name;
    s.path = root_ + "/" + s.name;
    s.size = want.size;
    auto fd = OpenDatasetFile(s.path);
    if (!fd.ok()) {
      return spec.cannot_open.empty() ? fd.status() : fd.status().WithContext(spec.cannot_open);
    }
    struct stat st;
    if (::fstat(fd->get(), &st) != 0) return Status::FromErrno(errno, "stat " + s.path);
    if (static_cast<uint64_t>(st.st_size) != want.size) {
      return Status::Corruption(s.path + ": size " + std::to_string(st.st_size) +
                                " bytes, the manifest says " + std::to_string(want.size) +
                                spec.size_hint);
    }
    if (spec.magic != 0) {
      uint32_t magic = 0;
      if (want.size < spec.magic_offset + sizeof magic) {
        return Status::Corruption(s.path + ": " + spec.bad_magic);
      }
      MMFS_RETURN_IF_ERROR(PreadFull(fd->get(), &magic, sizeof magic, spec.magic_offset, s.path));
      if (magic != spec.magic) return Status::Corruption(s.path + ": " + spec.bad_magic);
    }
    s.fd = std::move(fd).value();
  }
  if (trees_.size() <= tree) trees_.resize(static_cast<size_t>(tree) + 1);
  trees_[tree] = std::move(t);
  return Status::Ok();
}

Result<uint64_t> LocalFileOrigin::ShardSize(ShardRef ref) const {
  const Shard* s = Find(ref);
  if (s == nullptr) return Status::NotFound(ShardName(ref) + ": no such shard");
  return s->size;
}

std::string LocalFileOrigin::ShardName(ShardRef ref) const {
  if (const Shard* s = Find(ref)) return s->name;
  return "tree " + std::to_string(ref.tree) + " shard " + std::to_string(ref.shard);
}

void LocalFileOrigin::Advise(const OriginAdvice& advice) {
  for (const auto& t : trees_) {
    if (t == nullptr) continue;
    t->advice = advice;
    if (advice.random_access) AdviseRandom(*t);
    if (advice.direct_io && !t->direct_ok.load(std::memory_order_relaxed)) EnableDirectReads(*t);
  }
}

void LocalFileOrigin::AdviseRandom(const Tree& t) {
  for (size_t i = 0; i < t.shard_count; ++i) {
    ::posix_fadvise(t.shards[i].fd.get(), 0, 0, POSIX_FADV_RANDOM);
  }
}

void LocalFileOrigin::EnableDirectReads(Tree& t) {
  std::vector<UniqueFd> fds;
  for (size_t i = 0; i < t.shard_count; ++i) {
    auto fd = OpenDatasetFile(t.shards[i].path, O_DIRECT);
    if (!fd.ok()) return;  // tmpfs and some FUSE filesystems refuse O_DIRECT: stay buffered
    fds.push_back(std::move(fd).value());
  }
#ifdef STATX_DIOALIGN
  // The filesystem's own alignment (Linux 6.1+); a power of two from 512 to 4 KiB is trusted.
  struct statx stx {};
  if (!fds.empty() &&
      ::statx(fds[0].get(), "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) == 0 &&
      (stx.stx_mask & STATX_DIOALIGN) != 0) {
    auto usable = [](uint32_t a) { return a >= 512 && a <= 4096 && (a & (a - 1)) == 0; };
    if (usable(stx.stx_dio_offset_align)) t.offset_align = stx.stx_dio_offset_align;
    t.mem_align = std::max<uint32_t>(
        t.offset_align, usable(stx.stx_dio_mem_align) ? stx.stx_dio_mem_align : 512);
  }
#endif
  for (size_t i = 0; i < t.shard_count; ++i) t.shards[i].direct_fd = std::move(fds[i]);
  t.direct_ok.store(true, std::memory_order_relaxed);
}

bool LocalFileOrigin::direct_reads(uint32_t tree) const {
  const Tree* t = FindTree(tree);
  return t != nullptr && t->direct_ok.load(std::memory_order_relaxed);
}

uint32_t LocalFileOrigin::direct_alignment(uint32_t tree) const {
  return direct_reads(tree) ? FindTree(tree)->offset_align : 0;
}

Result<OriginBytes> LocalFileOrigin::ReadSpan(ShardRef ref, uint64_t offset, size_t len) {
  Shard* s = Find(ref);
  if (s == nullptr || offset > s->size || len > s->size - offset) {
    return Status::InvalidArgument(ShardName(ref) + ": read outside the shard");
  }
  Tree& t = *trees_[ref.tree];
  if (t.direct_ok.load(std::memory_order_relaxed) && len > 0) {
    // Whole blocks of the filesystem's direct I/O alignment (EnableDirectReads), into a buffer
    // aligned as it asks.
    const uint64_t align = t.offset_align;
    const uint64_t first = offset & ~(align - 1);
    const uint64_t last = (offset + len + align - 1) & ~(align - 1);
    const size_t span = static_cast<size_t>(last - first);
    OriginBytes out = OriginBytes::Allocate(span, t.mem_align);
    if (out.buffer() == nullptr) {
      return Status::ResourceExhausted("out of memory reading " + s->path);
    }
    // The shard's end need not be block-aligned: a short read is fine once it covers the range.
    const size_t needed = static_cast<size_t>(offset + len - first);
    size_t got = 0;
    while (got < needed) {
      ssize_t n = ::pread(s->direct_fd.get(), out.buffer() + got, span - got,
                          static_cast<off_t>(first + got));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EINVAL && got == 0) {
        // The filesystem took O_DIRECT at open but not for reads: buffered from now on.
        t.direct_ok.store(false, std::memory_order_relaxed);
        break;
      }
      if (n < 0) return Status::FromErrno(errno, "read " + s->path);
      if (n == 0) return Status::IoError(s->path + ": shard ends before the range read");
      got += static_cast<size_t>(n);
    }
    if (got >= needed) {
      out.Keep(static_cast<size_t>(offset - first), len);
      if (t.advice.drop_behind) NoteRead(*s, len);
      return out;
    }
  }
  OriginBytes out = OriginBytes::Allocate(len);
  if (out.buffer() == nullptr) return Status::ResourceExhausted("out of memory reading " + s->path);
  MMFS_RETURN_IF_ERROR(PreadFull(s->fd.get(), out.buffer(), len, offset, s->path));
  out.Keep(0, len);
  if (t.advice.drop_behind) NoteRead(*s, len);
  return out;
}

void LocalFileOrigin::NoteRead(Shard& s, uint64_t bytes) {
  uint64_t before = s.since_drop.fetch_add(bytes, std::memory_order_relaxed);
  if (before + bytes < kDropEveryBytes || before >= kDropEveryBytes) return;
  // Exactly one caller crosses the threshold and drops; the counter starts again.
  s.since_drop.store(0, std::memory_order_relaxed);
  ::posix_fadvise(s.fd.get(), 0, 0, POSIX_FADV_DONTNEED);
}

}  // namespace mmfs::origin
