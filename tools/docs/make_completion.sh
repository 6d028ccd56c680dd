#!/usr/bin/env bash
# A tool's bash completion from its own --help, so the two cannot drift:
#   make_completion.sh TOOL_BINARY OUT
# Options complete after '-'; a tool with commands (asyncrt-cache) completes
# them, then each command's own options; anything else, and the value of an
# option that takes one, falls back to file names (complete -o default).
set -euo pipefail
bin=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
name=$(basename "$bin")
func=_${name//-/_}
export ASAN_OPTIONS=detect_leaks=0 # a sanitizer build's tool, run at build time

options_of() { # "OPTS|VALUED": the options (--help always), and those that take a value
  local listed
  listed=$("$bin" "$@" --help | perl "$here/help_options.pl" "$name")
  grep -qx -- --help <<<"$listed" || listed=$(printf -- '--help\n%s' "$listed")
  printf '%s|%s' "$(cut -d' ' -f1 <<<"$listed" | tr '\n' ' ' | sed 's/ $//')" \
    "$(awk 'NF > 1 { printf "%s%s", sep, $1; sep = " " }' <<<"$listed")"
}
commands=$("$bin" --help | perl "$here/help_options.pl" "$name" --commands | tr '\n' ' ' | sed 's/ $//')
{
  echo "# bash completion for $name: made from its --help by tools/docs/make_completion.sh"
  echo "$func()"
  echo "{"
  echo "    local cur=\${COMP_WORDS[COMP_CWORD]} prev=\${COMP_WORDS[COMP_CWORD-1]} cmd= i"
  echo "    local commands='$commands'"
  echo "    local -A opts valued"
  IFS='|' read -r o v <<<"$(options_of)"
  echo "    opts[.]='$o' valued[.]='$v'"
  for c in $commands; do
    IFS='|' read -r o v <<<"$(options_of "$c")"
    echo "    opts[$c]='$o' valued[$c]='$v'"
  done
  cat <<'BODY'
    for ((i = 1; i < COMP_CWORD; i++)); do # the command, if one is given yet
        [[ " $commands " == *" ${COMP_WORDS[i]} "* ]] && cmd=${COMP_WORDS[i]} && break
    done
    COMPREPLY=()
    [[ " ${valued[${cmd:-.}]} ${valued[.]} " == *" $prev "* ]] && return # its value: file names
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "${opts[${cmd:-.}]}" -- "$cur"))
    elif [[ -z $cmd && -n $commands ]]; then
        COMPREPLY=($(compgen -W "$commands" -- "$cur"))
    fi
}
BODY
  echo "complete -o default -F $func $name"
} >"$out.tmp"
mv "$out.tmp" "$out"
