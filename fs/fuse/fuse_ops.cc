#include "fs/fuse/fuse_ops.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/file_util.h"
#include "fs/format/format.h"
#include "fs/fuse/dirent_encoder.h"
#include "fs/fuse/errno_map.h"
#include "fs/readers/reader_accounting.h"

namespace mmfs::fs {

namespace {

FuseOpsConfig& Config(fuse_req_t req) {
  return *static_cast<FuseOpsConfig*>(fuse_req_userdata(req));
}

// The request came over io_uring: it is being handled on its CPU's ring thread.
bool OnRing(fuse_req_t req) {
#if FUSE_VERSION >= FUSE_MAKE_VERSION(3, 18)
  return fuse_req_is_uring(req);
#else
  (void)req;
  return false;
#endif
}

// st_blksize, the "preferred I/O size": buffered readers (Python's open(), so PIL and
// torchvision's loader) read in chunks of it. A first read of the whole file makes the kernel's
// first read-ahead window cover it, so a cold file costs one READ instead of a ramp of growing
// READs (two to four for a 100 KB JPEG read in 4 KiB chunks). The kernel keeps powers of two.
blksize_t PreferredIoSize(const FuseOpsConfig& cfg, uint64_t file_size) {
  const uint64_t cap = std::max<uint64_t>(4096, uint64_t{cfg.effective_read_ahead_kb} * 1024);
  uint64_t size = 4096;
  while (size < file_size && size < cap) size *= 2;
  return static_cast<blksize_t>(size);
}

struct stat ToStat(const FuseOpsConfig& cfg, const Attr& a) {
  struct stat st;
  std::memset(&st, 0, sizeof st);
  st.st_ino = a.ino;
  st.st_mode = a.mode;
  st.st_nlink = a.nlink;
  st.st_uid = cfg.uid;
  st.st_gid = cfg.gid;
  st.st_size = static_cast<off_t>(a.size);
  st.st_blksize = S_ISREG(a.mode) ? PreferredIoSize(cfg, a.size) : 4096;
  st.st_blocks = static_cast<blkcnt_t>((a.size + 511) / 512);
  st.st_mtim.tv_sec = a.mtime_ns / 1000000000;
  st.st_mtim.tv_nsec = a.mtime_ns % 1000000000;
  if (st.st_mtim.tv_nsec < 0) {
    st.st_mtim.tv_nsec += 1000000000;
    st.st_mtim.tv_sec -= 1;
  }
  st.st_atim = st.st_mtim;
  st.st_ctim = st.st_mtim;
  return st;
}

fuse_entry_param ToEntry(const FuseOpsConfig& cfg, const Attr& a) {
  fuse_entry_param e;
  std::memset(&e, 0, sizeof e);
  e.ino = a.ino;
  e.generation = 1;
  e.attr = ToStat(cfg, a);
  double t = a.is_volatile ? 0.0 : cfg.timeout_seconds;
  e.attr_timeout = t;
  e.entry_timeout = t;
  return e;
}

// Raises the mount's read-ahead so that most files take one READ. Done here because the kernel
// sets the mount's read-ahead to min(current, reply's max_readahead) when it processes the INIT
// reply: written any earlier it is lowered again, and later requests may already be in flight.
void RaiseReadAhead(FuseOpsConfig& cfg, fuse_conn_info* conn) {
  cfg.effective_read_ahead_kb = conn->max_readahead / 1024;
  if (cfg.read_ahead_kb == 0 || cfg.read_ahead_sysfs_path.empty()) return;
  const std::string& path = cfg.read_ahead_sysfs_path;
  std::string value = std::to_string(cfg.read_ahead_kb);
  auto fd = OpenFile(path, O_WRONLY);
  if (!fd.ok() || !WriteFull(fd->get(), value.data(), value.size(), path).ok()) {
    spdlog::info("could not raise read-ahead via {} (needs root); READs stay at {} KiB", path,
                 conn->max_readahead / 1024);
    return;
  }
  conn->max_readahead = cfg.read_ahead_kb * 1024;
  cfg.effective_read_ahead_kb = cfg.read_ahead_kb;
}

void OnInit(void* userdata, fuse_conn_info* conn) {
  auto* cfg = static_cast<FuseOpsConfig*>(userdata);
  RaiseReadAhead(*cfg, conn);
  switch (cfg->readdirplus) {
    case ReaddirPlus::kOff:
      conn->want &= ~(FUSE_CAP_READDIRPLUS | FUSE_CAP_READDIRPLUS_AUTO);
      break;
    case ReaddirPlus::kAuto:
      if (conn->capable & FUSE_CAP_READDIRPLUS) conn->want |= FUSE_CAP_READDIRPLUS;
      if (conn->capable & FUSE_CAP_READDIRPLUS_AUTO) conn->want |= FUSE_CAP_READDIRPLUS_AUTO;
      break;
    case ReaddirPlus::kAlways:
      if (conn->capable & FUSE_CAP_READDIRPLUS) conn->want |= FUSE_CAP_READDIRPLUS;
      conn->want &= ~FUSE_CAP_READDIRPLUS_AUTO;
      break;
  }
  cfg->no_open = (conn->capable & FUSE_CAP_NO_OPEN_SUPPORT) != 0;
  // See OnOpendir. The kernel then keeps every listing (FOPEN_KEEP_CACHE | FOPEN_CACHE_DIR) for
  // as long as it keeps the directory's inode: right for a dataset, which never changes, and for
  // `.mmfs`, whose names are fixed for the mount (ControlDir::ReadDir; what changes is the
  // snapshots' contents, which each LOOKUP renders anew with zero timeouts).
  if (cfg->cache_listings && (conn->capable & FUSE_CAP_NO_OPENDIR_SUPPORT) != 0) {
    conn->want |= FUSE_CAP_NO_OPENDIR_SUPPORT;
    cfg->no_opendir = true;
  }
  if (conn->capable & FUSE_CAP_CACHE_SYMLINKS) conn->want |= FUSE_CAP_CACHE_SYMLINKS;
  if (conn->capable & FUSE_CAP_SPLICE_WRITE) conn->want |= FUSE_CAP_SPLICE_WRITE;
  // Nothing here ever changes, so the kernel need not check mtimes to keep its page cache.
  conn->want &= ~FUSE_CAP_AUTO_INVAL_DATA;
#ifdef FUSE_CAP_OVER_IO_URING
  // libfuse turns the ring on by default when the kernel offers it and the session was made
  // with io_uring (or FUSE_URING_ENABLE is set): the mount's transport decides instead.
  if (!cfg->ring) conn->want &= ~FUSE_CAP_OVER_IO_URING;
#endif
  conn->max_background = cfg->max_background;
  conn->congestion_threshold = cfg->max_background * 3 / 4;
}

// A file the prefetcher loaded (the hint's next files, a sample's other members, the next
// samples of a run) will be read whole soon: storing it in the page cache before the reader asks
// spares both sides the READ round trip (two context switches, on a machine where the loader
// needs every cycle). Queued right after the LOOKUP reply, where the kernel often has not yet
// made the inode (the looking-up task does that when it wakes: ENOENT, and the file stays in
// the prefetch buffer), and again at the ioctl that Python's open() sends before its first read,
// which waits (briefly, see page_pusher.h) for the push so that the read finds the pages. A
// READ that outruns a push just gets the same bytes as usual. The store itself runs on the
// pusher's threads (PushPrefetched), never on a request thread.
void QueuePush(FuseOpsConfig& cfg, fuse_ino_t ino, uint64_t stream, bool wait) {
  if (!cfg.push_prefetched || cfg.pusher == nullptr || !cfg.fs->MayPush(ino)) return;
  if (wait) {
    cfg.pusher->PushAndWait(ino, stream);
  } else {
    cfg.pusher->Queue(ino, stream);
  }
}

// The caller's thread id (the kernel's request header holds the calling task's pid in the
// daemon's pid namespace: a TID, which is the process id only for a main thread); 0 when the
// kernel sent the request on nobody's behalf or the caller is outside our pid namespace.
uint64_t StreamOf(fuse_req_t req) {
  const fuse_ctx* ctx = fuse_req_ctx(req);
  return ctx != nullptr ? static_cast<uint64_t>(ctx->pid) : 0;
}

// Brackets one request for the reader accounting (fs/readers/reader_accounting.h): the calling
// thread waits from the callback's start until its reply (Done, or the end of the scope). Not
// counted: requests for the control files (`mmfs stats` is not a loader), and callers with no pid.
class ReaderRequest {
 public:
  ReaderRequest(fuse_req_t req, bool counted) {
    if (OnRing(req)) {
      Config(req).fs->metrics().ring_requests.fetch_add(1, std::memory_order_relaxed);
    }
    ReaderAccounting* acct = Config(req).fs->readers();
    if (!counted || acct == nullptr) return;
    const uint64_t tid = StreamOf(req);
    if (tid != 0 && acct->Begin(tid, acct->Now())) {
      acct_ = acct;
      tid_ = tid;
    }
  }
  ~ReaderRequest() { Done(); }
  // Moved with a READ answered later, from a miss thread: its reader waits until then.
  ReaderRequest(ReaderRequest&& other) noexcept
      : acct_(std::exchange(other.acct_, nullptr)), tid_(other.tid_), bytes_(other.bytes_) {}
  ReaderRequest& operator=(ReaderRequest&&) = delete;
  ReaderRequest(const ReaderRequest&) = delete;
  ReaderRequest& operator=(const ReaderRequest&) = delete;
  void Served(size_t bytes) { bytes_ = bytes; }
  void Done() {
    if (acct_ == nullptr) return;
    acct_->End(tid_, acct_->Now(), bytes_);
    acct_ = nullptr;
  }

