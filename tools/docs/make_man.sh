#!/usr/bin/env bash
# A tool's man page from its own --help (help2man), so the two cannot drift:
#   make_man.sh TOOL_BINARY VERSION OUT.1 [INCLUDE.h2m] [SEE_ALSO,...]
# INCLUDE.h2m (tools/<tool>/<tool>.h2m) gives the NAME line and any section
# the help lacks. A tool with commands ("commands:" in its help, as
# asyncrt-cache) gets a COMMANDS section of each command's --help. The help's
# first line, the version with the NVRTC found here, is left out: the page
# says VERSION, the same on every build machine.
set -euo pipefail
bin=$1 version=$2 out=$3 include=${4:-} see_also=${5:-}
here=$(cd "$(dirname "$0")" && pwd)
name=$(basename "$bin")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export ASAN_OPTIONS=detect_leaks=0 # a sanitizer build's tool, run at build time

help_of() { # the tool's help without its version line
  "$bin" "$@" --help | sed -e "1{/^$name [0-9]/d}"
}
roff_verbatim() { # text as it prints, in roff: backslashes and hyphens escaped
  # (\- is the ASCII '-' one can type), no line read as a request
  sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^[.']/\\\\\\&&/"
}
# help2man runs the program by the name it shows: a stand-in of that name,
# whose help is the tool's but for the version line and the exit-code table
# (which goes to EXIT STATUS as it is: help2man would read its columns as
# options), with "usage:" as help2man knows it.
help_of >"$work/help.txt"
awk '/^Exit codes/ { table = 1 } table && /^$/ { table = 0; next } !table' "$work/help.txt" |
  sed -e '1s/^usage:/Usage:/' >"$work/help-body.txt"
cat >"$work/$name" <<STANDIN
#!/bin/sh
cat "$work/help-body.txt"
STANDIN
chmod +x "$work/$name"

: >"$work/extra.h2m"
[ -z "$include" ] || cat "$include" >>"$work/extra.h2m"
if grep -q '^Exit codes' "$work/help.txt"; then
  { echo "[EXIT STATUS]"; echo ".nf"
    awk '/^Exit codes/ { table = 1 } table && /^$/ { exit } table' "$work/help.txt" | roff_verbatim
    echo ".fi"
  } >>"$work/extra.h2m"
fi
commands=$(help_of | perl "$here/help_options.pl" "$name" --commands)
if [ -n "$commands" ]; then
  echo "[COMMANDS]" >>"$work/extra.h2m"
  for c in $commands; do
    { printf '.TP\n.B %s\n.nf\n' "$c"
      help_of "$c" | roff_verbatim
      printf '.fi\n'
    } >>"$work/extra.h2m"
  done
fi
if [ -n "$see_also" ]; then
  echo "[SEE ALSO]" >>"$work/extra.h2m"
  IFS=, read -ra others <<<"$see_also"
  list=""
  for t in "${others[@]}"; do [ "$t" = "$name" ] || list+="${list:+,
}.BR $t (1)"; done
  printf '%s\n.PP\nREADME.md and docs/ of the asyncrt source tree.\n' "$list" >>"$work/extra.h2m"
fi
help2man --no-info --no-discard-stderr --version-string="$version" --include="$work/extra.h2m" \
  --output="$work/page.1" "$work/$name"
mv "$work/page.1" "$out"
