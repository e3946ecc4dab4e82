#!/usr/bin/env bash
# Builds libfuse 3.18 or later with FUSE-over-io_uring into a private prefix, for mmfs's io_uring
# transport (docs/architecture.md, "How requests reach the daemon"). Debian 12 ships libfuse
# 3.14, which has no io_uring; Debian's own newer packages (sid) are built without it and need a
# newer glibc. So this takes the upstream tarball of Debian's newest fuse3 source package of 3.18
# or later that the machine's own apt mirror has (unstable or testing), checked the way apt
# checks a package: the suite's InRelease against Debian's archive keyring (gpgv), Sources.xz
# against the hash InRelease lists, the tarball against the hash Sources lists. It then builds a
# static library with bookworm's meson, liburing and libnuma.
#   bash tools/build-libfuse-uring.sh [PREFIX]     default /opt/mmfs-libfuse
# mmfs's CMake build picks PREFIX up when it is there (MMFS_LIBFUSE_PREFIX); without it mmfs
# builds against the system's libfuse and serves over /dev/fuse only.
# Only the library and headers are installed: mounts keep using Debian's setuid fusermount3
# (the mount protocol is unchanged between 3.14 and 3.18). Run as root; safe to run again:
# an existing io_uring build of 3.18 or later is kept.
set -euo pipefail
prefix=${1:-/opt/mmfs-libfuse}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

if [[ -f $prefix/.mmfs-built-with-io-uring && -f $prefix/lib/pkgconfig/fuse3.pc ]]; then
  have=$(sed -n 's/^Version: //p' "$prefix/lib/pkgconfig/fuse3.pc")
  if [[ -n $have ]] && dpkg --compare-versions "$have" ge 3.18; then
    echo "libfuse $have with io_uring: already in $prefix"
    exit 0
  fi
fi

export DEBIAN_FRONTEND=noninteractive
apt-get install -y -q --no-install-recommends meson ninja-build liburing-dev libnuma-dev \
  pkg-config gcc curl ca-certificates xz-utils gpgv debian-archive-keyring

# The mirror the machine installs Debian from: its apt sources (deb822 or one-line), the entry
# for the main archive (not the security one).
mirror=$(awk '/^URIs:/ {u = $2} /^Suites:/ && u != "" && $0 !~ /-security/ {print u; exit}
              /^$/ {u = ""}' /etc/apt/sources.list.d/*.sources 2> /dev/null || true)
if [[ -z $mirror && -f /etc/apt/sources.list ]]; then
  mirror=$(awk '$1 == "deb" && $0 !~ /-security/ {for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) {print $i; exit}}' \
             /etc/apt/sources.list)
fi
if [[ -z $mirror ]]; then
  echo "build-libfuse-uring: no Debian mirror in /etc/apt/sources.list{,.d} to take fuse3's source from" >&2
  exit 1
fi
mirror=${mirror%/}

work=$(mktemp -d /tmp/mmfs-libfuse.XXXXXX)
trap 'rm -rf "$work"' EXIT
fetch() { curl -fsSL --retry 3 -o "$2" "$1"; }
# For each suite that may carry 3.18 or later: the fuse3 source stanza, if its chain checks.
best_version="" best_dir="" best_tarball="" best_sha256=""
for suite in unstable testing; do
  if ! fetch "$mirror/dists/$suite/InRelease" "$work/InRelease-$suite" ||
     ! gpgv --keyring "$keyring" --output "$work/Release-$suite" "$work/InRelease-$suite" \
       2> "$work/gpgv-$suite.log"; then
    echo "build-libfuse-uring: $mirror/dists/$suite/InRelease: missing or not signed by a key in $keyring; skipped" >&2
    continue
  fi
  sources_sha=$(awk '/^SHA256:/ {s = 1; next} /^[^ ]/ {s = 0}
                     s && $3 == "main/source/Sources.xz" {print $1; exit}' "$work/Release-$suite")
  if [[ -z $sources_sha ]] || ! fetch "$mirror/dists/$suite/main/source/Sources.xz" "$work/Sources-$suite.xz" ||
     ! echo "$sources_sha  $work/Sources-$suite.xz" | sha256sum -c --quiet - 2> /dev/null; then
    echo "build-libfuse-uring: $suite's Sources.xz does not match its InRelease; skipped" >&2
    continue
  fi
  # The fuse3 stanza: its version, directory, and the orig tarball's SHA-256.
  read -r version dir tarball sha256 < <(xz -dc "$work/Sources-$suite.xz" | awk '
      BEGIN {RS = ""; FS = "\n"}
      $1 == "Package: fuse3" {
        v = d = t = h = ""; inside = 0
        for (i = 1; i <= NF; i++) {
          if ($i ~ /^Version: /) v = substr($i, 10)
          else if ($i ~ /^Directory: /) d = substr($i, 12)
          else if ($i ~ /^Checksums-Sha256:/) inside = 1
          else if ($i !~ /^ /) inside = 0
          else if (inside && $i ~ /orig\.tar\.(gz|xz)$/) { split($i, f, " "); h = f[1]; t = f[3] }
        }
        if (v != "" && d != "" && t != "") { print v, d, t, h; exit }
      }') || true
  [[ -n ${version:-} && -n ${sha256:-} ]] || continue
  upstream=${version%-*}
  upstream=${upstream#*:}
  dpkg --compare-versions "$upstream" ge 3.18 || continue
  if [[ -z $best_version ]] || dpkg --compare-versions "$upstream" gt "$best_version"; then
    best_version=$upstream best_dir=$dir best_tarball=$tarball best_sha256=$sha256
  fi
done
if [[ -z $best_version ]]; then
  echo "build-libfuse-uring: $mirror has no fuse3 source of 3.18 or later in unstable or testing whose signatures check" >&2
  exit 1
fi
version=$best_version tarball=$best_tarball
echo "build-libfuse-uring: fuse3 $version from $mirror/$best_dir (InRelease signed, hashes checked)"
fetch "$mirror/$best_dir/$tarball" "$work/$tarball"
if ! echo "$best_sha256  $work/$tarball" | sha256sum -c --quiet - 2> /dev/null; then
  echo "build-libfuse-uring: $tarball does not have the SHA-256 its signed Sources lists" >&2
  exit 1
fi
tar -xf "$work/$tarball" -C "$work"
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
