#include "fs/core/filesystem.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file_util.h"
#include "cache/tier_stack.h"
#include "fs/control/control_dir.h"
#include "fs/control/file_xattrs.h"
#include "fs/core/file_reader.h"
#include "fs/core/view_namespace.h"
#include "fs/read/origin_reader.h"
#include "fs/read/view_files.h"
#include "fs/readahead/filler.h"
#include "fs/readahead/prefetcher.h"
#include "fs/readahead/warmup.h"

// Filesystem's dispatch and namespace: inodes, attributes, listings, links, xattrs and the
// control files. The rooms are built in filesystem_rooms.cc, READs served in
// filesystem_read.cc, stats gathered in filesystem_stats.cc.
namespace mmfs::fs {

void Filesystem::SetHintTarget(std::string target) { control_->SetHintTarget(std::move(target)); }
void Filesystem::SetControlTarget(std::string target) {
  control_->SetControlTarget(std::move(target));
}
void Filesystem::SetControlLinkTarget(std::string target) {
  control_->SetLinkTarget(std::move(target));
}

void Filesystem::DrainPrefetch() { prefetcher_->Drain(); }
void Filesystem::BeginHint() {
  if (filler_ != nullptr) filler_->Trigger("a hint");  // a training job says what it reads
  prefetcher_->BeginHint();
}
void Filesystem::AddHintLines(const std::vector<std::string>& lines) {
  prefetcher_->AddHintLines(lines);
}
void Filesystem::EndHint() { prefetcher_->EndHint(); }
void Filesystem::HandleControlLines(const std::vector<std::string>& lines) {
  warmup_->HandleLines(lines);
}
void Filesystem::SetMemoryTargets(const MemoryTargets& t) { reader_->SetMemoryTargets(t); }
uint64_t Filesystem::RamBytesUsed() const { return reader_->RamBytesUsed(); }

Result<format::Entry> Filesystem::EntryForIno(uint64_t ino) const {
  if (ino == 0 || ino > dataset_->entry_count()) return Status::NotFound("no such inode");
  return dataset_->GetEntry(ino - 1);
}

Attr Filesystem::EntryAttr(const format::Entry& e) const {
  Attr a;
  a.ino = e.index + 1;
  a.mode = format::ServedMode(e.record.mode);
  a.size = e.is_dir() ? 4096 : e.record.size;
  a.mtime_ns = e.record.mtime_ns;
  // 1 tells find(1) and fts that the subdirectory count is unknown, as on btrfs.
  a.nlink = 1;
  return a;
}

Result<Attr> Filesystem::Lookup(uint64_t parent, std::string_view name) {
  OpTimer timer(metrics_, Op::kLookup);
  if (parent == kRootIno) {
    if (auto a = control_->LookupInRoot(name)) return *a;
    if (auto a = views_->LookupInRoot(name)) return *a;
  }
  Result<Attr> result = Status::Ok();
  if (views_->Owns(parent)) {
    result = views_->Lookup(parent, name);
  } else if (control_->Owns(parent)) {
    result = control_->Lookup(parent, name);
  } else if (auto dir = EntryForIno(parent); !dir.ok()) {
    result = origin_->CountError(dir.status());
  } else if (!dir->is_dir()) {
    result = Status::NotADirectory("not a directory");
  } else if (auto child = dataset_->LookupChild(*dir, name); !child.ok()) {
    result = child.status().code() == StatusCode::kNotFound ? child.status()
                                                            : origin_->CountError(child.status());
  } else {
    // A directory is looked up right before it is listed (os.walk, scandir of a path): its
    // listing's index pages start loading while the kernel is still on its way to READDIR.
    if (child->is_dir()) dataset_->PrefetchChildren(*child);
    result = EntryAttr(*child);
  }
  if (!result.ok()) timer.Fail();
  return result;
}

Result<Attr> Filesystem::AttrOf(uint64_t ino) const {
  if (control_->Owns(ino)) return control_->GetAttr(ino);
  if (views_->Owns(ino)) return views_->GetAttr(ino);
  auto e = EntryForIno(ino);
  return e.ok() ? Result<Attr>(EntryAttr(*e)) : origin_->CountError(e.status());
}

Result<Attr> Filesystem::GetAttr(uint64_t ino) {
  OpTimer timer(metrics_, Op::kGetattr);
  Result<Attr> result = AttrOf(ino);
  if (!result.ok()) timer.Fail();
  return result;
}

Result<Attr> Filesystem::OpenDir(uint64_t ino) {
  OpTimer timer(metrics_, Op::kOpendir);
  Result<Attr> result = AttrOf(ino);
  if (result.ok() && !S_ISDIR(result->mode)) {
    result = Status::NotADirectory("opendir of a non-directory");
  }
  if (!result.ok()) timer.Fail();
  return result;
}

void Filesystem::NoteListing(size_t request_bytes, uint64_t entries) {
  metrics_.NoteListing(request_bytes, entries);
}

Status Filesystem::ReadDir(
    uint64_t ino, uint64_t offset,
    const std::function<bool(std::string_view, const Attr&, uint64_t)>& emit) {
  OpTimer timer(metrics_, Op::kReaddir);
  if (control_->IsDir(ino)) return control_->ReadDir(ino, offset, emit);
  if (views_->Owns(ino)) {
    Status s = views_->ReadDir(ino, offset, emit);
    if (!s.ok()) timer.Fail();
    return s;
  }
  auto dir = EntryForIno(ino);
  if (!dir.ok()) {
    timer.Fail();
    return origin_->CountError(dir.status());
  }
  if (!dir->is_dir()) {
    timer.Fail();
    return Status::NotADirectory("not a directory");
  }
  // The root is never looked up, and a listing may come long after its LOOKUP.
  if (offset == 0) dataset_->PrefetchChildren(*dir);
  // Positions: 1 = ".", 2 = "..", 3 + i = child i.
  Attr self = EntryAttr(*dir);
  auto p = dataset_->GetEntry(dir->record.parent);
  Attr parent = p.ok() ? EntryAttr(*p) : self;
  std::optional<uint64_t> first = EmitDotEntries(offset, self, parent, emit);
  if (!first) return Status::Ok();
  for (uint64_t i = *first; i < dir->child_count(); ++i) {
    auto child = dataset_->GetEntry(dir->first_child() + i);
    if (!child.ok()) {
      timer.Fail();
      return origin_->CountError(child.status());
    }
    if (!emit(child->name, EntryAttr(*child), 3 + i)) return Status::Ok();
  }
  // Listed to the end: the kernel keeps the listing (no_opendir), so the daemon need not keep
  // the index pages mapped.
  dataset_->ReleaseChildren(*dir);
  return Status::Ok();
}

Status Filesystem::Open(uint64_t ino, int flags) {
  OpTimer timer(metrics_, Op::kOpen);
  Status s;
  if ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_TRUNC | O_CREAT)) != 0) {
    s = Status::ReadOnly("mmfs mounts are read-only");
  } else if (control_->Owns(ino)) {
    s = control_->GetAttr(ino).status();
  } else if (views_->Owns(ino)) {
    s = views_->GetAttr(ino).status();
  } else if (auto e = EntryForIno(ino); !e.ok()) {
    s = origin_->CountError(e.status());
  }
  if (!s.ok()) timer.Fail();
  return s;
}

