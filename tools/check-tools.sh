#!/usr/bin/env bash
# The tools' two rules, the tools/ side of check-layers.sh:
#  - includes: a tool reaches the runtime only through its public headers
#    (asyncrt/*.h), never through a layer's header, internal or private;
#    the tools' own headers (and tools/common's) are theirs.
#  - linking: a tool links the library (asyncrt), never its objects
#    (asyncrt_internal, asyncrt_private).
#  - size: no file under tools/ (sources, headers, scripts, READMEs, CMake
#    lists) over 600 lines, as for runtime/.
# Every folder under tools/ is checked, so a new tool is covered unasked.
# Usage: tools/check-tools.sh [REPO]   (exit 1 on any violation, listed)
set -euo pipefail
repo=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$repo"
bad=0
declare -A inside=() # runtime/LAYER/NAME by NAME, the first by path order (as ls runtime/*/NAME gave)
for h in runtime/*/*; do [[ -f $h && -z ${inside[${h##*/}]:-} ]] && inside[${h##*/}]=$h; done
for file in tools/*/*.[ch]; do
    [[ -e $file ]] || continue
    while IFS=: read -r line header; do
        [[ $header == asyncrt/* ]] && continue
        if [[ $header == */* ]]; then private=$(ls runtime/*/"$header" 2>/dev/null | head -1 || true)
        else private=${inside[$header]:-}; fi
        if [[ -n $private ]]; then
            echo "$file:$line: includes \"$header\", inside the library (${private%/*}/): use the public API, asyncrt/*.h"
            bad=1
        fi
    done < <(grep -n '^#include "' "$file" | sed -E 's/^([0-9]+):#include "([^"]+)".*/\1:\2/')
done
while IFS=: read -r file line text; do
    echo "$file:$line: links the library's objects ($text): link asyncrt, the public library"
    bad=1
done < <(grep -rnE --include=CMakeLists.txt --include='*.cmake' '\basyncrt_(internal|private)\b' tools || true)
while IFS= read -r -d '' file; do
    grep -Iq . "$file" || continue # binary or empty: no lines to count
    lines=$(wc -l <"$file")
    if (( lines > 600 )); then echo "$file: $lines lines (the rule: at most 600)"; bad=1; fi
done < <(find tools -type f ! -path '*/__pycache__/*' -print0)
(( bad == 0 )) && echo "tools: public headers and the tools' own only, linked to asyncrt; no file over 600 lines"
exit $bad
