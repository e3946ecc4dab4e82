#!/usr/bin/env bash
# The mmfs demo, end to end on a fresh Debian 12 machine (as root): install packages, build,
# generate a sample image-caption dataset, pack it, mount it, train-read it with torchvision
# ImageFolder + DataLoader, show `mmfs stats`, unmount.
#   bash tools/demo.sh                 (MMFS_DEMO_DIR=/tmp/mmfs-demo, MMFS_DEMO_SAMPLES=2000)
# It installs only what it runs (tools/install-deps.sh --demo) and builds only the two programs it
# runs (the `demo` preset: mmfs and mmfs-gen-dataset, no tests; the release preset's flags) in
# build/demo.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
demo=${MMFS_DEMO_DIR:-/tmp/mmfs-demo}
samples=${MMFS_DEMO_SAMPLES:-2000}
started=$SECONDS

echo "== installing Debian packages (tools/install-deps.sh --demo)"
bash tools/install-deps.sh --demo
echo "== building mmfs and mmfs-gen-dataset (cmake --preset demo, in build/demo)"
# A compiler cache the caller set up (CCACHE_DIR, as the fresh-root check lends the test
# command's) is used when ccache is installed; the demo never needs it.
if [[ -n ${CCACHE_DIR:-} ]] && command -v ccache > /dev/null; then
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
  export CCACHE_BASEDIR=$repo CCACHE_NOHASHDIR=1
fi
cmake --preset demo > /dev/null
cmake --build --preset demo -j "$(nproc)"
mmfs=$repo/build/demo/mmfs

mkdir -p "$demo"
if [[ ! -d "$demo/src/train" ]]; then
  echo "== generating $samples samples (real JPEGs + captions) in $demo/src"
  "$repo/build/demo/mmfs-gen-dataset" "$demo/src" --samples "$samples" --classes 10
fi
echo "== mmfs pack $demo/src $demo/data.mmfs"
"$mmfs" pack --force "$demo/src" "$demo/data.mmfs"

mkdir -p "$demo/mnt"
if mountpoint -q "$demo/mnt"; then "$mmfs" umount "$demo/mnt"; fi
echo "== mmfs mount $demo/data.mmfs $demo/mnt"
"$mmfs" mount "$demo/data.mmfs" "$demo/mnt"
trap '"$mmfs" umount "$demo/mnt" || fusermount3 -u -z "$demo/mnt"' EXIT
ls "$demo/mnt/train" | sed -n 1,3p
echo "== torchvision ImageFolder + DataLoader(num_workers=2) over the mount"
/usr/bin/python3 "$repo/tools/demo_loader.py" "$demo/mnt/train" --epochs 2
echo "== mmfs stats $demo/mnt"
"$mmfs" stats "$demo/mnt"
echo "== mmfs umount $demo/mnt"
"$mmfs" umount "$demo/mnt"
trap - EXIT
elapsed=$((SECONDS - started))
echo "demo done in $((elapsed / 60)) min $((elapsed % 60)) s: dataset in $demo/data.mmfs, mmfs in $mmfs"
