#!/usr/bin/env bash
# Builds libfuse 3.18 with FUSE-over-io_uring into a private prefix, for mmfs's io_uring
# transport (docs/architecture.md, "How requests reach the daemon"). Debian 12 ships libfuse
# 3.14, which has no io_uring; Debian's own 3.18 packages (sid) are built without it and need a
# newer glibc. So this takes Debian's source package's upstream tarball, checks it against a
# pinned SHA-256, and builds a static library with bookworm's meson, liburing and libnuma.
#   bash tools/build-libfuse-uring.sh [PREFIX]     default /opt/mmfs-libfuse
# mmfs's CMake build picks PREFIX up when it is there (MMFS_LIBFUSE_PREFIX); without it mmfs
# builds against the system's libfuse and serves over /dev/fuse only.
# Only the library and headers are installed: mounts keep using Debian's setuid fusermount3
# (the mount protocol is unchanged between 3.14 and 3.18). Run as root; safe to run again:
# an existing build of the same version is kept.
set -euo pipefail
prefix=${1:-/opt/mmfs-libfuse}
version=3.18.3
sha256=bcd19582c5e30f7fe45dd86a5540e998590aa01903afc7ebcbeea6c8ac5421ee
sha1=c12352890442eafc751e892021f950d1f3726f62
tarball=fuse3_${version}.orig.tar.gz
# The pool holds the file while sid carries that version; snapshot.debian.org keeps it for good.
urls=(
  "http://deb.debian.org/debian/pool/main/f/fuse3/$tarball"
  "https://snapshot.debian.org/file/$sha1"
)

if [[ -f $prefix/lib/pkgconfig/fuse3.pc ]] &&
   grep -q "^Version: $version\$" "$prefix/lib/pkgconfig/fuse3.pc" &&
   [[ -f $prefix/.mmfs-built-with-io-uring ]]; then
  echo "libfuse $version with io_uring: already in $prefix"
  exit 0
fi

export DEBIAN_FRONTEND=noninteractive
apt-get install -y -q --no-install-recommends meson ninja-build liburing-dev libnuma-dev \
  pkg-config gcc curl ca-certificates

work=$(mktemp -d /tmp/mmfs-libfuse.XXXXXX)
trap 'rm -rf "$work"' EXIT
got=0
for url in "${urls[@]}"; do
  if curl -fsSL --retry 3 -o "$work/$tarball" "$url" &&
     echo "$sha256  $work/$tarball" | sha256sum -c --quiet -; then
    got=1
    break
  fi
  echo "build-libfuse-uring: $url did not give the pinned $tarball; trying the next source" >&2
done
if [[ $got != 1 ]]; then
  echo "build-libfuse-uring: cannot fetch $tarball with SHA-256 $sha256" >&2
  exit 1
fi
tar -xzf "$work/$tarball" -C "$work"
src=$work/fuse-$version
# Static, so that nothing else on the machine sees a second libfuse; no utilities (fusermount3
# stays Debian's), examples or tests. meson leaves io_uring out silently when liburing or libnuma
# is missing: the check below makes that an error.
meson setup "$work/build" "$src" --prefix="$prefix" --libdir=lib --buildtype=release \
  -Ddefault_library=static -Denable-io-uring=true -Dexamples=false -Dutils=false \
  -Dtests=false -Duseroot=false -Dinitscriptdir= > "$work/meson.log" ||
  { cat "$work/meson.log" >&2; exit 1; }
if ! grep -q "^#define HAVE_URING" "$work/build/fuse_config.h"; then
  echo "build-libfuse-uring: meson configured libfuse without io_uring (see below)" >&2
  cat "$work/meson.log" >&2
  exit 1
fi
ninja -C "$work/build" > /dev/null
rm -rf "$prefix"
ninja -C "$work/build" install > /dev/null
touch "$prefix/.mmfs-built-with-io-uring"
echo "libfuse $version with io_uring: installed in $prefix"
