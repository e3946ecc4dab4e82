#!/usr/bin/env bash
# Installs the Debian 12 packages mmfs needs, on a machine that has nothing else: the fresh-root
# check (tools/fresh-check.sh) runs this in a `debootstrap --variant=minbase bookworm` root, so a
# package missing here fails CI.
#   bash tools/install-deps.sh           build, demo and every test (the README test command)
#   bash tools/install-deps.sh --demo    only what tools/demo.sh needs: build mmfs, read with torch
#   bash tools/install-deps.sh --bench   everything, plus the benchmark peers and profilers
# Run as root. Safe to run again: apt-get skips what is already installed.
#
# pkg-config modules pull in others through Requires/Requires.private, and CMake's
# pkg_check_modules fails when any of them is missing, even though mmfs never links it directly:
#   libmemcached -> libsasl2 (libsasl2-dev, a dependency of libmemcached-dev), libcrypto (libssl-dev,
#   NOT a dependency: listed here); libpng -> zlib (zlib1g-dev). spdlog's CMake package needs fmt.
#   vips -> 66 modules through Requires/Requires.private, every one shipped by a package in
#   libvips-dev's own dependency closure (apt-cache depends --recurse), so libvips-dev suffices.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
profile=${1:---all}
demo=(
  # build
  build-essential cmake pkg-config
  # required libraries, and what their pkg-config files require
  libfuse3-dev fuse3 liblmdb-dev libturbojpeg0-dev libxxhash-dev
  libspdlog-dev libfmt-dev libcli11-dev nlohmann-json3-dev
  libarchive-dev libpng-dev zlib1g-dev libwebp-dev libcsv-dev
  libmemcached-dev libssl-dev
  # remote origins (mount from HTTP(S) or S3): ranged GETs, TLS, SigV4 signing
  libcurl4-openssl-dev
  # views (mmfs view add) resize with libvips; its Depends bring every .pc its Requires and
  # Requires.private name (glib, expat, libexif, lcms2, librsvg, OpenEXR, ... checked one by one)
  libvips-dev
  # the demo's loader
  python3 python3-torch python3-torchvision python3-pil python3-numpy
)
tests=(
  # the tests write the JPEGs PIL cannot (arithmetic coding, restart markers) with libjpeg itself
  libgtest-dev libjpeg62-turbo-dev
  # the shards' own tools (a test reads a shard with mdb_stat), the cluster tier's servers
  lmdb-utils memcached
  # the remote origins' tests serve shards from a local web server (their S3 tests use
  # moto_server when it is on PATH: `pip install 'moto[server]'`; Debian 12 does not ship it)
  nginx-light
  # the Debian package: cpack's dpkg-shlibdeps (needs file), man pages from --help (help2man) and
  # their check (man-db), the completion it installs
  help2man man-db file dpkg-dev bash-completion
  # mmfs stats --plot draws with gnuplot
  gnuplot-nox
  # clang: the ASan+UBSan build and the libFuzzer targets (tests/fuzz), and its sanitizer runtimes
  clang libclang-rt-14-dev
  # clients the tests read the mount with, and what the tests run them with
  diffutils findutils util-linux mount tar gzip fio
  # the fresh-root check: a minimal Debian root, made from the machine's own mirror
  debootstrap
)
case "$profile" in
  --demo) packages=("${demo[@]}") ;;
  --all) packages=("${demo[@]}" "${tests[@]}") ;;
  --bench) packages=("${demo[@]}" "${tests[@]}" squashfs-tools squashfuse time linux-perf valgrind) ;;
  *) echo "usage: $0 [--demo | --all | --bench]" >&2; exit 2 ;;
esac
apt-get update -q
apt-get install -y -q --no-install-recommends "${packages[@]}"
