#!/usr/bin/env bash
# A tool's man page and bash completion against its --help:
#   check_docs.sh TOOL_BINARY MAN_PAGE|- COMPLETION_SCRIPT
# Every option the help lists (tools/docs/help_options.pl reads them), and
# each command's options for a tool with commands, must appear in the page
# as man renders it (as a word, ASCII hyphens) and be offered by the
# completion function after '-' (the script sourced in bash, COMP_WORDS
# set, its function called, COMPREPLY read); commands complete too. The
# page must render without warnings (man --warnings, else groff -ww).
# "-" for the page: help2man was missing at build time, only the completion
# is checked.
set -euo pipefail
bin=$1 page=$2 completion=$3
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
name=$(basename "$bin")
fail() { echo "docs test ($name): $*" >&2; exit 1; }
options_of() { "$bin" "$@" --help | perl "$source_dir/tools/docs/help_options.pl" "$name" | cut -d' ' -f1; }
mapfile -t options < <(options_of)
(( ${#options[@]} >= 3 )) || fail "only ${#options[@]} options read from its --help: ${options[*]}"
mapfile -t commands < <("$bin" --help | perl "$source_dir/tools/docs/help_options.pl" "$name" --commands)

if [ "$page" != - ]; then
  [ -s "$page" ] || fail "no man page at $page"
  err=$(mktemp)
  trap 'rm -f "$err"' EXIT
  if command -v man >/dev/null; then
    text=$(LC_ALL=C.UTF-8 MANWIDTH=250 man --warnings -l "$page" 2>"$err")
  else
    text=$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww "$page" 2>"$err")
  fi
  [ ! -s "$err" ] || { cat "$err" >&2; fail "$page does not render cleanly"; }
  in_page() { grep -qE -- "(^|[^A-Za-z0-9_-])$1([^A-Za-z0-9_-]|\$)" <<<"$text"; }
  for o in "${options[@]}"; do in_page "$o" || fail "$page lacks $o, which --help lists"; done
  for c in "${commands[@]}"; do
    in_page "$c" || fail "$page lacks the command $c"
    while read -r o; do in_page "$o" || fail "$page lacks $c's $o"; done < <(options_of "$c")
  done
  echo "$page: ${#options[@]} options${commands[*]:+ and ${#commands[@]} commands} found"
else
  echo "no man page made (help2man was missing at build time): checked the completion only"
fi

[ -s "$completion" ] || fail "no completion script at $completion"
complete_words() { # the completions bash offers for the words given (the last one is completed)
  bash -c 'source "$1" || exit 1; shift
    func=$(complete -p "$1" | sed -n "s/.* -F \([^ ]*\) .*/\1/p"); [ -n "$func" ] || exit 1
    COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); "$func"; printf "%s\n" "${COMPREPLY[@]}"' _ "$completion" "$name" "$@" ||
    fail "$completion does not load or complete $name"
}
offered=$(complete_words -)
for o in "${options[@]}"; do grep -qxF -- "$o" <<<"$offered" || fail "the completion does not offer $o"; done
if (( ${#commands[@]} )); then
  offered=$(complete_words "")
  for c in "${commands[@]}"; do
    grep -qxF -- "$c" <<<"$offered" || fail "the completion does not offer the command $c"
    offered_c=$(complete_words "$c" -)
    while read -r o; do grep -qxF -- "$o" <<<"$offered_c" || fail "the completion does not offer $c's $o"; done < <(options_of "$c")
  done
fi
echo "$completion: offers every option${commands[*]:+ and command}"
