#!/bin/sh
# make-man.sh MMFS SUBCOMMAND VERSION OUT: a man page from `MMFS SUBCOMMAND --help` (help2man),
# so the page and --help cannot drift apart. An empty SUBCOMMAND makes mmfs(1).
set -eu
mmfs=$1 sub=$2 version=$3 out=$4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
name=mmfs${sub:+-$sub}
# help2man runs a program by name; a wrapper turns "mmfs-pack --help" into "mmfs pack --help".
printf '#!/bin/sh\nexec "%s" %s "$@"\n' "$mmfs" "$sub" > "$dir/$name"
chmod +x "$dir/$name"
case "$sub" in
  "") what="image-caption datasets as fast read-only files for training" ;;
  pack) what="pack image-caption datasets into LMDB shards" ;;
  mount) what="mount a packed dataset read-only" ;;
  umount) what="unmount an mmfs mount" ;;
  stats) what="show what an mmfs mount and its caches are doing" ;;
  verify) what="check every shard and file of a packed dataset" ;;
  info) what="describe a packed dataset" ;;
  view) what="build, list and remove smaller-image views of a dataset" ;;
  warmup) what="load files into the cache tiers, show residency, evict" ;;
  *) what="mmfs $sub" ;;
esac
help2man --no-info --no-discard-stderr --version-string="$version" --name="$what" \
  --section=1 --output="$out" "$dir/$name"
