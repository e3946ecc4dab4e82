#!/usr/bin/env bash
# The folders of the daemon's core are layers (docs/architecture.md, "Folders are the layers"):
# a file under one of them may include "fs/..." headers only from its own folder, from a folder
# listed before it in LAYERS below, or from fs/origin and fs/format (below all of them). An
# include of a later folder (upward) fails this test, named FILE:LINE; so does any pair of
# folders that include each other, and any folder under fs/ that is not in LAYERS (place a new
# folder in the order first).
#
# Only `#include "fs/...` lines are read; tests/ and tools/ sit above every layer and are not
# checked.
#
# Usage: core_layering_test.sh [SOURCE_DIR]; exits 1 with the offending includes listed.
set -euo pipefail

root="${1:-$(cd "$(dirname "$0")/.." && pwd)}"

# Lowest first.
LAYERS=(metrics names memory read readers readahead stats control core fuse)
# Below every layer: includes of these are always fine.
BELOW=(origin format)

# Checks the tree at $1; prints each violation, returns 1 if there is any.
check() {
  local dir="$1"
  local -A rank=()
  local i
  for i in "${!LAYERS[@]}"; do rank[${LAYERS[$i]}]=$i; done
  local -A below=()
  for i in "${BELOW[@]}"; do below[$i]=1; done

  local bad=0 folder
  # Every folder of fs/ has a place.
  for folder in $(cd "$dir/fs" && find . -mindepth 1 -maxdepth 1 -type d | sed 's#^\./##' | sort); do
    if [ -z "${rank[$folder]:-}" ] && [ -z "${below[$folder]:-}" ]; then
      echo "fs/$folder: a folder not in the layer order of $0 (add it to LAYERS)"
      bad=1
    fi
  done

  # "FILE:LINE FROM TO" for each include of another fs/ folder.
  local edges
  edges=$(cd "$dir" && for folder in "${LAYERS[@]}"; do
            [ -d "fs/$folder" ] || continue
            find "fs/$folder" -type f \( -name '*.h' -o -name '*.cc' \) | sort |
              while read -r f; do
                grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"fs/[^/"]+/' "$f" |
                  sed -E "s#^([0-9]+):[^\"]*\"fs/([^/\"]+)/.*#$f:\1 $folder \2#" || true
              done
          done)

  local -A seen=()
  local where from to
  while read -r where from to; do
    [ -z "$where" ] && continue
    [ "$from" = "$to" ] && continue
    [ -n "${below[$to]:-}" ] && continue
    if [ -z "${rank[$to]:-}" ]; then
      echo "$where: includes fs/$to, a folder not in the layer order"
      bad=1
      continue
    fi
    seen["$from>$to"]=1
    if [ "${rank[$to]}" -gt "${rank[$from]}" ]; then
      echo "$where: fs/$from includes fs/$to, a layer above it"
      bad=1
    fi
  done <<<"$edges"

  local key pairs=""
  for key in "${!seen[@]}"; do
    from=${key%%>*}
    to=${key#*>}
    if [ -n "${seen[$to>$from]:-}" ] && [[ "$from" < "$to" ]]; then
      pairs+="fs/$from and fs/$to include each other"$'\n'
    fi
  done
  if [ -n "$pairs" ]; then
    printf '%s' "$pairs" | sort
    bad=1
  fi
  return $bad
}

# Self-check: an upward include and a two-way pair in a small tree must be caught.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/fs/read" "$tmp/fs/core"
printf '#include "fs/core/filesystem.h"\n' >"$tmp/fs/read/a.h"
printf '#include "fs/read/a.h"\n' >"$tmp/fs/core/b.h"
if out=$(check "$tmp"); then
  echo "self-check: an include of fs/core from fs/read was not caught"
  exit 1
fi
if ! grep -q '^fs/read/a.h:1: ' <<<"$out" || ! grep -q 'include each other' <<<"$out"; then
  echo "self-check: the upward include or the pair was not reported:"
  echo "$out"
  exit 1
fi

cd "$root"
if ! check "$root"; then
  echo "The core's folders are layers, lowest first: ${LAYERS[*]} (docs/architecture.md);"
  echo "move the code the include needs down, or the including file up."
  exit 1
fi
n=$(for folder in "${LAYERS[@]}"; do [ -d "fs/$folder" ] && find "fs/$folder" -type f \( -name '*.h' -o -name '*.cc' \); done | wc -l)
echo "core layering: $n files in ${#LAYERS[@]} layers (${LAYERS[*]}), no include goes up"
