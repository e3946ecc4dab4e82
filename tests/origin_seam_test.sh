#!/usr/bin/env bash
# Every shard byte goes through the origin (fs/origin/origin.h): outside fs/origin/, no source
# file of the daemon, the tools or the fuzzers may open, read, map or advise a file by a call that
# could reach a shard, unless the allowlist below names the file, the call, how many times it
# makes it and why that is not a shard. A new call (a `::pread` in fs/read/view_files.cc, an
# O_DIRECT open in fs/format/dataset.cc) fails this test; so does an allowlisted count that no
# longer matches (update the line, or remove it when the call is gone).
#
# Comments and string literals are not code: they are removed before matching. The unit and
# mount tests (tests/ outside tests/fuzz/) damage and inspect shard files on purpose and are not
# checked.
#
# Usage: origin_seam_test.sh [SOURCE_DIR]; exits 1 with the offending calls listed.
set -euo pipefail

root="${1:-$(cd "$(dirname "$0")/.." && pwd)}"

# The calls, by name: extended regular expressions.
declare -A PATTERNS=(
  [pread]='(::|\b)pread(64|v|v2)?[[:space:]]*\('
  [read]='::read[[:space:]]*\('
  [PreadFull]='\bPreadFull[[:space:]]*\('
  [open]='(::|\b)open(at|64)?[[:space:]]*\('
  [fopen]='\bfopen[[:space:]]*\('
  [fstream]='\b(i|o)?fstream\b'
  [OpenFile]='\bOpenFile[[:space:]]*\('
  [OpenDatasetFile]='\bOpenDatasetFile[[:space:]]*\('
  [ReadDatasetFile]='\bReadDatasetFile[[:space:]]*\('
  [ReadWholeFile]='\bReadWholeFile[[:space:]]*\('
  [HashFile]='\bHashFile[[:space:]]*\('
  [O_DIRECT]='\bO_DIRECT\b'
  [mmap]='\bmmap(64)?[[:space:]]*\('
  [fadvise]='\bposix_fadvise[[:space:]]*\('
  [lmdb]='\bmdb_env_open[[:space:]]*\('
)

