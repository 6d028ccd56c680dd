#!/usr/bin/env bash
# libasyncrt's ABI, three ways that must agree:
#   the asyncrt_* symbols the shared library exports,
#   the functions the public headers declare ASYNCRT_EXTERN,
#   runtime/asyncrt.sym, the committed list (changed only on purpose: README,
#   "ABI and versioning").
# Usage: check_abi.sh SOURCE_DIR LIBRARY. Exit 77 (skipped) for a static library.
set -euo pipefail
export LC_ALL=C
src=$1 lib=$2
case "$lib" in *.so|*.so.*) ;; *) echo "check_abi: $lib is not a shared library: skipped"; exit 77 ;; esac
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT

nm -D --defined-only "$lib" | awk '{print $NF}' | grep '^asyncrt_' | sort -u >"$work/exported"
cat "$src"/runtime/include/asyncrt/*.h |
  grep -E '^ASYNCRT_EXTERN ' | grep -oE '\basyncrt_[a-z0-9_]+[[:space:]]*\(' | tr -d '( \t' | sort -u >"$work/declared"
sort -u "$src/runtime/asyncrt.sym" >"$work/committed"

status=0
compare() { # NAME_A FILE_A NAME_B FILE_B
  if ! diff -u --label "$1" --label "$3" "$2" "$4"; then
    echo "check_abi: $1 and $3 differ (- only in $1, + only in $3)"; status=1
  fi
}
compare "exported by $(basename "$lib")" "$work/exported" "declared ASYNCRT_EXTERN" "$work/declared"
compare "runtime/asyncrt.sym" "$work/committed" "exported by $(basename "$lib")" "$work/exported"
[ "$status" = 0 ] || { echo "check_abi: a new public function needs ASYNCRT_EXTERN and a line in runtime/asyncrt.sym; an internal one needs neither"; exit 1; }
echo "check_abi: $(wc -l <"$work/exported") symbols exported, declared and listed alike"