 private:
  ReaderAccounting* acct_ = nullptr;
  uint64_t tid_ = 0;
  size_t bytes_ = 0;
};

void OnLookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  FuseOpsConfig& cfg = Config(req);
  ReaderRequest counted(req, !cfg.fs->IsControlLookup(parent, name));
  auto attr = cfg.fs->Lookup(parent, name);
  if (attr.ok()) {
    fuse_entry_param e = ToEntry(cfg, *attr);
    const uint64_t stream = StreamOf(req);
    fuse_reply_entry(req, &e);  // `req` is gone from here on
    counted.Done();             // the reader waits no longer
    if (S_ISREG(attr->mode)) QueuePush(cfg, attr->ino, stream, /*wait=*/false);
    return;
  }
  if (attr.status().code() == StatusCode::kNotFound) {
    // A negative entry: the kernel remembers that the name does not exist.
    fuse_entry_param e;
    std::memset(&e, 0, sizeof e);
    e.entry_timeout = cfg.timeout_seconds;
    fuse_reply_entry(req, &e);
    return;
  }
  fuse_reply_err(req, ToErrno(attr.status()));
}

void OnForget(fuse_req_t req, fuse_ino_t ino, uint64_t /*nlookup*/) {
  Config(req).fs->Forget(ino);
  fuse_reply_none(req);
}

void OnForgetMulti(fuse_req_t req, size_t count, fuse_forget_data* forgets) {
  for (size_t i = 0; i < count; ++i) Config(req).fs->Forget(forgets[i].ino);
  fuse_reply_none(req);
}

void OnGetattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info* /*fi*/) {
  FuseOpsConfig& cfg = Config(req);
  ReaderRequest counted(req, !cfg.fs->IsControl(ino));
  auto attr = cfg.fs->GetAttr(ino);
  if (!attr.ok()) {
    fuse_reply_err(req, ToErrno(attr.status()));
    return;
  }
  struct stat st = ToStat(cfg, *attr);
  fuse_reply_attr(req, &st, attr->is_volatile ? 0.0 : cfg.timeout_seconds);
}

