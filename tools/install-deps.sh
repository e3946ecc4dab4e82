#!/usr/bin/env bash
# Installs every Debian 12 package mmfs needs to build, test, run the demo and the benchmarks.
# Run as root. Safe to run again: apt-get skips what is already installed.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
packages=(
  # build
  build-essential cmake pkg-config
  # required libraries
  libfuse3-dev fuse3 liblmdb-dev lmdb-utils libturbojpeg0-dev libxxhash-dev
  libspdlog-dev libfmt-dev libgtest-dev libcli11-dev nlohmann-json3-dev
  # tar / tar.gz inputs (WebDataset, img2dataset); PNG and WebP checks
  libarchive-dev libpng-dev libwebp-dev libcsv-dev
  # the test image corpus: arithmetic-coded and restart-marker JPEGs (libjpeg's API)
  libjpeg62-turbo-dev
  # the cluster cache tier, and the servers its tests start
  libmemcached-dev memcached
  # the Debian package: man pages from --help, the completion it installs
  help2man bash-completion dpkg-dev
  # mmfs stats --plot draws with gnuplot
  gnuplot-nox
  # libFuzzer targets (tests/fuzz): clang and its fuzzer runtime
  clang libclang-rt-14-dev
  # real loaders for the mount tests and the demo
  python3 python3-torch python3-torchvision python3-pil python3-numpy
  # clients the tests read the mount with
  diffutils findutils util-linux fio
)
if [[ "${1:-}" == "--bench" ]]; then
  packages+=(squashfs-tools squashfuse time linux-perf valgrind)
fi
apt-get update -q
apt-get install -y -q --no-install-recommends "${packages[@]}"