# file | call | count | why it is not a shard read
ALLOWLIST=$(cat <<'LIST'
base/file_util.h|PreadFull|1|the generic helpers' declarations
base/file_util.h|OpenFile|1|the generic helpers' declarations
base/file_util.h|ReadWholeFile|1|the generic helpers' declarations
base/file_util.h|HashFile|1|the generic helpers' declarations
base/file_util.cc|pread|1|the generic helper PreadFull itself
base/file_util.cc|read|2|the generic helpers ReadWholeFile and HashFile themselves
base/file_util.cc|open|1|the generic helper OpenFile itself
base/file_util.cc|OpenFile|5|the generic helpers (whole files, fsync, durable writes, hashing)
base/file_util.cc|PreadFull|1|the generic helper's definition
base/file_util.cc|ReadWholeFile|1|the generic helper's definition
base/file_util.cc|HashFile|1|the generic helper's definition
fs/memory/memory_budget.cc|fstream|3|cgroup and /proc files of the memory plan
fs/fuse/auto_unmount.cc|read|1|the auto_unmount watcher's pipe from the daemon
fs/fuse/transport.cc|ReadWholeFile|1|the kernel's enable_uring parameter in sysfs
base/mount_table.cc|fstream|2|/proc/self/mountinfo
fs/format/dataset.cc|OpenDatasetFile|1|the index, mapped (index handling stays in Dataset)
fs/format/dataset.cc|ReadDatasetFile|1|the manifest
fs/format/dataset.cc|mmap|1|the index mapping
fs/format/view_set.cc|OpenDatasetFile|1|a view's index, mapped
fs/format/view_set.cc|ReadDatasetFile|1|a view's manifest
fs/format/view_set.cc|mmap|1|a view's index mapping
fs/format/dataset_writer.cc|lmdb|2|the packer's writer: the shard it is writing and, once written, reading it back for its values' offsets (no dataset and no origin exist yet)
fs/format/dataset_writer.cc|OpenFile|1|the writer creating the index
fs/format/dataset_writer.cc|fstream|2|/proc/self/maps (the writer's mapped size)
fs/format/view_writer.cc|OpenFile|1|the view writer creating a view index
fs/control/line_pipe.cc|open|1|the hint and control FIFOs
fs/control/line_pipe.cc|read|1|the hint and control FIFOs
fs/readers/proc_reader.cc|ReadWholeFile|5|/proc of the reader processes
fs/fuse/fuse_ops.cc|OpenFile|1|sysfs read_ahead_kb of the FUSE connection
fs/fuse/fuse_server.cc|open|1|/proc/self/mountinfo
fs/fuse/fuse_server.cc|read|1|/proc/self/mountinfo
fs/fuse/unmount.cc|open|3|/dev/null and the mount point's directories
fs/fuse/unmount.cc|read|1|a pipe from the unmount child
cache/cache_dir.cc|open|3|the SSD tier's own cache directories
cache/cache_dir.cc|fstream|4|/proc/locks; /proc/self/uid_map and overflowuid (the user namespace's owners)
tools/mmfs/huge_page_heap.cc|ReadWholeFile|2|the kernel's transparent huge page setting and /proc/self/cmdline
cache/ssd_tier.cc|open|2|the SSD tier's own cache files
cache/ssd_disk.h|PreadFull|1|the SSD tier's own cache files, read through its disk seam
tools/gen/gen_dataset.cc|fopen|1|writes generated source images
tools/mmfs/cmd_inspect.cc|HashFile|1|mmfs verify: the index's checksum (the shards are hashed through the origin)
tools/mmfs/remote_dataset.cc|HashFile|1|a URL's local copy: the cached index's checksum (the shards are remote)
tools/mmfs/remote_dataset.cc|open|1|a URL's local copy: a stale view's folder, to remove its manifest (no shard)
tools/mmfs/cmd_warmup.cc|OpenFile|1|the mount's control FIFO
tools/mmfs/cmd_warmup.cc|open|1|files on the mount, to drop their page cache (mmfs warmup evict)
tools/mmfs/cmd_warmup.cc|fadvise|1|files on the mount, to drop their page cache (mmfs warmup evict)
tools/mmfs/daemonize.cc|open|2|/dev/null (stdin at the fork, stdout and stderr once serving)
tools/mmfs/daemonize.cc|read|1|the readiness pipe
tools/mmfs/stats_client.cc|ReadWholeFile|1|the mount's .mmfs/stats
tools/mmfs/what_if_view.cc|ReadWholeFile|1|gnuplot's error output
tools/pack/captions.cc|ReadWholeFile|2|the source's metadata (CSV, JSONL, COCO)
tools/pack/sample_pipeline.cc|OpenFile|1|source files being packed
tools/pack/sample_pipeline.cc|PreadFull|2|source files being packed
tools/pack/sample_pipeline.cc|pread|1|source files being packed (the byte past the expected end)
tools/pack/shard_sequence.cc|HashFile|1|a shard a pack or view build has just written, for its manifest (no dataset and no origin exist yet)
tools/pack/source_access.cc|open|2|source directories
tools/pack/tar_grouping.cc|PreadFull|1|the tar reader's spill file
tools/stage/checkpoint_file.cc|OpenFile|2|the checkpoint of a pack or view build
tools/stage/checkpoint_file.cc|ReadWholeFile|2|the checkpoint of a pack or view build
tools/view/view_verify.cc|HashFile|1|mmfs verify: a view index's checksum (its shards are hashed through the origin)
tests/fuzz/fuzz_index.cc|ReadWholeFile|1|the template dataset's manifest, which the fuzzer rewrites
tests/fuzz/fuzz_util.h|OpenFile|1|writes the fuzzers' input files
LIST
)

# The code of a file: string literals and // comments removed.
code_of() { sed -E 's#"([^"\\]|\\.)*"#""#g; s#//.*$##' "$1"; }

# Copies each file named on stdin (relative to the current directory) into directory $1 as its
# code only.
strip_into() {
  local f
  while read -r f; do
    mkdir -p "$1/$(dirname "$f")"
    code_of "$f" >"$1/$f"
  done
}

# "FILE CALL COUNT" for each call each file under directory $1 makes, one line each.
count_calls() {
  (cd "$1" && for call in "${!PATTERNS[@]}"; do
     { grep -roE "${PATTERNS[$call]}" . || true; } | sed -E 's#^\./##; s#:.*$##' | sort | uniq -c |
       awk -v call="$call" '{ print $2, call, $1 }'
   done)
}

# Compares the calls found (stdin: "FILE CALL COUNT") with the allowlist; prints each mismatch.
# With `only_found`, allowlist lines of files not scanned are not reported as stale.
compare() {
  local only_found="${1:-}"
  declare -A found=() allowed=() scanned=()
  while read -r file call n; do
    found["$file|$call"]=$n
    scanned["$file"]=1
  done
  while IFS='|' read -r file call n why; do
    [ -z "$file" ] && continue
    allowed["$file|$call"]=$n
  done <<<"$ALLOWLIST"
  local bad=0
  for key in "${!found[@]}"; do
    local want="${allowed[$key]:-0}"
    if [ "${found[$key]}" != "$want" ]; then
      echo "${key%%|*}: ${found[$key]} call(s) of ${key#*|} (${PATTERNS[${key#*|}]}), allowlisted: $want"
      bad=1
    fi
  done
  for key in "${!allowed[@]}"; do
    [ -n "${found[$key]:-}" ] && continue
    [ -n "$only_found" ] && [ -z "${scanned[${key%%|*}]:-}" ] && continue
    echo "${key%%|*}: no call of ${key#*|} any more, allowlisted: ${allowed[$key]} (remove the line)"
    bad=1
  done
  return $bad
}

cd "$root"

# Self-check: a read of a shard put back where the origin took it from must be caught.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
selfcheck_failed=0
for file in fs/read/view_files.cc fs/format/dataset.cc; do
  for line in '  ::pread(fd, out, len, offset);' \
              '  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECT);' \
              '  MMFS_RETURN_IF_ERROR(PreadFull(fd, out, len, offset, path));'; do
    rm -rf "$tmp/self"
    echo "$file" | strip_into "$tmp/self"
    printf '%s\n' "$line" >>"$tmp/self/$file"
    if count_calls "$tmp/self" | compare only_found >/dev/null; then
      echo "self-check: '$line' added to $file was not caught"
      selfcheck_failed=1
    fi
  done
done
[ "$selfcheck_failed" = 0 ] || exit 1

find base fs cache tools tests/fuzz -type f \( -name '*.cc' -o -name '*.h' \) -not -path 'fs/origin/*' |
  sort | strip_into "$tmp/all"
if ! count_calls "$tmp/all" | compare; then
  echo "Shard bytes are read through the origin (fs/origin/origin.h, docs/architecture.md);"
  echo "a call above that reaches no shard belongs in the allowlist of $0, with its reason."
  exit 1
fi
echo "origin seam: $(find "$tmp/all" -type f | wc -l) files checked, every shard read goes through fs/origin/"