void OnReadlink(fuse_req_t req, fuse_ino_t ino) {
  ReaderRequest counted(req, !Config(req).fs->IsControl(ino));
  auto target = Config(req).fs->ReadLink(ino);
  if (!target.ok()) {
    fuse_reply_err(req, ToErrno(target.status()));
    return;
  }
  fuse_reply_readlink(req, target->c_str());
}

void OnOpen(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  FuseOpsConfig& cfg = Config(req);
  Status s = cfg.fs->Open(ino, fi->flags);
  if (!s.ok()) {
    fuse_reply_err(req, ToErrno(s));
    return;
  }
  // Only reached on kernels without no_open support (or for a write attempt, refused above).
  fi->keep_cache = 1;
  fi->noflush = 1;
  fuse_reply_open(req, fi);
}

// Kernels with FUSE_CAP_NO_OPEN_SUPPORT take ENOSYS as "never send OPEN/RELEASE again" and keep
// the page cache across opens: warm reads then cost the daemon nothing.
void OnOpenNoOpen(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  ReaderRequest counted(req, !Config(req).fs->IsControl(ino));
  if (Config(req).no_open && (fi->flags & O_ACCMODE) == O_RDONLY) {
    fuse_reply_err(req, ENOSYS);
    return;
  }
  OnOpen(req, ino, fi);
}

