#!/usr/bin/env bash
# Installs what mmfs needs, then builds and runs every test three times: a release build, an
# ASan+UBSan build and a TSan build; then the libFuzzer targets, each for a bounded time
# (MMFS_FUZZ_SECONDS, default 30). Mount tests need /dev/fuse and run as root.
#   bash tools/run-tests.sh            everything
#   MMFS_BUILDS="release" bash tools/run-tests.sh    only some builds
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
jobs=$(nproc)
builds=${MMFS_BUILDS:-"release asan tsan fuzz"}
status=0
for preset in $builds; do
  echo "=== build: $preset"
  if [[ "$preset" == fuzz ]]; then
    cmake --preset fuzz -DMMFS_FUZZ_SECONDS="${MMFS_FUZZ_SECONDS:-30}" > /dev/null
  else
    cmake --preset "$preset" > /dev/null
  fi
  cmake --build --preset "$preset" -j "$jobs"
  echo "=== test: $preset"
  case "$preset" in
    asan) export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ;;
    tsan) export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/tests/tsan.supp" ;;
  esac
  if ! ctest --test-dir "build/$preset" --output-on-failure -j "$jobs"; then
    echo "=== FAILED: tests in the $preset build"
    status=1
  fi
  unset ASAN_OPTIONS UBSAN_OPTIONS TSAN_OPTIONS
  if [[ "$preset" == release ]]; then
    echo "=== package: build, install, mount from /etc/fstab, purge"
    bash packaging/test-deb.sh build/release || { echo "=== FAILED: package test"; status=1; }
  fi
done
exit $status
