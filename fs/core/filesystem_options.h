// FilesystemOptions: what a mount asks of the filesystem core (tools/mmfs/cmd_mount.cc sets
// them from its options; tests directly).
//
// Thread-safety: a plain value.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "base/heap_prefaulter.h"
#include "cache/access_pattern.h"
#include "fs/read/extent_types.h"
#include "fs/readahead/fill_types.h"

namespace mmfs::fs {

struct FilesystemOptions {
  uint64_t ram_cache_bytes = 256ull << 20;
  // Drop a shard's page-cache pages once their file is verified and cached: the bytes are then
  // held by the kernel's cache of the mount and the RAM tier, not a third time (docs/cache.md;
  // the origin's drop-behind advice, fs/origin/origin.h).
  bool drop_origin_pages = true;
  // Read samples from the shards with O_DIRECT where the filesystem allows it: no page cache
  // work and no kernel copy for bytes the tiers keep anyway (the origin's direct I/O advice,
  // fs/origin/local_file_origin.h).
  bool direct_reads = true;
  // Lock the index's pages in memory once read (format::Dataset::LockIndex): an evicted index
  // page is a disk read inside a lookup. The mount turns it on in shared-limit mode, whose plan
  // reserves the index; locked pages are not given back after a listing (ReleaseChildren).
  bool lock_index = false;
  // Readahead: a miss loads the file's whole sample (k.jpg brings k.txt, k.json) in one read and
  // keeps the other members in the prefetch buffer for their reader; access patterns and the
  // hint prefetch on the workers.
  bool readahead = true;
  uint64_t prefetch_buffer_bytes = 64ull << 20;
  // Extent reads on demand misses from a slow origin (extent_reader.h, `-o extents=`).
  ExtentOptions extents;
  int prefetch_threads = 2;
  cache::ReadaheadConfig readahead_config;
  // The largest file loaded whole into memory (for the tiers, the read buffer, a prefetch). A
  // larger one, or one that neither the RAM tier could admit nor the read buffer hold, is
  // verified once by streaming, then read by range (ranged_reader.h).
  uint64_t max_cached_file_bytes = 64ull << 20;
  // Holds files read in several READs that the RAM tier did not keep (cache/read_buffer.h).
  uint64_t read_buffer_bytes = 64ull << 20;
  // Where `.mmfs/hint` points (the hint FIFO); empty: no hint file.
  std::string hint_target;
  // Other users may write hints (allow_other makes the FIFO 0666): a hint line counts only for
  // a file every user may read (o+r, o+x on each folder above it); any other line counts as one
  // that names no file, so that hints and their counters in `.mmfs/stats` tell nobody what a
  // folder they cannot open holds.
  bool hint_open_to_all_only = false;
  // Where `.mmfs/control` points (the control FIFO of mmfs warmup); empty: none.
  std::string control_target;
  // The mount point, so that hint and control lines may be absolute paths under it.
  std::string mountpoint;
  // Where `.mmfs` points when it is a symlink (kControlDirDirectName); empty: it is the control
  // directory itself.
  std::string control_link_target;
  // `mmfs mount --view N`: the root is view N's root (view_namespace.h); 0: the original tree.
  // A side the dataset has no view of serves the original tree (cmd_mount refuses it first).
  uint32_t root_view = 0;
  // The daemon's malloc heap is on transparent huge pages (tools/mmfs/huge_page_heap.h); only
  // reported in the stats.
  bool heap_on_huge_pages = false;
  // The heap's prefaulter, when the daemon started one (base/heap_prefaulter.h; it outlives the
  // Filesystem); only reported in the stats. The RAM tier is handed its nudge where the tier
  // stack is built.
  const HeapPrefaulter* heap_prefaulter = nullptr;
  // Attribute request time to reader processes (reader_accounting.h): `mmfs stats` "Readers".
  bool reader_accounting = true;
  // A READ whose bytes need a remote or slow origin is served on a miss thread
  // (fs/read/miss_queue.h), at most this many at once, so that request threads stay free for
  // hits; 0: on the request thread.
  unsigned miss_threads = 16;
  // A failing READ fails within this, counted from its arrival (a remote origin's retry budget).
  std::chrono::milliseconds read_bound{30000};
  // Fetch the dataset into the cache ahead of its readers (fs/readahead/filler.h); the mount
  // sets auto for a dataset from a URL.
  FillOptions fill;
};

}  // namespace mmfs::fs