// Answers a READ with `data` (or its error); `req` is gone afterwards.
void ReplyRead(FuseOpsConfig& cfg, fuse_req_t req, fuse_ino_t ino, const Result<ReadData>& data,
               ReaderRequest& counted) {
  if (!data.ok()) {
    fuse_reply_err(req, ToErrno(data.status()));
    return;
  }
  counted.Served(data->size);
  fuse_reply_buf(req, data->data, data->size);  // `req` is gone from here on
  counted.Done();                               // the reader waits no longer
  // The RAM tier holds the file: its pages would be a second copy (hold once). Soon after the
  // READ that reaches the end; later after another (a reader may still be reading the pages
  // around it, and the READ that reaches the end, if one comes, brings the drop forward).
  if (data->tier_holds && cfg.dropper != nullptr) {
    if (data->at_end) {
      cfg.dropper->Queue(ino);
    } else {
      cfg.dropper->QueueLater(ino);
    }
  }
}

// Over /dev/fuse a READ whose bytes need a remote or slow origin is answered from a miss thread
// (Filesystem::StartRead): this thread goes back to the kernel for the next request, so a store
// that fails or crawls never holds the threads that cache hits need. Over io_uring the reply
// must come from the ring's own thread (transport.h), so the READ is served here, whatever it
// waits for.
void OnRead(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* /*fi*/) {
  FuseOpsConfig& cfg = Config(req);
  ReaderRequest counted(req, !cfg.fs->IsControl(ino));
  const uint64_t offset = static_cast<uint64_t>(off);
  if (OnRing(req)) {
    ReplyRead(cfg, req, ino, cfg.fs->Read(ino, offset, size, StreamOf(req)), counted);
    return;
  }
  Filesystem::ReadStart start = cfg.fs->StartRead(ino, offset, size, StreamOf(req));
  if (start.answer.has_value()) {
    ReplyRead(cfg, req, ino, *start.answer, counted);
    return;
  }
  auto waiting = std::make_shared<ReaderRequest>(std::move(counted));
  FuseOpsConfig* config = &cfg;
  cfg.fs->FinishLater(std::move(start.pending),
                      [config, req, ino, waiting](Result<ReadData> data) {
                        ReplyRead(*config, req, ino, data, *waiting);
                      });
}

// With no_opendir the first OPENDIR is answered ENOSYS, after which the kernel sends neither
// OPENDIR nor RELEASEDIR again: two round trips fewer per directory listed, and every listing
// cached from its first READDIR on (bench/README.md, "Listing a million files").
void OnOpendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  FuseOpsConfig& cfg = Config(req);
  ReaderRequest counted(req, !cfg.fs->IsControl(ino));
  auto attr = cfg.fs->OpenDir(ino);
  if (!attr.ok()) {
    fuse_reply_err(req, ToErrno(attr.status()));
    return;
  }
  if (cfg.no_opendir) {
    fuse_reply_err(req, ENOSYS);
    return;
  }
  if (!attr->is_volatile) {
    fi->cache_readdir = 1;
    fi->keep_cache = 1;
  }
  fuse_reply_open(req, fi);
}

