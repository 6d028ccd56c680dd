#!/usr/bin/env bash
# The tools' rules hold in this tree (tools/check-tools.sh), and the checker
# sees a break of each: an include from inside the library (a private header
# or a layer's internal one), a link to the library's objects, and a file over
# 600 lines.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
"$repo/tools/check-tools.sh" "$repo"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$repo/runtime" "$repo/tools" "$work/"
printf '#include "cache_store.h"\n' >>"$work/tools/cache/cmd_stats.c"
if out=$("$work/tools/check-tools.sh" "$work"); then echo "FAIL: a private include passed"; exit 1; fi
grep -q 'tools/cache/cmd_stats.c:.*includes "cache_store.h", inside the library (runtime/cache/)' <<<"$out" || { echo "FAIL: $out"; exit 1; }
cp "$repo/tools/cache/cmd_stats.c" "$work/tools/cache/cmd_stats.c"
printf '#include "cache_internal.h"\n' >>"$work/tools/run/cli.c"
if out=$("$work/tools/check-tools.sh" "$work"); then echo "FAIL: a layer's internal header passed"; exit 1; fi
grep -q 'tools/run/cli.c:.*includes "cache_internal.h", inside the library' <<<"$out" || { echo "FAIL: $out"; exit 1; }
cp "$repo/tools/run/cli.c" "$work/tools/run/cli.c"
printf 'target_link_libraries(asyncrt-probe PRIVATE asyncrt_internal)\n' >>"$work/tools/probe/CMakeLists.txt"
if out=$("$work/tools/check-tools.sh" "$work"); then echo "FAIL: a link to the library's objects passed"; exit 1; fi
grep -q "tools/probe/CMakeLists.txt:.*links the library's objects" <<<"$out" || { echo "FAIL: $out"; exit 1; }
cp "$repo/tools/probe/CMakeLists.txt" "$work/tools/probe/CMakeLists.txt"

# A new tool's folder is checked too, and the size rule covers scripts.
mkdir "$work/tools/newtool"
seq 601 | sed 's|^|# |' >"$work/tools/newtool/gen.sh"
if out=$("$work/tools/check-tools.sh" "$work"); then echo "FAIL: a 601-line file passed"; exit 1; fi
grep -q '^tools/newtool/gen.sh: 601 lines (the rule: at most 600)' <<<"$out" || { echo "FAIL: $out"; exit 1; }
seq 600 | sed 's|^|# |' >"$work/tools/newtool/gen.sh"
"$work/tools/check-tools.sh" "$work" >/dev/null || { echo "FAIL: a 600-line file was refused"; exit 1; }
echo "ok: the checker refuses a tool's include from inside the library, a link to its objects and an oversized tools/ file"
