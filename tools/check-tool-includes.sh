#!/usr/bin/env bash
# The tools reach the runtime through its public headers (asyncrt/*.h) or the
# one documented internal header of a layer (runtime/<layer>/<layer>_internal.h),
# never through a layer's private header; their own headers are theirs.
# Usage: tools/check-tool-includes.sh [REPO]   (exit 1 on any violation, listed)
set -euo pipefail
repo=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$repo"
checked=(bench cache common probe run)
bad=0
for dir in "${checked[@]}"; do
    for file in tools/"$dir"/*.[ch]; do
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
done
(( bad == 0 )) && echo "tool includes: public headers, layers' internal headers and the tools' own only"
exit $bad
