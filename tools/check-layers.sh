#!/usr/bin/env bash
# The runtime's layers, bottom first (as ASYNCRT_LAYERS in runtime/CMakeLists.txt),
# held three ways:
# - includes: a file may include its own layer's headers, a lower layer's, the
#   public asyncrt/ headers, system headers and kernels_src/'s .cuh lists, and
#   nothing above it;
# - calls: a function defined in layer L (its asyncrt_ or asyncrt__ name, in a
#   .c file or a header's static inline) is called from L or a layer above,
#   never below: the public header asyncrt/*.h, which every layer sees, would
#   otherwise let a layer call up past the include rule; and no two files call
#   each other round a loop (a file's calls to another file, as a graph);
# - size: no file over 600 lines anywhere outside tests/ (the runtime, its
#   public headers, kernels_src/, docs/, examples/, cmake/, .ci/ and the top
#   folder's files; tools/ has its own check, tools/check-tools.sh).
# Usage: tools/check-layers.sh [REPO]   (exit 1 on any violation, listed)
set -euo pipefail
repo=${1:-$(cd "$(dirname "$0")/.." && pwd)}
layers=(base remote cache context compile link load build tensormap ops)
cd "$repo/runtime"
declare -A rank=() # a layer's rank, bottom 0; ${rank[$x]:--1}, no subshell (the test runs this 5 times)
for i in "${!layers[@]}"; do rank[${layers[$i]}]=$i; done
bad=0
for layer in "${layers[@]}"; do
    mine=${rank[$layer]}
    for file in "$layer"/*.[ch]; do
        [[ -e $file ]] || continue
        while IFS=: read -r line header; do
            [[ $header == asyncrt/* || $header == *.cuh ]] && continue
            found=""
            for other in "${layers[@]}"; do [[ -e $other/$header ]] && found=$other; done
            if [[ -z $found ]]; then
                echo "runtime/$file:$line: includes \"$header\", which is in no layer"; bad=1
            elif (( ${rank[$found]} > mine )); then
                echo "runtime/$file:$line: includes \"$header\" from $found/, above $layer/"; bad=1
            fi
        done < <(grep -n '^#include "' "$file" | sed -E 's/^([0-9]+):#include "([^"]+)".*/\1:\2/')
    done
done
stray=$(find . -maxdepth 2 -name '*.[ch]' ! -path './include/*' ! -path './worker/*' | while read -r f; do
    d=${f#./}; d=${d%%/*}; [[ ${rank[$d]:--1} == -1 ]] && echo "$f"; done || true)
if [[ -n $stray ]]; then echo "files outside every layer folder:"; echo "$stray"; bad=1; fi

# ---- size ---------------------------------------------------------------------
# The checkout's files (git's list, untracked ones included, ignored ones not),
# else every file under the repository but hidden folders and build*/.
sized_files() {
    if git -C .. rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        git -C .. ls-files -z --cached --others --exclude-standard
    else
        (cd .. && find . \( -path './.*' -o -path './build*' -o -name __pycache__ \) -prune -o -type f -print0 |
            sed -z 's|^\./||')
    fi
}
while IFS= read -r -d '' file; do
    [[ $file == tests/* || $file == tools/* || ! -f ../$file ]] && continue
    grep -Iq . "../$file" || continue # binary or empty: no lines to count
    lines=$(wc -l <"../$file")
    if (( lines > 600 )); then echo "$file: $lines lines (the rule: at most 600)"; bad=1; fi
done < <(sized_files)

# ---- calls -------------------------------------------------------------------
# One pass per file: comments dropped and literals emptied (line numbers
# kept), then "D name" for each asyncrt_ function it defines (a line that
# starts a declaration at column 0 and reaches '{' before ';') and "C name
# line" for each call of one.
names() {
    awk '{
        out = ""; n = length($0)
        for (i = 1; i <= n; i++) {
            c = substr($0, i, 1)
            if (incomment) { if (c == "*" && substr($0, i + 1, 1) == "/") { incomment = 0; i++ }; continue }
            if (quote != "") { if (c == "\\") { i++; continue }; if (c == quote) { out = out c; quote = "" }; continue }
            if (c == "/" && substr($0, i + 1, 1) == "*") { incomment = 1; i++; continue }
            if (c == "/" && substr($0, i + 1, 1) == "/") break
            if (c == "\"" || c == "'\''") quote = c
            out = out c
        }
        if (quote != "" && substr($0, n, 1) != "\\") quote = ""
        print out
    }' "$1" | awk '
    function first_name(s,    m) {
        if (!match(s, /asyncrt_[A-Za-z0-9_]+[ \t]*\(/)) return ""
        m = substr(s, RSTART, RLENGTH); sub(/[ \t]*\($/, "", m); return m
    }
    {
        own = ""
        if (pending == "" && $0 ~ /^[A-Za-z_]/ && $0 !~ /^(typedef|struct|enum|union|extern)[ \t]/) {
            pending = first_name($0); own = pending
            rest = pending == "" ? "" : substr($0, index($0, pending) + length(pending))
        } else rest = $0
        if (pending != "") {
            b = index(rest, "{"); s = index(rest, ";")
            if (b && (!s || b < s)) { print "D " pending; pending = "" } else if (s) pending = ""
        }
        t = $0
        while (match(t, /asyncrt_[A-Za-z0-9_]+[ \t]*\(/)) {
            m = substr(t, RSTART, RLENGTH); sub(/[ \t]*\($/, "", m)
            if (m != own) print "C " m " " NR; else own = ""
            t = substr(t, RSTART + RLENGTH)
        }
    }'
}
table=$(for layer in "${layers[@]}"; do
    for file in "$layer"/*.[ch]; do [[ -e $file ]] && names "$file" | sed "s|^|$file |"; done
done)
declare -A defined_in=()
while read -r file kind name _; do
    [[ $kind == D ]] && defined_in[$name]=$file
done <<<"$table"
edges=""
while read -r file kind name line; do
    [[ $kind == C && $file == *.c && -n ${defined_in[$name]:-} ]] || continue
    home=${defined_in[$name]}
    if (( ${rank[${home%%/*}]:--1} > ${rank[${file%%/*}]:--1} )); then
        echo "runtime/$file:$line: calls $name, defined in ${home%%/*}/ ($home), above ${file%%/*}/"; bad=1
    fi
    [[ $home == *.c && $home != "$file" ]] && edges+="$file $home"$'\n'
done <<<"$table"
if ! loop=$(sort -u <<<"$edges" | sed '/^$/d' | tsort 2>&1 >/dev/null) || [[ -n $loop ]]; then
    echo "files that call each other round a loop (tsort):"; echo "$loop"; bad=1
fi
(( bad == 0 )) && echo "layers: every include and call runs down or within a layer, no file calls round a loop; no file over 600 lines"
exit $bad
