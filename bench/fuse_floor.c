// What FUSE itself costs on this machine: a filesystem that does nothing but answer.
//
// Its root holds `count` regular files named f0, f1, ... of `size` bytes each, served from one
// buffer in memory, so a read costs no origin and no copy of the daemon's own. Opens, flushes and
// ioctls are answered as mmfs answers them (no open handle, no flush, "not a terminal"), so a
// Python open() costs one round trip, as on an mmfs mount. bench/fuse_floor.py builds it, mounts
// it on each transport and times it against the native folder; what mmfs spends above it is mmfs's
// own work.
//
//   fuse_floor COUNT SIZE [libfuse options, e.g. -o io_uring] MOUNTPOINT
#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char* data;
static size_t file_size;
static unsigned long file_count;

static void fill_stat(fuse_ino_t ino, struct stat* st) {
  memset(st, 0, sizeof *st);
  st->st_ino = ino;
  if (ino == FUSE_ROOT_ID) {
    st->st_mode = S_IFDIR | 0755;
    st->st_nlink = 2;
  } else {
    st->st_mode = S_IFREG | 0444;
    st->st_nlink = 1;
    st->st_size = (off_t)file_size;
  }
}

static void on_lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  char* end = NULL;
  unsigned long n = name[0] == 'f' ? strtoul(name + 1, &end, 10) : 0;
  if (parent != FUSE_ROOT_ID || end == NULL || end == name + 1 || *end != '\0' ||
      n >= file_count) {
    fuse_reply_err(req, ENOENT);
    return;
  }
  struct fuse_entry_param e;
  memset(&e, 0, sizeof e);
  e.ino = FUSE_ROOT_ID + 1 + n;
  e.attr_timeout = 1e6;
  e.entry_timeout = 1e6;
  fill_stat(e.ino, &e.attr);
  fuse_reply_entry(req, &e);
}

static void on_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info* fi) {
  (void)fi;
  struct stat st;
  fill_stat(ino, &st);
  fuse_reply_attr(req, &st, 1e6);
}

// ENOSYS once: the kernel then opens and flushes without asking, as it does for mmfs.
static void on_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info* fi) {
  (void)ino;
  (void)fi;
  fuse_reply_err(req, ENOSYS);
}

static void on_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info* fi) {
  (void)ino;
  (void)fi;
  fuse_reply_err(req, ENOSYS);
}

static void on_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                    struct fuse_file_info* fi) {
  (void)ino;
  (void)fi;
  if ((size_t)off >= file_size) {
    fuse_reply_buf(req, NULL, 0);
    return;
  }
  if (size > file_size - (size_t)off) size = file_size - (size_t)off;
  fuse_reply_buf(req, data + off, size);
}

static void on_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void* arg,
                     struct fuse_file_info* fi, unsigned flags, const void* in_buf,
                     size_t in_bufsz, size_t out_bufsz) {
  (void)ino, (void)cmd, (void)arg, (void)fi, (void)flags, (void)in_buf, (void)in_bufsz,
      (void)out_bufsz;
  fuse_reply_err(req, ENOTTY);
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s COUNT SIZE [libfuse options] MOUNTPOINT\n", argv[0]);
    return 2;
  }
  file_count = strtoul(argv[1], NULL, 10);
  file_size = strtoul(argv[2], NULL, 10);
  data = malloc(file_size ? file_size : 1);
  if (data == NULL) return 1;
  for (size_t i = 0; i < file_size; i++) data[i] = (char)(i * 131 + 7);
  struct fuse_lowlevel_ops ops;
  memset(&ops, 0, sizeof ops);
  ops.lookup = on_lookup;
  ops.getattr = on_getattr;
  ops.open = on_open;
  ops.flush = on_flush;
  ops.read = on_read;
  ops.ioctl = on_ioctl;
  // argv[0], then the libfuse options; COUNT, SIZE and the mount point are ours.
  argv[2] = argv[0];
  struct fuse_args args = FUSE_ARGS_INIT(argc - 3, argv + 2);
  struct fuse_session* se = fuse_session_new(&args, &ops, sizeof ops, NULL);
  if (se == NULL || fuse_session_mount(se, argv[argc - 1]) != 0) return 1;
  struct fuse_loop_config* cfg = fuse_loop_cfg_create();
  fuse_loop_cfg_set_max_threads(cfg, 16);
  int rc = fuse_session_loop_mt(se, cfg);
  fuse_loop_cfg_destroy(cfg);
  fuse_session_unmount(se);
  fuse_session_destroy(se);
  free(data);
  return rc == 0 ? 0 : 1;
}
