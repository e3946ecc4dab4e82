#!/usr/bin/env bash
# test-deb.sh [BUILD_DIR]: the path a training host takes, end to end. Builds the .deb with CPack,
# installs it with apt-get, packs a small dataset with the installed mmfs, mounts it through an
# /etc/fstab line with mount(8), reads it back (diff -r), unmounts it with umount(8), checks the
# man pages, completion and systemd unit, checks that `cmake --install` gives the same files and a
# working mmfs (packaging/test-install.sh), and purges the package. Needs root; leaves the machine
# as it found it (fstab line, mount and package removed even on failure).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$repo/build/release}" && pwd)
work=$(mktemp -d /tmp/mmfs-deb-test.XXXXXX)
had_package=0
dpkg -s mmfs > /dev/null 2>&1 && had_package=1
cleanup() {
  if mountpoint -q "$work/mnt" 2> /dev/null; then umount -l "$work/mnt" || true; fi
  sed -i "\\|$work/mnt|d" /etc/fstab
  if [[ $had_package == 0 ]] && dpkg -s mmfs > /dev/null 2>&1; then
    apt-get purge -y -q mmfs > /dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
step() { echo "=== deb: $*"; }

step "build the package"
(cd "$build" && rm -f mmfs_*.deb && cpack -G DEB > "$work/cpack.log") || { cat "$work/cpack.log"; exit 1; }
deb=$(ls "$build"/mmfs_*.deb)
dpkg-deb --info "$deb" | sed -n '/Depends/p'
step "install $(basename "$deb")"
DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$deb" > "$work/apt.log" || { cat "$work/apt.log"; exit 1; }
for f in /usr/bin/mmfs /usr/sbin/mount.fuse.mmfs /usr/sbin/mount.mmfs; do test -x "$f"; done
test -f /usr/lib/systemd/system/mmfs@.service
test -f /usr/share/bash-completion/completions/mmfs
grep -q '^License: Apache-2.0$' /usr/share/doc/mmfs/copyright
for page in mmfs mmfs-pack mmfs-mount mmfs-stats mount.mmfs; do man -w "$page" > /dev/null; done
if command -v systemd-analyze > /dev/null; then
  # A unit file check that needs no running systemd (this may be a container).
  mkdir -p "$work/units"
  cp /usr/lib/systemd/system/mmfs@.service "$work/units/mmfs@test.service"
  out=$(systemd-analyze verify --man=no "$work/units/mmfs@test.service" 2>&1 || true)
  if [[ -n "$out" ]]; then echo "systemd-analyze verify: $out"; exit 1; fi
fi

step "pack with the installed mmfs"
"$build/mmfs-gen-dataset" "$work/src" -n 60 -c 3 --max-side 256 --seed 5 > /dev/null
/usr/bin/mmfs pack -q "$work/src" "$work/data.mmfs"
mkdir "$work/mnt"

step "mount from /etc/fstab"
echo "$work/data.mmfs $work/mnt fuse.mmfs ro,noauto,allow_other,ram_cache=64M 0 0" >> /etc/fstab
mount "$work/mnt"
grep " $work/mnt fuse.mmfs " /proc/mounts
diff -r "$work/src" "$work/mnt"
/usr/bin/mmfs stats "$work/mnt" | sed -n 1,3p   # sed reads it all: head could SIGPIPE mmfs under pipefail
umount "$work/mnt"
! mountpoint -q "$work/mnt"

step "cmake --install of the same build: the same files, and a working mmfs from the prefix"
bash "$repo/packaging/test-install.sh" "$build" "$deb"

step "purge"
apt-get purge -y -q mmfs > /dev/null
! test -e /usr/bin/mmfs
! test -e /usr/sbin/mount.fuse.mmfs
if [[ $had_package == 1 ]]; then echo "note: an mmfs package was installed before; it is now removed"; fi
echo "=== deb: OK"
