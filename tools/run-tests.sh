#!/usr/bin/env bash
# The README test command (and CI): installs what mmfs needs, then runs each stage in turn and
# prints how long each took. Mount tests need /dev/fuse and run as root.
#   release  `cmake -DCMAKE_BUILD_TYPE=Release` as a user or packager types it (GCC 12, -O3), with
#            -DMMFS_WERROR=ON so that a warning at -O3 fails here, not on their machine (the
#            `release` preset is the same build); every test (ctest) with the kernel offering
#            FUSE over io_uring where it can (every local mount checks it serves over the ring),
#            then the release-only tests (memory bounds, load) over /dev/fuse; then the package
#            test (.deb built, installed, mounted from /etc/fstab, purged) and `cmake --install`
#            into a prefix, run from there
#   asan     ASan+UBSan build with clang 14 (so clang builds the whole tree too), every test,
#            over /dev/fuse
#   tsan     TSan build (GCC 12, -O2), every test, over /dev/fuse
#   fuzz     the libFuzzer targets, MMFS_FUZZ_SECONDS (30) each
#   fresh    the README Quick start in fresh Debian 12 minbase roots (tools/fresh-check.sh); it
#            starts as soon as the release stage has filled the compiler cache and runs beside
#            the stages after it (its installs wait on the network and dpkg, not the CPU)
#
#   bash tools/run-tests.sh                              every stage
#   MMFS_BUILDS="release asan" bash tools/run-tests.sh   some stages
#   MMFS_CTEST_LABEL=unit ...                            only the tests with that ctest label
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
stages=${MMFS_BUILDS:-"release asan tsan fuzz fresh"}
label=${MMFS_CTEST_LABEL:-}
# The tests only the release build has (tests/CMakeLists.txt: bounds on the product's memory and
# latency, which a sanitizer's shadow memory and slowdown would not meet).
release_only='^(load\.readers|mount\.memory|mount\.idle_memory)$'
status=0
timings=()
# CI keeps only the tail of the log, so the failed tests' names and the end of their output are
# printed again after the stage timings.
digest=$(mktemp)
# FUSE over io_uring is a kernel setting (enable_uring): each stage sets the transport it tests,
# and the kernel's own setting is put back when this script ends, however it ends.
uring_param=/sys/module/fuse/parameters/enable_uring
# A run inside another (the fresh root's, beside the outer run's stages: MMFS_KERNEL_RING=keep)
# leaves the setting to the outer run, whose stages each depend on it.
uring_before=""
if [[ -w $uring_param && ${MMFS_KERNEL_RING:-} != keep ]]; then uring_before=$(cat "$uring_param"); fi
fresh_pid="" fresh_log=""
finish() {
  if [[ -n $fresh_pid ]]; then kill -- "-$fresh_pid" 2> /dev/null || kill "$fresh_pid" 2> /dev/null; wait "$fresh_pid" 2> /dev/null; fi
  rm -f "$digest" "$digest.ccache"
  [[ -z $fresh_log ]] || rm -f "$fresh_log" "$fresh_log.took"
  [[ -z $uring_before ]] || echo "$uring_before" > "$uring_param"
}
trap finish EXIT
# Offers the ring (Y) or not (N); fails where the kernel has no FUSE over io_uring.
kernel_ring() { [[ -n $uring_before ]] && echo "$1" > "$uring_param"; }
total_start=$SECONDS

stage_start=$SECONDS
bash tools/install-deps.sh
timings+=("$(printf '%-10s %5d s' install $((SECONDS - stage_start)))")

# Every build goes through ccache, in build/ccache unless CCACHE_DIR says otherwise: the fresh
# stage's release build in a new root is the release stage's own compiles (fresh-check.sh lends
# it this directory), so that check costs its installs, not a second -O3 build. ccache compares
# the compiler and every header a file includes, so a header the root lacks still fails there.
# Paths are kept relative to the checkout, which sits elsewhere in the root.
if command -v ccache > /dev/null; then
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
  export CCACHE_DIR=${CCACHE_DIR:-$PWD/build/ccache} CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
  export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G} CCACHE_STATSLOG=$digest.ccache
fi

