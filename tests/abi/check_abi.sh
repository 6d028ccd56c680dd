#!/usr/bin/env bash
# libasyncrt's ABI (docs/deployment.md, "ABI and versioning"):
# 1. three ways that must agree:
#      the asyncrt_* symbols the shared library exports,
#      the functions the public headers declare ASYNCRT_EXTERN,
#      runtime/asyncrt.sym, the committed list (changed only on purpose);
# 2. the SONAME is libasyncrt.so.MAJOR, MAJOR from asyncrt/version.h;
# 3. with CC and FAKE_LIBCUDA: old programs keep working. tests/abi/consumer.c
#    is built with the current headers and with tests/abi/previous/ (whose
#    structs are smaller than the library's, as an older header's are), and
#    each binary runs against this library on the fake one-device driver,
#    with every struct it passes right before an unmapped page.
# Usage: check_abi.sh SOURCE_DIR LIBRARY [CC FAKE_LIBCUDA [CFLAGS]], CFLAGS
# being the library's sanitizer flags, if any. Exit 77 (skipped) for a static
# library, or where the consumers have no NVRTC to compile with.
set -euo pipefail
export LC_ALL=C
src=$1 lib=$2 cc=${3:-} fake=${4:-}
read -ra cflags <<<"${5:-}"
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

major=$(sed -n 's/^#define ASYNCRT_VERSION_MAJOR \([0-9][0-9]*\).*/\1/p' "$src/runtime/include/asyncrt/version.h")
soname=$(readelf -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
if [ "$soname" != "libasyncrt.so.$major" ]; then
  echo "check_abi: the SONAME is '$soname'; ASYNCRT_VERSION_MAJOR $major makes it libasyncrt.so.$major"
  exit 1
fi
echo "check_abi: SONAME $soname"
[ -n "$cc" ] || exit 0

# Old and new programs against this library. Each prints its struct sizes;
# the previous header's must be smaller, or this proves nothing.
libdir=$(cd "$(dirname "$lib")" && pwd)
declare -A sizes
for header in current previous; do
  includes=(-I"$src/runtime/include")
  [ "$header" = previous ] && includes=(-I"$src/tests/abi/previous" "${includes[@]}")
  "$cc" -std=c11 -D_DEFAULT_SOURCE -Wall -Wextra -Werror "${cflags[@]}" "${includes[@]}" -o "$work/consumer-$header" \
    "$src/tests/abi/consumer.c" "$lib" -Wl,-rpath,"$libdir" -ldl
  rc=0
  out=$(ASYNCRT_LIBCUDA=$fake ASYNCRT_CACHE_DIR="$work/cache-$header" "$work/consumer-$header" 2>&1) || rc=$?
  echo "$out" | sed "s/^/check_abi: $header: /"
  [ "$rc" = 77 ] && { echo "check_abi: skipped: the consumer has no NVRTC"; exit 77; }
  if [ "$rc" != 0 ]; then
    why=""; [ "$rc" -gt 128 ] && why=": killed by signal $((rc - 128))"
    [ "$rc" = 139 ] && why+=", SIGSEGV: each struct it passes sits before an unmapped page, so most likely the library read or wrote past the size it was given"
    echo "check_abi: a program built with the $header header fails against $(basename "$lib") (exit $rc$why)"
    exit 1
  fi
  sizes[$header]=$(echo "$out" | sed -n 's/.*compile_options \([0-9]*\), launch_config \([0-9]*\), cache_stats \([0-9]*\).*/\1 \2 \3/p')
done
read -r oc ol os <<<"${sizes[current]}"
read -r pc pl ps <<<"${sizes[previous]}"
if ! [ "$pc" -lt "$oc" ] || ! [ "$pl" -lt "$ol" ] || ! [ "$ps" -lt "$os" ]; then
  echo "check_abi: tests/abi/previous's structs ($pc $pl $ps bytes) are not all smaller than the current ($oc $ol $os)"
  exit 1
fi
echo "check_abi: programs built with the previous header ($pc, $pl, $ps bytes) and the current ($oc, $ol, $os) run alike"
