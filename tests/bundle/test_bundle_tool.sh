#!/usr/bin/env bash
# asyncrt-bundle on CCCL's real headers (issue 28), CPU only:
#  1. one bundle from a <cuda/barrier>, a <cuda/pipeline>, a <cooperative_groups.h>
#     (quoted "../x.h" and "info.h" includes inside) and a <cuda_bf16.h> kernel;
#  2. each compiled under ASYNCRT_TOOLKIT=none from the bundle gives the toolkit
#     compile's CUBIN, byte for byte;
#  3. without a bundle, ASYNCRT_TOOLKIT=none fails naming the header;
#  4. a header the bundle lacks names itself and says how to remake it;
#  5. a changed bundle misses the cache, the old one hits again; a damaged one is refused
#     when NVRTC would read it;
#  6. the consumer program (the bundle compiled in with --format c) compiles the
#     <cuda/barrier> kernel with no toolkit to the toolkit's CUBIN;
#  7. a <cuda/std/complex> kernel, one of whose headers NVRTC's trace omits, bundles
#     and passes the check.
# usage: test_bundle_tool.sh ASYNCRT-BUNDLE ASYNCRT-RUN BUNDLE-CONSUMER KERNELS-DIR WORK-DIR
set -euo pipefail
bundle=$1 run=$2 consumer=$3 kernels=$4 work=$5
rm -rf "$work" && mkdir -p "$work" && cd "$work"
unset ASYNCRT_TOOLKIT
export ASYNCRT_CACHE_DIR=$work/cache
all="barrier_scale pipeline_copy cg_reduce bf16_add"

expect_fail() { # CODE TEXT CMD...: CMD exits CODE and its stderr holds TEXT
  local code=$1 text=$2 rc=0
  shift 2
  "$@" 2>err.txt >/dev/null || rc=$?
  if [ "$rc" != "$code" ] || ! grep -qF -- "$text" err.txt; then
    echo "FAIL: $* exited $rc (expected $code) with:"; cat err.txt; echo "(expected to contain: $text)"; exit 1
  fi
}

echo "== 1. one bundle for four kernels"
"$bundle" $(for k in $all; do echo "$kernels/$k.cu"; done) --arch sm_90 -o all.bin | tee make.log
grep -q "checked: each source compiles from it alone to the toolkit's image" make.log

echo "== 2. from the bundle alone, with ASYNCRT_TOOLKIT=none: the toolkit's image"
# The bundle's own check (1.) compiled all four both ways; here, by default, two again through
# asyncrt-run: <cuda/barrier> (6. needs its image) and the quoted includes of cg_reduce; all four under
# ASYNCRT_TEST_FULL=1 (.ci/run).
some="barrier_scale cg_reduce"
[ "${ASYNCRT_TEST_FULL:-0}" = 0 ] || some=$all
for k in $some; do
  ASYNCRT_CACHE=0 "$run" "$kernels/$k.cu" --compile-only --arch sm_90 --emit-cubin "tk-$k.cubin" >/dev/null 2>&1
  ASYNCRT_CACHE=0 ASYNCRT_TOOLKIT=none "$run" "$kernels/$k.cu" --bundle all.bin --compile-only --arch sm_90 \
    --emit-cubin "b-$k.cubin" >/dev/null 2>&1
  cmp "tk-$k.cubin" "b-$k.cubin"
  echo "$k: $(stat -c %s "b-$k.cubin") bytes, equal"
done

echo "== 3. ASYNCRT_TOOLKIT=none and no bundle"
ASYNCRT_TOOLKIT=none expect_fail 3 '"cuda/barrier" was not found: toolkit discovery is off (ASYNCRT_TOOLKIT=none)' \
  "$run" "$kernels/barrier_scale.cu" --compile-only --arch sm_90

echo "== 4. a header the bundle lacks"
"$bundle" "$kernels/barrier_scale.cu" --no-check -o barrier.bin >/dev/null
ASYNCRT_TOOLKIT=none expect_fail 3 '"cooperative_groups.h" is not in the header bundle' \
  "$run" "$kernels/cg_reduce.cu" --bundle barrier.bin --compile-only --arch sm_90
grep -qF "made by: asyncrt-bundle $kernels/barrier_scale.cu --no-check -o barrier.bin); remake the bundle" err.txt

echo "== 5. a changed bundle misses the cache"
mkdir -p inc
printf '#define VALUE 1\n' >inc/value.h
printf '#include <value.h>\nextern "C" __global__ void k(int *p) { *p = VALUE; }\n' >mine.cu
"$bundle" mine.cu -I inc -o one.bin >/dev/null
printf '#define VALUE 2\n' >inc/value.h
"$bundle" mine.cu -I inc -o two.bin >/dev/null
rm -r inc # the bundles hold value.h now
origin() { ASYNCRT_TOOLKIT=none "$run" mine.cu --bundle "$1" --compile-only --arch sm_90 -v 2>&1 |
  grep -oE 'cache miss, NVRTC compiled|memory cache hit|disk cache hit' | head -1; }
[ "$(origin one.bin)" = "cache miss, NVRTC compiled" ]
[ "$(origin one.bin)" = "disk cache hit" ]
[ "$(origin two.bin)" = "cache miss, NVRTC compiled" ]
[ "$(origin one.bin)" = "disk cache hit" ]
cp one.bin bad.bin
at=$(grep -obUa 'VALUE 1' bad.bin | head -1 | cut -d: -f1) # value.h's text
printf '7' | dd of=bad.bin bs=1 seek=$((at + 6)) conv=notrunc status=none
ASYNCRT_CACHE=0 expect_fail 2 'header bundle: checksum mismatch (damaged)' \
  "$run" mine.cu --bundle bad.bin --compile-only --arch sm_90 # checked when NVRTC needs the headers
expect_fail 7 'cannot read the header bundle none.bin' "$run" mine.cu --bundle none.bin --compile-only --arch sm_90

echo "== 6. the consumer program, its bundle compiled in"
ASYNCRT_CACHE=0 ASYNCRT_TOOLKIT=none "$consumer" "$kernels/barrier_scale.cu" --compile sm_90 consumer.cubin
cmp consumer.cubin tk-barrier_scale.cubin

echo "== 7. a header NVRTC's time trace leaves out (<cuda/std/complex>'s <cuda/std/detail/__config>)"
# Before, the bundle lacked it and its own check refused the bundle (exit 3).
"$bundle" "$kernels/complex_mul.cu" --arch sm_90 -o complex.bin | tee complex.log
grep -q "checked: each source compiles from it alone to the toolkit's image" complex.log
echo "test_bundle_tool: all passed"
