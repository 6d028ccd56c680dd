#!/usr/bin/env bash
# The tools include public headers and the layers' internal headers only
# (tools/check-tool-includes.sh), and the checker sees a private one.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
"$repo/tools/check-tool-includes.sh" "$repo"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$repo/runtime" "$repo/tools" "$work/"
printf '#include "cache_store.h"\n' >>"$work/tools/cache/cmd_stats.c"
if out=$("$work/tools/check-tool-includes.sh" "$work"); then echo "FAIL: a private include passed"; exit 1; fi
grep -q 'tools/cache/cmd_stats.c:.*includes "cache_store.h", private to runtime/cache/' <<<"$out" || { echo "FAIL: $out"; exit 1; }
echo "ok: the checker refuses a tool's private include"