Result<std::string> Filesystem::ReadLink(uint64_t ino) {
  OpTimer timer(metrics_, Op::kReadlink);
  Result<std::string> result = std::string();
  if (control_->Owns(ino)) {
    result = control_->ReadLink(ino);
  } else if (views_->Owns(ino)) {
    result = views_->ReadLink(ino);
  } else if (auto e = EntryForIno(ino); !e.ok()) {
    result = origin_->CountError(e.status());
  } else if (auto target = dataset_->LinkTarget(*e); !target.ok()) {
    result = target.status();
  } else {
    result = std::string(*target);
  }
  if (!result.ok()) timer.Fail();
  return result;
}

StatFsInfo Filesystem::StatFs() {
  OpTimer timer(metrics_, Op::kStatfs);
  StatFsInfo info;
  info.blocks = (dataset_->manifest().total_bytes + info.block_size - 1) / info.block_size;
  info.files = dataset_->entry_count();
  return info;
}

Result<std::optional<std::string>> Filesystem::GetXattr(uint64_t ino, std::string_view name) {
  OpTimer timer(metrics_, Op::kGetxattr);
  // They describe the original bytes: not offered on view files.
  if (control_->Owns(ino) || views_->Owns(ino)) return std::optional<std::string>();
  auto e = EntryForIno(ino);
  if (!e.ok()) {
    timer.Fail();
    return origin_->CountError(e.status());
  }
  return FileXattr(*dataset_, *e, name, [&] { return reader_->Residency(e->index); });
}

Result<std::vector<std::string>> Filesystem::ListXattr(uint64_t ino) {
  OpTimer timer(metrics_, Op::kListxattr);
  if (control_->Owns(ino) || views_->Owns(ino)) return std::vector<std::string>();
  auto e = EntryForIno(ino);
  if (!e.ok()) {
    timer.Fail();
    return origin_->CountError(e.status());
  }
  return FileXattrNames(*e);
}

void Filesystem::Forget(uint64_t ino) {
  if (control_->Owns(ino)) control_->Forget(ino);
}

Status Filesystem::Ioctl(uint64_t /*ino*/) {
  // The right answer, not a failure: not counted as an error.
  OpTimer timer(metrics_, Op::kIoctl);
  return Status::NoSuchIoctl("mmfs files take no ioctls");
}

Status Filesystem::RefuseWrite() {
  OpTimer timer(metrics_, Op::kWrite);
  timer.Fail();
  return Status::ReadOnly("mmfs mounts are read-only");
}

bool Filesystem::IsControl(uint64_t ino) const { return control_->Owns(ino); }

bool Filesystem::IsControlLookup(uint64_t parent, std::string_view name) const {
  if (control_->Owns(parent)) return true;
  return parent == kRootIno && control_->LookupInRoot(name).has_value();
}

}  // namespace mmfs::fs
