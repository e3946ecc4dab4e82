#!/usr/bin/env bash
# Installs the Debian 12 packages mmfs needs, on a machine that has nothing else: the fresh-root
# check (tools/fresh-check.sh) runs this in a `debootstrap --variant=minbase bookworm` root, so a
# package missing here fails CI.
#   bash tools/install-deps.sh           build, demo and every test (the README test command),
#                                        and s3rver (npm) in /opt/mmfs-test-servers for the S3 tests
#   bash tools/install-deps.sh --demo    only what tools/demo.sh needs: build mmfs, read with torch
#   bash tools/install-deps.sh --bench   everything, plus the benchmark peers and profilers
# Run as root. Safe to run again: apt-get and the s3rver step skip what is already installed.
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
  # S3 bucket listings (ListObjectsV2's XML pages), read with libxml2
  libxml2-dev
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
  # the remote origins' tests: shards from a local web server (over TLS too, with a CA made
  # with openssl) and from an S3 API server, s3rver, which Debian 12 does not ship: npm installs
  # it below, with Debian's node; curl puts their objects and drives the tests' fault proxy
  nginx-light openssl curl nodejs
  # the Debian package: cpack's dpkg-shlibdeps (needs file), man pages from --help (help2man) and
  # their check (man-db), the completion it installs
  help2man man-db file dpkg-dev bash-completion
  # mmfs stats --plot draws with gnuplot
  gnuplot-nox
  # clang: the ASan+UBSan build and the libFuzzer targets (tests/fuzz), and its sanitizer runtimes
  clang libclang-rt-14-dev
  # clients the tests read the mount with, and what the tests run them with
  diffutils findutils util-linux mount tar gzip fio
  # the fresh-root check: a minimal Debian root, made from the machine's own mirror; ccache
  # keeps the release stage's compiles for the same build in that root (tools/run-tests.sh)
  debootstrap ccache
)
case "$profile" in
  --demo) packages=("${demo[@]}") ;;
  --all) packages=("${demo[@]}" "${tests[@]}") ;;
  --bench) packages=("${demo[@]}" "${tests[@]}" squashfs-tools squashfuse time linux-perf valgrind
                    awscli rclone s3fs) ;;
  *) echo "usage: $0 [--demo | --all | --bench]" >&2; exit 2 ;;
esac
test_servers=0
if [[ $profile != --demo ]]; then
  test_servers=1
  # Debian's npm, unless a node that brings its own is installed (NodeSource's nodejs package
  # has npm inside and conflicts with Debian's).
  command -v npm > /dev/null || packages+=(npm)
fi
apt-get update -q
apt-get install -y -q --no-install-recommends "${packages[@]}"

# libfuse 3.18 with io_uring, static, in a prefix of its own, for the io_uring transport (the
# demo builds against Debian's libfuse 3.14 and serves over /dev/fuse).
if [[ $profile != --demo ]]; then
  bash "$(dirname "${BASH_SOURCE[0]}")/build-libfuse-uring.sh"
fi

# s3rver for the S3 tests (tests/s3rver_helper.h), in a prefix of its own so that nothing else
# on the machine sees its node modules; skipped when that version is there already.
s3rver_version=3.7.1
s3rver_prefix=/opt/mmfs-test-servers
if [[ $test_servers == 1 &&
      $("$s3rver_prefix/node_modules/.bin/s3rver" --version 2> /dev/null) != "$s3rver_version" ]]; then
  npm install --no-audit --no-fund --prefix "$s3rver_prefix" "s3rver@$s3rver_version"
fi
