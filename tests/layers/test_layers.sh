#!/usr/bin/env bash
# The layer rule holds in this tree, and the checker sees a break of it:
# an include that runs up a layer, and a file over 600 lines.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
"$repo/tools/check-layers.sh" "$repo"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/tools"
cp -r "$repo/runtime" "$work/"
cp "$repo/tools/check-layers.sh" "$work/tools/"
printf '#include "context.h"\n' >>"$work/runtime/base/diag.c"
if out=$("$work/tools/check-layers.sh" "$work"); then echo "FAIL: an up-include passed"; exit 1; fi
grep -q 'base/diag.c:.*includes "context.h" from context/, above base/' <<<"$out" || { echo "FAIL: $out"; exit 1; }

cp "$repo/runtime/base/diag.c" "$work/runtime/base/diag.c"
seq 700 | sed 's|^|// |' >>"$work/runtime/base/sha256.c"
if out=$("$work/tools/check-layers.sh" "$work"); then echo "FAIL: a 700-line file passed"; exit 1; fi
grep -q 'base/sha256.c: .* lines (the rule: at most 600)' <<<"$out" || { echo "FAIL: $out"; exit 1; }
echo "ok: the checker refuses an up-include and an oversized file"
