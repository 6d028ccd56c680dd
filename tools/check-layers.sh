#!/usr/bin/env bash
# The runtime's layers, bottom first (as ASYNCRT_LAYERS in runtime/CMakeLists.txt):
# a file may include its own layer's headers, a lower layer's, the public
# asyncrt/ headers, system headers and kernels_src/'s .cuh lists, and nothing
# above it. Also holds the size rule: no runtime file over 600 lines.
# Usage: tools/check-layers.sh [REPO]   (exit 1 on any violation, listed)
set -euo pipefail
repo=${1:-$(cd "$(dirname "$0")/.." && pwd)}
layers=(base remote cache context compile link load build tensormap ops)
cd "$repo/runtime"
rank_of() { local i; for i in "${!layers[@]}"; do [[ ${layers[$i]} == "$1" ]] && { echo "$i"; return; }; done; echo -1; }
bad=0
for layer in "${layers[@]}"; do
    mine=$(rank_of "$layer")
    for file in "$layer"/*.[ch]; do
        [[ -e $file ]] || continue
        lines=$(wc -l <"$file")
        if (( lines > 600 )); then echo "runtime/$file: $lines lines (the rule: at most 600)"; bad=1; fi
        while IFS=: read -r line header; do
            [[ $header == asyncrt/* || $header == *.cuh ]] && continue
            found=""
            for other in "${layers[@]}"; do [[ -e $other/$header ]] && found=$other; done
            if [[ -z $found ]]; then
                echo "runtime/$file:$line: includes \"$header\", which is in no layer"; bad=1
            elif (( $(rank_of "$found") > mine )); then
                echo "runtime/$file:$line: includes \"$header\" from $found/, above $layer/"; bad=1
            fi
        done < <(grep -n '^#include "' "$file" | sed -E 's/^([0-9]+):#include "([^"]+)".*/\1:\2/')
    done
done
stray=$(find . -maxdepth 2 -name '*.[ch]' ! -path './include/*' ! -path './worker/*' | while read -r f; do
    d=${f#./}; d=${d%%/*}; [[ $(rank_of "$d") == -1 ]] && echo "$f"; done || true)
if [[ -n $stray ]]; then echo "files outside every layer folder:"; echo "$stray"; bad=1; fi
(( bad == 0 )) && echo "layers: every include runs down or within a layer; no file over 600 lines"
exit $bad
