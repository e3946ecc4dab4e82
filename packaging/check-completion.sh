#!/usr/bin/env bash
# check-completion.sh MMFS: every option that `MMFS SUBCOMMAND --help` lists is offered by the
# bash completion, and every subcommand too; exits 1 naming what is missing.
set -euo pipefail
mmfs=$1
completion=$(dirname "$0")/bash-completion/mmfs
status=0
for sub in pack mount umount stats verify info warmup; do
  line=$(grep -E "^ +$sub\) opts=" "$completion" || true)
  if [[ -z "$line" ]]; then
    echo "completion: no options for '$sub'"; status=1; continue
  fi
  for opt in $("$mmfs" "$sub" --help | grep -oE '^ +(-[a-zA-Z],)?--?[a-z-]+' | tr ',' ' '); do
    if ! grep -qE -- "[\" ]$opt[\" ]" <<<"$line"; then
      echo "completion: '$sub $opt' is in --help but not completed"; status=1
    fi
  done
done
for sub in $("$mmfs" --help | awk '/^Subcommands:/{on=1; next} on && /^  [a-z]/{print $1}'); do
  grep -q "commands=\".*\b$sub\b" "$completion" || { echo "completion: subcommand '$sub' missing"; status=1; }
done
# And it works in bash: subcommands, options and option values.
complete_line() {
  bash -c 'source /usr/share/bash-completion/bash_completion; source "$1"; shift
           COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
           _mmfs; echo "${COMPREPLY[*]}"' _ "$completion" "$@"
}
expect() {
  local want=$1; shift
  local got; got=$(complete_line "$@")
  [[ " $got " == *" $want "* ]] || { echo "completion: '$*' offers '$got', not '$want'"; status=1; }
}
expect stats mmfs st
expect --resume mmfs pack --re
expect webdataset mmfs pack --from we
expect ram_cache= mmfs mount data mnt -o ram
[[ $status == 0 ]] && echo "completion: in step with --help, and works in bash"
exit $status
