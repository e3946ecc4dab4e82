#!/usr/bin/env bash
# The README's Quick start, on a machine that has nothing: each Quick start command runs in its own
# throwaway copy (both at once) of a minimal Debian 12 root (`debootstrap --variant=minbase bookworm`), as root,
# with /dev (FUSE), /proc and /sys bound in. A package that tools/install-deps.sh forgets, and that
# this machine happens to have, fails here instead of on a newcomer's machine.
#
#   bash tools/fresh-check.sh            both commands (what the README test command runs)
#   bash tools/fresh-check.sh demo       only the demo command
#   bash tools/fresh-check.sh tests      only the test command's fresh subset
#
# What runs, with the commands read from the README's Quick start block (so they cannot drift):
#   demo:  the demo command as written; its output must show every generated sample read in each
#          epoch and `mmfs stats` printed.
#   tests: the test command with MMFS_BUILDS=release MMFS_CTEST_LABEL=unit: it installs all
#          its packages, makes the release build (tests included), runs the unit tests and the
#          package and install tests (.deb built, installed, mounted from fstab, purged;
#          `cmake --install` into a prefix, run from there). The mount tests, the sanitizer
#          builds and the fuzzers run on the CI machine itself, after the same install step.
# The project is copied from the working tree (tracked and untracked, not ignored files), so
# uncommitted changes are checked too. The base root is made once per machine and kept in
# MMFS_FRESH_BASE (/var/cache/mmfs-fresh/bookworm); each run works on an overlay of it that is
# thrown away, with every mount it made and every process it started, even on failure.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
base=${MMFS_FRESH_BASE:-/var/cache/mmfs-fresh/bookworm}
which=${1:-all}
case "$which" in all | demo | tests) ;; *) echo "usage: $0 [all | demo | tests]" >&2; exit 2 ;; esac
[[ $(id -u) == 0 ]] || { echo "fresh-check: needs root (debootstrap, chroot, mounts)" >&2; exit 2; }

