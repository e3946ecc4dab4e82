#!/usr/bin/env bash
# test-install.sh BUILD_DIR [DEB]: what `cmake --install` gives a user who builds mmfs themselves.
# Installs BUILD_DIR into a throwaway prefix, then, with the installed files only: `mmfs --version`,
# packs a small dataset, mounts it through the installed mount helper (as fstab would run it),
# reads it back (diff -r), checks `mmfs stats`, unmounts. With DEB (the package CPack built from the
# same build), the prefix must hold the same files as the package. Needs root (mount); leaves no
# mount and no files behind, even on failure.
set -euo pipefail
build=$(cd "${1:?usage: test-install.sh BUILD_DIR [DEB]}" && pwd)
deb=${2:-}
work=$(mktemp -d /tmp/mmfs-install-test.XXXXXX)
prefix=$work/prefix
cleanup() {
  if mountpoint -q "$work/mnt" 2> /dev/null; then fusermount3 -u -z "$work/mnt" || umount -l "$work/mnt" || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'echo "test-install.sh: line $LINENO failed: $BASH_COMMAND" >&2' ERR
step() { echo "=== install: $*"; }

step "cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" > "$work/install.log" || { cat "$work/install.log"; exit 1; }
mmfs=$prefix/bin/mmfs
test -x "$mmfs"
version=$("$mmfs" --version)
echo "$version"
[[ $version == *mmfs* ]]

if [[ -n $deb ]]; then
  step "the prefix holds what $(basename "$deb") installs"
  (cd "$prefix" && find . -type f -o -type l | sed 's|^\./||' | sort) > "$work/prefix.files"
  dpkg-deb -c "$deb" | awk '$1 !~ /^d/ {print $6}' | sed 's|^\./usr/||' | sort > "$work/deb.files"
  if ! diff -u "$work/deb.files" "$work/prefix.files"; then
    echo "the .deb (-) and cmake --install (+) install different files"; exit 1
  fi
fi

step "pack, mount with the installed helper, read back"
"$build/mmfs-gen-dataset" "$work/src" -n 40 -c 2 --min-side 64 --max-side 128 --seed 9 > /dev/null
"$mmfs" pack -q "$work/src" "$work/data.mmfs"
mkdir "$work/mnt"
"$prefix/sbin/mount.fuse.mmfs" "$work/data.mmfs" "$work/mnt" -o ro,ram_cache=32M
mountpoint -q "$work/mnt"
diff -r "$work/src" "$work/mnt"
stats=$("$mmfs" stats "$work/mnt" --json)   # not piped into grep -q: with pipefail, an early exit fails
[[ $stats == *'"origin"'* ]]
"$mmfs" umount "$work/mnt"
! mountpoint -q "$work/mnt"
echo "=== install: OK"