template <bool kPlus>
void DoReaddir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off) {
  FuseOpsConfig& cfg = Config(req);
  ReaderRequest counted(req, !cfg.fs->IsControl(ino));
  // Not zero-filled: EncodeDirent and fuse_add_direntry_plus write every byte they count,
  // padding included.
  auto buf = std::make_unique_for_overwrite<char[]>(size);
  size_t used = 0;
  uint64_t entries = 0;
  Status s = cfg.fs->ReadDir(
      ino, static_cast<uint64_t>(off),
      [&](std::string_view name, const Attr& attr, uint64_t next) {
        name = name.substr(0, format::kMaxNameLength);
        size_t need;
        if constexpr (kPlus) {
          char name_z[format::kMaxNameLength + 1];  // libfuse wants NUL-terminated names
          std::memcpy(name_z, name.data(), name.size());
          name_z[name.size()] = '\0';
          fuse_entry_param e = ToEntry(cfg, attr);
          need = fuse_add_direntry_plus(req, buf.get() + used, size - used, name_z, &e,
                                        static_cast<off_t>(next));
        } else {
          need = EncodeDirent(buf.get() + used, size - used, name, attr.ino, attr.mode, next);
        }
        if (need > size - used) return false;
        used += need;
        ++entries;
        return true;
      });
  if (!s.ok() && used == 0) {
    fuse_reply_err(req, ToErrno(s));
    return;
  }
  cfg.fs->NoteListing(size, entries);
  fuse_reply_buf(req, buf.get(), used);
}

void OnReaddir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* /*fi*/) {
  DoReaddir<false>(req, ino, size, off);
}

void OnReaddirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                   fuse_file_info* /*fi*/) {
  DoReaddir<true>(req, ino, size, off);
}

void OnStatfs(fuse_req_t req, fuse_ino_t /*ino*/) {
  ReaderRequest counted(req, true);
  StatFsInfo info = Config(req).fs->StatFs();
  struct statvfs st;
  std::memset(&st, 0, sizeof st);
  st.f_bsize = info.block_size;
  st.f_frsize = info.block_size;
  st.f_blocks = info.blocks;
  st.f_files = info.files;
  st.f_namemax = info.name_max;
  st.f_flag = ST_RDONLY;
  fuse_reply_statfs(req, &st);
}

void ReplyXattr(fuse_req_t req, const std::string& value, size_t size) {
  if (size == 0) {
    fuse_reply_xattr(req, value.size());
  } else if (size < value.size()) {
    fuse_reply_err(req, ERANGE);
  } else {
    fuse_reply_buf(req, value.data(), value.size());
  }
}

void OnGetxattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size) {
  ReaderRequest counted(req, !Config(req).fs->IsControl(ino));
  auto value = Config(req).fs->GetXattr(ino, name);
  if (!value.ok()) {
    fuse_reply_err(req, ToErrno(value.status()));
  } else if (!value->has_value()) {
    fuse_reply_err(req, ENODATA);
  } else {
    ReplyXattr(req, **value, size);
  }
}

void OnListxattr(fuse_req_t req, fuse_ino_t ino, size_t size) {
  ReaderRequest counted(req, !Config(req).fs->IsControl(ino));
  auto names = Config(req).fs->ListXattr(ino);
  if (!names.ok()) {
    fuse_reply_err(req, ToErrno(names.status()));
    return;
  }
  std::string list;
  for (const std::string& n : *names) {
    list += n;
    list += '\0';
  }
  ReplyXattr(req, list, size);
}

// Python's open() calls isatty() (TCGETS) on every file, and the kernel forwards every ioctl of a
// FUSE file to the daemon, whatever it answered before: a round trip per open even when the data
// is in the page cache (docs/guide.md, "Warm reads from Python"). "Not a terminal" is what isatty()
// expects.
void OnIoctl(fuse_req_t req, fuse_ino_t ino, unsigned int /*cmd*/, void* /*arg*/,
             fuse_file_info* /*fi*/, unsigned /*flags*/, const void* /*in_buf*/,
             size_t /*in_bufsz*/, size_t /*out_bufsz*/) {
  FuseOpsConfig& cfg = Config(req);
  ReaderRequest counted(req, !cfg.fs->IsControl(ino));  // with the push it waits for
  Status s = cfg.fs->Ioctl(ino);
  // The read comes after the reply. On a ring thread the wait is bounded by the pusher's
  // max_wait alone: the READ a push may wait on could be queued behind it on the same ring.
  QueuePush(cfg, ino, StreamOf(req), /*wait=*/true);
  fuse_reply_err(req, ToErrno(s));
}

