#!/usr/bin/env bash
# The cross-file kernel of issue 27 three ways, on the GPU: one file, two
# files linked without LTO, two files linked with --lto (asyncrt-run
# --repeat 20: median of 20 launches timed with CUDA events), alternated over
# $ROUNDS rounds, plus the registers of each image; then the link tests
# (test_link_gpu, and test_link_mathdx where tests/link/mathdx has its
# LTO-IR). Usage: link_bench.sh BUILD_DIR [OUT_DIR]; prints a table.
set -u
build=${1:?usage: link_bench.sh BUILD_DIR [OUT_DIR]} out=${2:-.}
cd "$(dirname "$0")/../.."
run=$build/tools/run/asyncrt-run
k=tests/link/kernels
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat $k/axpy_util.cu $k/axpy_main.cu >"$work/axpy_single.cu"
n=${LINK_BENCH_N:-67108864}
args=(--kernel axpy --grid 1056 --block 256 --buf "x=f32:$n:rand=1" --buf "y=f32:$n:rand=2" --arg f32:1.5
      --arg buf:x --arg buf:y --arg "i32:$n" --repeat 20 --warmup 3 --bytes $((12 * n)))
for round in $(seq 1 "${ROUNDS:-3}"); do
  for variant in single rdc lto; do
    case $variant in
    single) files=("$work/axpy_single.cu") extra=() ;;
    rdc) files=($k/axpy_main.cu $k/axpy_util.cu) extra=() ;;
    lto) files=($k/axpy_main.cu $k/axpy_util.cu) extra=(--lto) ;;
    esac
    line=$("$run" "${files[@]}" "${extra[@]}" "${args[@]}" -v 2>"$work/err" | grep 'time: median') ||
      { echo "$variant: FAILED"; cat "$work/err"; continue; }
    ms=$(echo "$line" | sed 's/.*median \([0-9.]*\) ms.*/\1/')
    regs=$(grep -o 'kernel axpy is [^(]*([0-9]* registers' "$work/err" | grep -o '[0-9]* registers')
    echo "round $round $variant: median $ms ms, $regs"
  done
done | tee "$out/link_bench.log"
# the median over rounds of each variant's medians, and the difference from one file
python3 - "$out/link_bench.log" <<'PY' | tee -a "$out/link_bench.log"
import re, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    m = re.match(r"round \d+ (\w+): median ([0-9.]+) ms", line)
    if m: runs.setdefault(m.group(1), []).append(float(m.group(2)))
med = {k: statistics.median(v) for k, v in runs.items()}
for k in ("single", "rdc", "lto"):
    if k in med and "single" in med:
        print(f"link bench: {k:6s} {med[k]:.4f} ms, {100 * (med[k] / med['single'] - 1):+.2f}% against one file")
PY
for t in test_link_gpu test_link_mathdx; do
  [ -x "$build/tests/link/$t" ] && { "$build/tests/link/$t"; echo "$t exit $?"; } 2>&1 | tee -a "$out/link_bench.log"
done
