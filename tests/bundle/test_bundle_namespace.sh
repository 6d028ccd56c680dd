#!/usr/bin/env bash
# The proof of test_bundle_tool.sh without relying on ASYNCRT_TOOLKIT: in a
# private mount namespace an empty folder is bind-mounted over the toolkit's
# include folder (CCCL's beneath it), so no toolkit header exists at all.
# There the consumer program still compiles its bundled <cuda/barrier> kernel
# to the CUBIN the toolkit gives outside, and asyncrt-run without a bundle
# cannot find <cuda/barrier>. Root only (exit 77, skipped, otherwise).
# usage: test_bundle_namespace.sh ASYNCRT-RUN BUNDLE-CONSUMER KERNELS-DIR WORK-DIR
set -euo pipefail
run=$1 consumer=$2 kernels=$3 work=$4
if [ "$(id -u)" != 0 ]; then echo "skipped: hiding the toolkit needs root (unshare -m, mount --bind)"; exit 77; fi
if ! unshare -m true 2>/dev/null; then echo "skipped: unshare -m is not permitted here"; exit 77; fi
rm -rf "$work" && mkdir -p "$work/empty" && cd "$work"
unset ASYNCRT_TOOLKIT
export ASYNCRT_CACHE=0
include=$(readlink -f "${CUDA_PATH:-/usr/local/cuda}/include")
[ -e "$include/cuda_bf16.h" ] || { echo "no toolkit at $include to hide"; exit 1; }
"$run" "$kernels/barrier_scale.cu" --compile-only --arch sm_90 --emit-cubin toolkit.cubin >/dev/null 2>&1
export include run consumer kernels
unshare -m --propagation private bash -euo pipefail -c '
  mount --bind empty "$include"
  [ ! -e "$include/cuda_bf16.h" ] && [ ! -e "$include/cccl/cuda/barrier" ]
  echo "hidden: $include is empty here"
  "$consumer" "$kernels/barrier_scale.cu" --compile sm_90 hidden.cubin
  rc=0; "$run" "$kernels/barrier_scale.cu" --compile-only --arch sm_90 >/dev/null 2>err.txt || rc=$?
  [ $rc = 3 ] && grep -qF "\"cuda/barrier\" was not found: no CUDA toolkit include directory was found" err.txt ||
    { echo "FAIL: asyncrt-run without a bundle exited $rc:"; cat err.txt; exit 1; }'
cmp hidden.cubin toolkit.cubin
echo "test_bundle_namespace: the bundled compile needs no toolkit file and gives the toolkit's image"
