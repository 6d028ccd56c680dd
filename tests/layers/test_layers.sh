#!/usr/bin/env bash
# The layer rule holds in this tree, and the checker sees a break of it:
# an include that runs up a layer, a call that runs up a layer (through the
# public header, which the include rule lets every layer see), two files that
# call each other round a loop, and a file over 600 lines (a layer's or a
# public header).
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
# compile/ loading a module: asyncrt_module_load is load/'s, a layer above.
printf '\nvoid asyncrt__up(void);\nvoid asyncrt__up(void) { asyncrt_module_load(NULL, NULL, NULL); }\n' \
    >>"$work/runtime/compile/key.c"
if out=$("$work/tools/check-layers.sh" "$work"); then echo "FAIL: an up-call passed"; exit 1; fi
grep -q 'compile/key.c:.*: calls asyncrt_module_load, defined in load/ (load/module.c), above compile/' <<<"$out" ||
    { echo "FAIL: $out"; exit 1; }

cp "$repo/runtime/compile/key.c" "$work/runtime/compile/key.c"
# The target step compiling again through the flow that called it (the loop
# compile.c <-> speculative.c had, before the guess moved into target.c).
printf '\nvoid asyncrt__again(void);\nvoid asyncrt__again(void) { asyncrt__program_compile_arch(0, 0, 0, 0, 0, 0); }\n' \
    >>"$work/runtime/compile/target.c"
if out=$("$work/tools/check-layers.sh" "$work"); then echo "FAIL: a call loop passed"; exit 1; fi
grep -q 'round a loop' <<<"$out" && grep -q 'compile/target.c' <<<"$out" && grep -q 'compile/compile.c' <<<"$out" ||
    { echo "FAIL: $out"; exit 1; }

cp "$repo/runtime/compile/target.c" "$work/runtime/compile/target.c"
seq 700 | sed 's|^|// |' >>"$work/runtime/base/sha256.c"
if out=$("$work/tools/check-layers.sh" "$work"); then echo "FAIL: a 700-line file passed"; exit 1; fi
grep -q 'base/sha256.c: .* lines (the rule: at most 600)' <<<"$out" || { echo "FAIL: $out"; exit 1; }

# The rule is the whole tree's, not only the layers': a public header too.
cp "$repo/runtime/base/sha256.c" "$work/runtime/base/sha256.c"
seq 700 | sed 's|^|// |' >>"$work/runtime/include/asyncrt/runtime.h"
if out=$("$work/tools/check-layers.sh" "$work"); then echo "FAIL: a 700-line public header passed"; exit 1; fi
grep -q 'runtime/include/asyncrt/runtime.h: .* lines' <<<"$out" || { echo "FAIL: $out"; exit 1; }
echo "ok: the checker refuses an up-include, an up-call, a call loop and an oversized file"
