// Filesystem's READ path: a READ served at once from what is at hand, or queued to a miss
// thread when it must wait for the origin; and the pushes of prefetched files into the page
// cache. Part of Filesystem (filesystem.h).
#include <exception>

#include "cache/tier_stack.h"
#include "fs/control/control_dir.h"
#include "fs/core/file_reader.h"
#include "fs/core/filesystem.h"
#include "fs/core/view_namespace.h"
#include "fs/read/miss_queue.h"
#include "fs/read/origin_reader.h"
#include "fs/read/view_files.h"
#include "fs/readahead/filler.h"
#include "fs/readahead/prefetcher.h"

namespace mmfs::fs {

// What FinishLater needs of a READ that StartRead could not serve at once.
struct Filesystem::PendingRead {
  TreeFile file;
  uint64_t offset = 0;
  size_t size = 0;
  bool view = false;
  bool looked_up = false;  // the first try looked the tiers up (and counted it)
  OpTimer timer;           // runs from the READ's arrival to its answer
};

Result<TreeFile> Filesystem::ReadTarget(uint64_t ino) {
  TreeFile f;
  if (views_->Owns(ino)) {
    MMFS_ASSIGN_OR_RETURN(f, views_->FileOf(ino));
  } else if (auto e = EntryForIno(ino); !e.ok()) {
    return origin_->CountError(e.status());
  } else {
    f = BaseFile(*e);
  }
  if (!f.entry.is_regular()) {
    return f.entry.is_dir() ? Status::IsADirectory("read of a directory")
                            : Status::InvalidArgument("not a regular file");
  }
  return f;
}

Result<ReadData> Filesystem::Counted(Result<ReadData> r, const TreeFile& f, uint64_t offset,
                                     bool view, OpTimer& timer) {
  if (!r.ok()) {
    timer.Fail();
    return r;
  }
  metrics_.bytes_served.fetch_add(r->size, std::memory_order_relaxed);
  if (view) view_files_->CountServed(f.tree, offset, r->size);
  return r;
}

Result<ReadData> Filesystem::Read(uint64_t ino, uint64_t offset, size_t size, uint64_t stream) {
  OpTimer timer(metrics_, Op::kRead);
  if (control_->Owns(ino)) {
    Result<ReadData> r = control_->Read(ino, offset, size);
    if (!r.ok()) timer.Fail();
    return r;
  }
  Result<TreeFile> f = ReadTarget(ino);
  if (!f.ok()) {
    timer.Fail();
    return f.status();
  }
  return Counted(ReadFile(*f, offset, size, stream), *f, offset, views_->Owns(ino), timer);
}

bool Filesystem::QueuesMisses() const {
  if (misses_ == nullptr) return false;
  if (remote_origin_ || tiers_->cluster() != nullptr) return true;  // a network in the way
  const OriginCostEstimate cost = origin_->CostEstimate();
  return cost.mean_seconds >= 0.001;
}

Filesystem::ReadStart Filesystem::StartRead(uint64_t ino, uint64_t offset, size_t size,
                                            uint64_t stream) {
  if (misses_ == nullptr || control_->Owns(ino)) return {Read(ino, offset, size, stream), nullptr};
  OpTimer timer(metrics_, Op::kRead);
  Result<TreeFile> f = ReadTarget(ino);
  if (!f.ok()) {
    timer.Fail();
    return {Result<ReadData>(f.status()), nullptr};
  }
  const bool view = views_->Owns(ino);
  NoteRead(*f, offset, stream);
  bool looked_up = false;
  if (auto at_hand = reader_->TryRead(*f, offset, size, &looked_up)) {
    return {Counted(std::move(*at_hand), *f, offset, view, timer), nullptr};
  }
  if (!QueuesMisses()) {
    Result<ReadData> r = reader_->Read(*f, offset, size, nullptr, looked_up);
    return {Counted(std::move(r), *f, offset, view, timer), nullptr};
  }
  return {std::nullopt, std::make_shared<PendingRead>(
                            PendingRead{*f, offset, size, view, looked_up, std::move(timer)})};
}

void Filesystem::FinishLater(std::shared_ptr<PendingRead> pending, ReadDone done) {
  const auto arrived = pending->timer.start();
  misses_->Submit(arrived, [this, pending = std::move(pending), done = std::move(done)] {
    PendingRead& p = *pending;
    Result<ReadData> r = Status::IoError("not read");
    try {
      r = reader_->Read(p.file, p.offset, p.size, nullptr, p.looked_up);
    } catch (const std::exception& e) {
      // The READ is answered whatever happened: a reader must never wait for good.
      r = Status::ResourceExhausted(std::string("reading a file: ") + e.what());
    }
    done(Counted(std::move(r), p.file, p.offset, p.view, p.timer));
  });
}

void Filesystem::StopMissThreads() {
  if (misses_ != nullptr) misses_->Stop();
}

TreeFile Filesystem::BaseFile(const format::Entry& e) const {
  auto f = view_files_->Resolve(0, e);  // never fails for the original tree
  return f.ok() ? *f : TreeFile{};
}

Result<TreeFile> Filesystem::FileForIno(uint64_t ino) const {
  if (control_->Owns(ino)) return Status::NotFound("a control file");
  if (views_->Owns(ino)) return views_->FileOf(ino);
  MMFS_ASSIGN_OR_RETURN(format::Entry e, EntryForIno(ino));
  return BaseFile(e);
}

void Filesystem::NoteRead(const TreeFile& f, uint64_t offset, uint64_t stream) {
  prefetcher_->OnRead(f, offset, stream);
  // The fill brings originals: a view's files say nothing of a job that wants them.
  if (filler_ != nullptr && offset == 0 && f.tree == 0) filler_->NoteRead(f.entry.index);
}

Result<ReadData> Filesystem::ReadFile(const TreeFile& f, uint64_t offset, size_t size,
                                      uint64_t stream, std::shared_ptr<const std::string> known) {
  NoteRead(f, offset, stream);
  return reader_->Read(f, offset, size, std::move(known));
}

bool Filesystem::MayPush(uint64_t ino) {
  auto f = FileForIno(ino);
  return f.ok() && prefetcher_->MayPush(*f);
}

bool Filesystem::Push(uint64_t ino, uint64_t stream, size_t max_bytes, bool wait,
                      const std::function<int(const char*, size_t)>& store) {
  // The prefetch buffer is keyed by the file's cache key: a resized file's push stores the
  // resized bytes, never its original's.
  auto f = FileForIno(ino);
  if (!f.ok()) return false;
  if (auto taken = prefetcher_->Push(*f, max_bytes, wait, store)) {
    auto read = ReadFile(*f, 0, f->size(), stream, std::move(taken));
    return read.ok() && read->tier_holds;
  }
  return false;
}

Result<ReadData> Filesystem::ClaimPrefetched(uint64_t ino, size_t max_bytes, bool wait) {
  ReadData out;
  auto f = FileForIno(ino);
  if (!f.ok()) return out;
  out.owner = prefetcher_->Claim(*f, max_bytes, wait);
  if (out.owner == nullptr) return out;
  out.data = out.owner->data();
  out.size = out.owner->size();
  return out;
}

void Filesystem::EndPush(uint64_t ino, uint64_t stream, std::shared_ptr<const std::string> claimed,
                         bool stored) {
  auto f = FileForIno(ino);
  if (!f.ok()) return;
  if (prefetcher_->EndPush(*f, claimed, stored)) {
    (void)ReadFile(*f, 0, f->size(), stream, std::move(claimed));
  }
}

}  // namespace mmfs::fs