# The two commands of the README's Quick start block, comments stripped.
mapfile -t quick < <(awk '/^## Quick start/ {q = 1} q && /^```sh/ {c = 1; next} c && /^```/ {exit}
                          c {sub(/[[:space:]]+#.*/, ""); if ($0 != "") print}' "$repo/README.md")
if [[ ${#quick[@]} != 2 ]]; then
  echo "fresh-check: expected 2 commands in README's Quick start block, found ${#quick[@]}" >&2
  exit 1
fi
demo_cmd=${quick[0]}
# The kernel's FUSE-over-io_uring setting stays the outer test run's (this check runs beside it).
test_cmd="MMFS_KERNEL_RING=keep MMFS_BUILDS=release MMFS_CTEST_LABEL=unit ${quick[1]}"

make_base() {
  [[ -f $base/.ready ]] && return
  command -v debootstrap > /dev/null || { echo "fresh-check: debootstrap missing (tools/install-deps.sh)" >&2; exit 1; }
  local mirror
  mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  [[ -n $mirror ]] || mirror=$(awk '/^deb / {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
  if [[ -z $mirror ]]; then
    echo "fresh-check: no Debian mirror in /etc/apt/sources.list{,.d} to debootstrap from" >&2
    exit 1
  fi
  echo "== fresh-check: debootstrap --variant=minbase bookworm $base (from $mirror, once per machine)"
  rm -rf "$base.tmp"
  mkdir -p "$(dirname "$base")"
  if ! debootstrap --variant=minbase bookworm "$base.tmp" "$mirror" > "$base.log" 2>&1; then
    tail -20 "$base.log"; echo "fresh-check: debootstrap failed (log: $base.log)" >&2; exit 1
  fi
  # The machine's apt sources (security and updates too), as a newly installed machine has them.
  if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
    rm -f "$base.tmp/etc/apt/sources.list"
    cp /etc/apt/sources.list.d/debian.sources "$base.tmp/etc/apt/sources.list.d/"
  fi
  rm -rf "$base"
  mv "$base.tmp" "$base"
  touch "$base/.ready"
}

run=""
cleanup() {
  [[ -n $run && -d $run ]] || return 0
  local root=$run/root p m
  # Processes started in the root (a daemon a failed demo left, say): theirs to end, not others'.
  for p in /proc/[0-9]*; do
    [[ $(readlink "$p/root" 2>/dev/null) == "$root" ]] && kill -9 "${p#/proc/}" 2>/dev/null || true
  done
  # Every mount under the root, deepest first, then the root itself.
  awk -v r="$root" '$2 == r || index($2, r "/") == 1 {print $2}' /proc/mounts | sort -r |
    while read -r m; do umount -l "$m" 2>/dev/null || true; done
  # Never delete through a mount still attached (/dev, the machine's apt cache): stop instead.
  if awk -v r="$root" '$2 == r || index($2, r "/") == 1 {f = 1} END {exit !f}' /proc/mounts
  then
    echo "fresh-check: mounts under $root are still attached; $run left in place" >&2
    run=""
    return 1
  fi
  rm -rf --one-file-system "$run"
  run=""
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Runs COMMAND in a new throwaway copy of the base root, its output in LOG; with PREP, that runs
# in the root first (output in the same log).
in_fresh_root() {
  local cmd=$1 log=$2 prep=${3:-}
  run=$(mktemp -d /tmp/mmfs-fresh.XXXXXX)
  local root=$run/root
  mkdir -p "$run/upper" "$run/work" "$root"
  mount -t overlay overlay -o "lowerdir=$base,upperdir=$run/upper,workdir=$run/work" "$root"
  for m in dev dev/pts proc; do mount --bind "/$m" "$root/$m"; done
  # /sys with its cgroups, as on a booted machine; private, so nothing mounted inside propagates out.
  mount --rbind /sys "$root/sys"
  mount --make-rprivate "$root/sys"
  [[ -e $root/etc/mtab ]] || ln -s ../proc/self/mounts "$root/etc/mtab"
  # Two things that make installing faster and change nothing in what gets installed: the
  # machine's downloaded .debs are seen by the root (an overlay, so that two roots at once each
  # have their own apt lock and downloads; what they download is kept for the next run), and
  # dpkg does not fsync every file of a throwaway root (as Debian's container images are set up).
  mkdir -p /var/cache/apt/archives/partial "$run/debs" "$run/debs-work"
  mount -t overlay overlay \
    -o "lowerdir=/var/cache/apt/archives,upperdir=$run/debs,workdir=$run/debs-work" \
    "$root/var/cache/apt/archives"
  echo force-unsafe-io > "$root/etc/dpkg/dpkg.cfg.d/mmfs-fresh-check"
  # The test command's compiler cache (tools/run-tests.sh), when this run has one: the release
  # builds in the root then cost what ccache cannot vouch for. A compile whose header the root
  # lacks still fails (ccache checks every header a file includes, and links are never cached).
  local ccache_env=()
  if [[ -n ${CCACHE_DIR:-} && -d $CCACHE_DIR ]]; then
    mkdir -p "$root/var/cache/mmfs-ccache"
    mount --bind "$CCACHE_DIR" "$root/var/cache/mmfs-ccache"
    ccache_env=(CCACHE_DIR=/var/cache/mmfs-ccache CCACHE_READONLY=1)
  fi
  cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
  # The machine's local CAs, as a machine installed on its network has them (a network that
  # inspects TLS puts its CA there): npm fetches s3rver over TLS (install-deps.sh). The
  # ca-certificates package adds them to the root's bundle when it is installed.
  if [[ -d /usr/local/share/ca-certificates ]]; then
    mkdir -p "$root/usr/local/share/ca-certificates"
    cp -r /usr/local/share/ca-certificates/. "$root/usr/local/share/ca-certificates/"
    if [[ -x $root/usr/sbin/update-ca-certificates ]]; then
      chroot "$root" /usr/sbin/update-ca-certificates > /dev/null
    fi
  fi
  # The copy sits at the checkout's own path: the unity build's generated sources name the
  # files they include by absolute path, and the lent compiler cache matches them only there.
  mkdir -p "$root$repo"
  # Files deleted in the working tree but not yet in git are skipped (--ignore-failed-read).
  (cd "$repo" && git ls-files -z --cached --others --exclude-standard |
     tar --null -T - --ignore-failed-read -cf - 2> /dev/null) | tar -xf - -C "$root$repo"
  local status=0
  [[ -z $prep ]] || chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 \
    PATH=/usr/sbin:/usr/bin:/sbin:/bin bash -c "$prep" < /dev/null > "$log" 2>&1 || status=$?
  [[ $status != 0 ]] ||
    chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 "${ccache_env[@]}" \
      PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      bash -c "cd '$repo' && $cmd" < /dev/null >> "$log" 2>&1 || status=$?
  # What the root downloaded, for the next run's roots.
  find "$run/debs" -maxdepth 1 -name '*.deb' -type f -exec cp -n {} /var/cache/apt/archives/ \; \
    2> /dev/null || true
  cleanup
  return "$status"
}

make_base
failed=0
logs=$(mktemp -d /tmp/mmfs-fresh-logs.XXXXXX)
# Each command in its own root, both at once (their installs wait on the network and dpkg more
# than on the CPU), each root cleaned up by its own subshell however it ends. The demo's root
# gets ccache first when a compiler cache is lent (the demo itself neither needs nor installs
# it), so that its -O3 build is the release stage's compiles too (tools/demo.sh uses ccache when
# CCACHE_DIR is set and ccache is there).
demo_prep=""
[[ -z ${CCACHE_DIR:-} ]] ||
  demo_prep="apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ccache > /dev/null"
pids=()
if [[ $which == all || $which == demo ]]; then
  echo "== fresh-check: $demo_cmd (log: $logs/demo.log)"
  ( trap cleanup EXIT; trap 'exit 130' INT TERM; run=""
    start=$SECONDS
    if in_fresh_root "$demo_cmd" "$logs/demo.log" "$demo_prep"; then status=0; else status=$?; fi
    echo "$status $((SECONDS - start))" > "$logs/demo.status" ) &
  pids+=($!)
fi
if [[ $which == all || $which == tests ]]; then
  echo "== fresh-check: $test_cmd (log: $logs/tests.log)"
  ( trap cleanup EXIT; trap 'exit 130' INT TERM; run=""
    start=$SECONDS
    if in_fresh_root "$test_cmd" "$logs/tests.log"; then status=0; else status=$?; fi
    echo "$status $((SECONDS - start))" > "$logs/tests.status" ) &
  pids+=($!)
fi
for pid in "${pids[@]}"; do wait "$pid" || true; done

if [[ $which == all || $which == demo ]]; then
  echo "== fresh-check: the demo's output"
  cat "$logs/demo.log" 2> /dev/null || true
  read -r status took < "$logs/demo.status" 2> /dev/null || { status=1; took=0; }
  if [[ $status == 0 ]]; then
    # The demo generates MMFS_DEMO_SAMPLES (2000) samples; each epoch must read all of them.
    samples=$(sed -n 's/^ImageFolder: \([0-9]*\) samples.*/\1/p' "$logs/demo.log")
    epochs=$(grep -c "^epoch [0-9]*: ${samples:-x} images decoded" "$logs/demo.log" || true)
    if [[ $samples != 2000 || $epochs != 2 ]]; then
      echo "== fresh-check FAILED: the demo read ${samples:-no} samples in ${epochs} epochs (want 2000 in 2)"
      failed=1
    elif ! grep -q '^mmfs stats for ' "$logs/demo.log" || ! grep -q '^  origin ' "$logs/demo.log"; then
      echo "== fresh-check FAILED: the demo did not print mmfs stats"
      failed=1
    else
      echo "== fresh-check: demo OK ($samples samples x $epochs epochs, stats printed) in $took s"
    fi
  else
    echo "== fresh-check FAILED: the demo command exited non-zero (after $took s)"
    failed=1
  fi
fi
if [[ $which == all || $which == tests ]]; then
  echo "== fresh-check: the test command subset's output"
  cat "$logs/tests.log" 2> /dev/null || true
  read -r status took < "$logs/tests.status" 2> /dev/null || { status=1; took=0; }
  if [[ $status == 0 ]]; then
    echo "== fresh-check: test command subset OK in $took s"
  else
    echo "== fresh-check FAILED: the test command subset exited non-zero (after $took s)"
    failed=1
  fi
fi
rm -rf "$logs"
exit $failed