# run_ctest PRESET [SHOWN [CTEST ARGS...]]
ctest_runs=0 ctest_runs_with_tests=0
run_ctest() {
  local preset=$1 shown=${2:-$1}
  local args=(--test-dir "build/$preset" --output-on-failure -j "$jobs" "${@:3}")
  [[ -n $label ]] && args+=(-L "$label")
  ctest_runs=$((ctest_runs + 1))
  # A label can leave a run with nothing to select (the release-only tests are not unit tests).
  # ctest would print "No tests were found!!!" as the last word of the log, which reads as a
  # run that tested nothing; say what was left out instead. A label that selects nothing in any
  # run fails the script at the end (a misspelt label must not pass).
  if [[ -n $label ]] && ctest "${args[@]}" -N | grep -q '^Total Tests: 0$'; then
    echo "=== $shown: no test of this run has the label $label; left out"
    return 0
  fi
  ctest_runs_with_tests=$((ctest_runs_with_tests + 1))
  ctest "${args[@]}" && return 0
  local dir="build/$preset/Testing/Temporary"
  {
    echo "--- $shown: failed tests"
    sed 's/^/  /' "$dir/LastTestsFailed.log" 2>/dev/null
    local name output
    while IFS=: read -r _ name; do
      output=$(awk -v n="$name" '!on && index($0, " Testing: ") &&
          substr($0, index($0, " Testing: ") + 10) == n { on = 1; next }
          on && /^<end of output>/ { exit } on' "$dir/LastTest.log")
      echo "--- $shown: $name: its failures"
      grep -E -A6 ': Failure$|WARNING: ThreadSanitizer|ERROR: AddressSanitizer|runtime error|Timeout' \
        <<< "$output" | head -n 80
      echo "--- $shown: $name: the end of its output"
      tail -n 15 <<< "$output"
    done < "$dir/LastTestsFailed.log"
  } >> "$digest"
  return 1
}

for stage in $stages; do
  stage_start=$SECONDS
  result=ok
  echo "=== stage: $stage"
  case "$stage" in
    release | asan | tsan)
      if [[ $stage == release ]]; then
        # Exactly what a packager types (no preset), plus warnings as errors.
        cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DMMFS_WERROR=ON > /dev/null &&
          cmake --build build/release -j "$jobs" || result=FAILED
      else
        cmake --preset "$stage" > /dev/null && cmake --build --preset "$stage" -j "$jobs" ||
          result=FAILED
      fi
      if [[ $result == FAILED ]]; then
        echo "=== FAILED: the $stage build"
        timings+=("$(printf '%-10s %5d s  %s' "$stage" $((SECONDS - stage_start)) FAILED)")
        status=1
        continue  # no tests without a build
      fi
      # The sanitizers' options come with the build (tests/CMakeLists.txt: sanitizer_env).
      if [[ $stage == release ]] && kernel_ring Y; then
        # Every test over the ring: every mount left to choose (-o transport=auto) serves over it,
        # which each ForegroundMount checks (MMFS_TEST_EXPECT_RING). The classic path runs the
        # whole suite in the sanitizer stages; the tests only the release build runs (memory
        # bounds, the load test) run over it here, and the load test only there.
        export MMFS_TEST_EXPECT_RING=1
        run_ctest release "release (io_uring)" -E '^load\.' ||
          { echo "=== FAILED: tests in the release build, over io_uring"; result=FAILED; }
        unset MMFS_TEST_EXPECT_RING
        kernel_ring N
        run_ctest release "release (/dev/fuse)" -R "$release_only" ||
          { echo "=== FAILED: tests in the release build, over /dev/fuse"; result=FAILED; }
      else
        [[ $stage == release ]] &&
          echo "=== release: FUSE over io_uring: $uring_param is missing or not writable; /dev/fuse only"
        kernel_ring N || true
        run_ctest "$stage" || { echo "=== FAILED: tests in the $stage build"; result=FAILED; }
      fi
      if [[ $stage == release ]]; then
        echo "=== package: build, install, mount from /etc/fstab, purge; cmake --install into a prefix"
        bash packaging/test-deb.sh build/release || { echo "=== FAILED: package test"; result=FAILED; }
      fi
      ;;
    fuzz)
      if cmake --preset fuzz -DMMFS_FUZZ_SECONDS="${MMFS_FUZZ_SECONDS:-30}" > /dev/null &&
        cmake --build --preset fuzz -j "$jobs"; then
        run_ctest fuzz || { echo "=== FAILED: fuzz targets"; result=FAILED; }
      else
        echo "=== FAILED: the fuzz build"; result=FAILED
      fi
      ;;
    fresh)
      if [[ -n $fresh_pid ]]; then
        fresh_status=0
        wait "$fresh_pid" || fresh_status=$?
        fresh_pid=""
        cat "$fresh_log"
        # Its own time, beside the stages after the release stage (not the wait for it here).
        stage_start=$((SECONDS - $(cat "$fresh_log.took" 2> /dev/null || echo 0)))
        [[ $fresh_status == 0 ]] || { echo "=== FAILED: fresh-root check"; result=FAILED; }
      else
        bash tools/fresh-check.sh || { echo "=== FAILED: fresh-root check"; result=FAILED; }
      fi
      ;;
    *) echo "=== unknown stage '$stage' (release asan tsan fuzz fresh)"; result=FAILED ;;
  esac
  [[ $result == ok ]] || status=1
  timings+=("$(printf '%-10s %5d s  %s' "$stage" $((SECONDS - stage_start)) "$result")")
  # The fresh roots, beside the stages still to come, once the release build's compiles are in
  # the cache they borrow. Their own job control group, so that a run that ends early ends them.
  if [[ $stage == release && " $stages " == *" fresh "* && -z $fresh_pid ]]; then
    fresh_log=$(mktemp /tmp/mmfs-fresh-stage.XXXXXX)
    echo "=== fresh: started beside the next stages (its output follows at the fresh stage)"
    set -m
    # Its own time is written where it ends, for the stage table (it is waited for later).
    { start=$(date +%s); rc=0; bash tools/fresh-check.sh < /dev/null || rc=$?
      echo $(($(date +%s) - start)) > "$fresh_log.took"; exit $rc; } > "$fresh_log" 2>&1 &
    fresh_pid=$!
    set +m
  fi
done

if [[ -n $label && $ctest_runs -gt 0 && $ctest_runs_with_tests == 0 ]]; then
  echo "=== FAILED: no test has the label '$label' (ctest --print-labels lists them)"
  status=1
fi
echo "=== stages"
printf '  %s\n' "${timings[@]}"
if [[ -s $digest.ccache ]]; then
  ccache --show-log-stats | awk '/^ *Hits:/ {print "  ccache: " $2 " of " $4 " compiles from the cache"; exit}'
fi
printf '  %-10s %5d s\n' total $((SECONDS - total_start))
if [[ -s $digest ]]; then
  echo "=== failures"
  cat "$digest"
fi
exit $status