void Refuse(fuse_req_t req) {
  ReaderRequest counted(req, true);
  fuse_reply_err(req, ToErrno(Config(req).fs->RefuseWrite()));
}
void OnSetattr(fuse_req_t req, fuse_ino_t, struct stat*, int, fuse_file_info*) { Refuse(req); }
void OnMknod(fuse_req_t req, fuse_ino_t, const char*, mode_t, dev_t) { Refuse(req); }
void OnMkdir(fuse_req_t req, fuse_ino_t, const char*, mode_t) { Refuse(req); }
void OnUnlink(fuse_req_t req, fuse_ino_t, const char*) { Refuse(req); }
void OnSymlink(fuse_req_t req, const char*, fuse_ino_t, const char*) { Refuse(req); }
void OnRename(fuse_req_t req, fuse_ino_t, const char*, fuse_ino_t, const char*, unsigned) {
  Refuse(req);
}
void OnLink(fuse_req_t req, fuse_ino_t, fuse_ino_t, const char*) { Refuse(req); }
void OnWrite(fuse_req_t req, fuse_ino_t, const char*, size_t, off_t, fuse_file_info*) {
  Refuse(req);
}
void OnCreate(fuse_req_t req, fuse_ino_t, const char*, mode_t, fuse_file_info*) { Refuse(req); }
void OnSetxattr(fuse_req_t req, fuse_ino_t, const char*, const char*, size_t, int) {
  Refuse(req);
}
void OnRemovexattr(fuse_req_t req, fuse_ino_t, const char*) { Refuse(req); }

fuse_lowlevel_ops MakeOperations() {
  fuse_lowlevel_ops ops;
  std::memset(&ops, 0, sizeof ops);
  ops.init = OnInit;
  ops.lookup = OnLookup;
  ops.forget = OnForget;
  ops.forget_multi = OnForgetMulti;
  ops.getattr = OnGetattr;
  ops.readlink = OnReadlink;
  ops.open = OnOpenNoOpen;
  ops.read = OnRead;
  ops.opendir = OnOpendir;
  ops.readdir = OnReaddir;
  ops.readdirplus = OnReaddirplus;
  ops.statfs = OnStatfs;
  ops.getxattr = OnGetxattr;
  ops.listxattr = OnListxattr;
  ops.setattr = OnSetattr;
  ops.mknod = OnMknod;
  ops.mkdir = OnMkdir;
  ops.unlink = OnUnlink;
  ops.rmdir = OnUnlink;
  ops.symlink = OnSymlink;
  ops.rename = OnRename;
  ops.link = OnLink;
  ops.write = OnWrite;
  ops.create = OnCreate;
  ops.setxattr = OnSetxattr;
  ops.removexattr = OnRemovexattr;
  ops.ioctl = OnIoctl;
  // flush, release, releasedir: left unset on purpose (see the header).
  return ops;
}

}  // namespace

void PushPrefetched(FuseOpsConfig& cfg, fuse_ino_t ino, uint64_t stream, bool wait) {
  if (!cfg.push_prefetched || cfg.session == nullptr) return;
  const size_t max_bytes = size_t{cfg.effective_read_ahead_kb} * 1024;
  fuse_session* session = cfg.session;
  const bool held = cfg.fs->Push(ino, stream, max_bytes, wait, [&](const char* data, size_t size) {
    fuse_bufvec buf = FUSE_BUFVEC_INIT(size);
    buf.buf[0].mem = const_cast<char*>(data);
    // Not spliced: libfuse would log the expected ENOENT of a push that beats the inode.
    return fuse_lowlevel_notify_store(session, ino, 0, &buf, FUSE_BUF_NO_SPLICE);
  });
  // The RAM tier kept the pushed file: its pages go once the reader has had time to read them.
  if (held && cfg.dropper != nullptr) cfg.dropper->QueueLater(ino);
}

const fuse_lowlevel_ops& FuseOperations() {
  static const fuse_lowlevel_ops ops = MakeOperations();
  return ops;
}

}  // namespace mmfs::fs
