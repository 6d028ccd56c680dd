#!/usr/bin/env bash
# The tools' two rules, the tools/ side of check-layers.sh:
#  - includes: a tool reaches the runtime through its public headers
#    (asyncrt/*.h) or the one documented internal header of a layer
#    (runtime/<layer>/<layer>_internal.h), never through a layer's private
#    header; the tools' own headers (and tools/common's) are theirs.
#  - size: no file under tools/ (sources, headers, scripts, READMEs, CMake
#    lists) over 600 lines, as for runtime/.
# Every folder under tools/ is checked, so a new tool is covered unasked.
# Usage: tools/check-tools.sh [REPO]   (exit 1 on any violation, listed)
set -euo pipefail
repo=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$repo"
bad=0
for file in tools/*/*.[ch]; do
    [[ -e $file ]] || continue
    while IFS=: read -r line header; do
        [[ $header == asyncrt/* ]] && continue
        private=$(ls runtime/*/"$header" 2>/dev/null | head -1 || true)
        if [[ -n $private && $header != *_internal.h ]]; then
            echo "$file:$line: includes \"$header\", private to ${private%/*}/ (use asyncrt/ or its layer's _internal.h)"
            bad=1
        fi
    done < <(grep -n '^#include "' "$file" | sed -E 's/^([0-9]+):#include "([^"]+)".*/\1:\2/')
done
while IFS= read -r -d '' file; do
    grep -Iq . "$file" || continue # binary or empty: no lines to count
    lines=$(wc -l <"$file")
    if (( lines > 600 )); then echo "$file: $lines lines (the rule: at most 600)"; bad=1; fi
done < <(find tools -type f ! -path '*/__pycache__/*' -print0)
(( bad == 0 )) && echo "tools: public headers, layers' internal headers and the tools' own only; no file over 600 lines"
exit $bad
