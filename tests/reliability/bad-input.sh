#!/usr/bin/env bash
# Malformed invocations of asyncrt-run, asyncrt-probe, asyncrt-bench and
# asyncrt-cache: each must end with its documented exit code and a message
# containing the phrase given, and none may crash (signal, exit >= 128,
# sanitizer report, timeout). At the end, every tool must have been seen
# ending with every exit code it can produce without a GPU (the table below).
#   bad-input.sh RUN PROBE BENCH CACHE [FAKE_DEVICE_LIBCUDA]
# (ctest passes them; FAKE_DEVICE_LIBCUDA is tests/runtime's one-device fake
# driver, which reaches the "driver call failed" and "--check FAILED" codes.)
# BAD_INPUT_WRAPPER (e.g. a valgrind command line) goes in front of every
# invocation; BAD_INPUT_TIMEOUT (s, default 120) bounds each.
# The cases are chosen to fail before a driver is needed, so they mean the same
# on machines with and without a GPU; the few that reach for the driver accept
# its absence (exit 4) or its presence only where stated.
# Exit codes: one table for the four tools (tools/common/exit_codes.h, in
# each --help): 0 ok, 1 internal, 2 usage, 3 compile, 4 no driver/device,
# 5 CUDA (driver call, load, launch, fault; bench: a measurement failed),
# 6 a checked result or file is wrong (run --expect, probe --check, cache
# verify/import), 7 a file or directory not read, written or used.
set -u
RUN=${1:?usage: bad-input.sh RUN PROBE BENCH CACHE [FAKE_DEVICE_LIBCUDA]}
PROBE=${2:?}
BENCH=${3:?}
CACHE=${4:?}
FAKE_DEVICE=${5:-}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
SAXPY=$SRC/tests/run/kernels/saxpy.cu
TMA=$SRC/tests/run/kernels/tma_2d.cu
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# A huge host allocation must fail cleanly, also under ASan (which would
# otherwise report it instead of returning NULL).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1"
export ASYNCRT_CACHE_DIR=$T/cache

# '@' first: NVRTC reads up to the first NUL, and always sees an error (a source that does not compile
# is reported before any word on its kernels).
printf '@@@ ' >"$T/garbage.cu"
head -c 4096 /dev/urandom >>"$T/garbage.cu"
printf '\x00\x01\x02__global__\xff\xfe' >>"$T/garbage.cu"
# The same without NUL bytes, so that NVRTC sees all of it (real errors).
tr -d '\000' <"$T/garbage.cu" >"$T/garbage2.cu"
: >"$T/empty.cu"
echo '__global__ void k(int *p) { p[0] = undefined_thing; }' >"$T/error.cu"
echo 'not a directory' >"$T/file"
# .npy files: garbage, a truncated one, and a valid f32[4] that is too small for f32:16.
head -c 200 /dev/urandom >"$T/garbage.npy"
npy_f32_4() { # magic, version 1.0, header length 118, header padded to 128 bytes, 16 data bytes
  printf '\x93NUMPY\x01\x00\x76\x00'
  printf "%-117s\n" "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }"
  head -c 16 /dev/zero
}
npy_f32_4 >"$T/four.npy"
head -c 100 "$T/four.npy" >"$T/truncated.npy"
printf '\x93NUMPY\x01\x00\x76\x00%-117s\n' "{'descr': '<c8', 'fortran_order': False, 'shape': (4,), }" >"$T/complex.npy"
printf '\x93NUMPY\x01\x00\x76\x00%-117s\n' "{'descr': '<f4', 'fortran_order': True, 'shape': (2,2), }" >"$T/fortran.npy"
printf '\x93NUMPY\x01\x00\x76\x00%-117s\n' "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), } junk" >"$T/junk.npy"
head -c 16 /dev/zero >>"$T/junk.npy"
{ npy_f32_4; printf 'trailing'; } >"$T/trailing.npy"
# f32 [1, NaN, 2, 3] (little-endian)
{ printf '\x93NUMPY\x01\x00\x76\x00%-117s\n' "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }"
  printf '\x00\x00\x80\x3f\x00\x00\xc0\x7f\x00\x00\x00\x40\x00\x00\x40\x40'; } >"$T/nan.npy"
cp "$T/four.npy" "$T/ref.npy"
echo 'template <typename T, int N> __global__ void tk(T *d) { d[0] = N; }' >"$T/tmpl.cu"

passed=0 failed=0
rows=()
declare -A seen=()
# check CODE PHRASE TOOL ARGS... : runs TOOL ARGS, checks the exit code and that
# stdout+stderr contain PHRASE (fixed string); stdin is /dev/null unless the
# case redirects it through `sh -c`.
check() {
  local want=$1 phrase=$2
  shift 2
  local out code verdict=ok
  # shellcheck disable=SC2086 # the wrapper is a command line
  out=$(timeout "${BAD_INPUT_TIMEOUT:-120}" ${BAD_INPUT_WRAPPER:-} "$@" </dev/null 2>&1)
  code=$?
  [ -n "${BAD_INPUT_VERBOSE:-}" ] && echo "$code: ${out:0:240}" >&2
  if [ $code -ge 124 ]; then verdict="CRASH/TIMEOUT"
  elif grep -aqE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|Segmentation fault|core dumped|ERROR SUMMARY: [1-9]' <<<"$out"; then verdict="SANITIZER"
  elif [ "$code" != "$want" ]; then verdict="exit $code, expected $want"
  elif ! grep -aqF -- "$phrase" <<<"$out"; then verdict="message lacks '$phrase'"
  fi
  local shown=("$@")
  shown[0]=$(basename "$1")
  local cmd="${shown[*]}"
  cmd=${cmd//$T\//}
  cmd=${cmd//$SRC\//}
  if [ "$verdict" = ok ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
  if [ "$verdict" = ok ]; then # which tool ended with which code
    local a
    for a in "$@"; do
      case $a in "$RUN") seen[asyncrt-run]+=" $want" ;; "$PROBE") seen[asyncrt-probe]+=" $want" ;;
        "$BENCH") seen[asyncrt-bench]+=" $want" ;; "$CACHE") seen[asyncrt-cache]+=" $want" ;; esac
    done
  fi
  rows+=("$(printf '%-4s %-3s %-5s %-80.80s %s' "$((passed + failed))" "$want" "$([ "$verdict" = ok ] && echo pass || echo FAIL)" "$cmd" "$([ "$verdict" = ok ] || echo "$verdict: ${out:0:300}")")")
}

# ---- asyncrt-run: command line ----------------------------------------------
check 2 "no source file given" "$RUN"
check 2 "'-' (stdin) can only be the one source" "$RUN" a.cu -
check 2 "unknown option '--bogus'" "$RUN" "$SAXPY" --bogus
check 2 "--arch needs a value" "$RUN" "$SAXPY" --arch
check 2 "--arch 'sm_99x'" "$RUN" "$SAXPY" --arch sm_99x --compile-only
check 2 "--arch 'banana'" "$RUN" "$SAXPY" --arch banana --compile-only
check 2 "--arch 'sm_'" "$RUN" "$SAXPY" --arch sm_ --compile-only
check 2 "needs an explicit --arch" "$RUN" "$SAXPY" --compile-only
check 2 "--grid '-1'" "$RUN" "$SAXPY" --grid -1
check 2 "--grid '0'" "$RUN" "$SAXPY" --grid 0
check 2 "--block '99999999999'" "$RUN" "$SAXPY" --block 99999999999
check 2 "--block '1,2,3,4'" "$RUN" "$SAXPY" --block 1,2,3,4
check 2 "--smem '1T'" "$RUN" "$SAXPY" --smem 1T
check 2 "--device '-3'" "$RUN" "$SAXPY" --device -3
check 2 "--repeat '-1'" "$RUN" "$SAXPY" --repeat -1
check 2 "--rtol '-2'" "$RUN" "$SAXPY" --rtol -2
check 2 "shape '-5'" "$RUN" "$SAXPY" --buf x=f32:-5
check 2 "shape '99999999999999999999'" "$RUN" "$SAXPY" --buf x=f32:99999999999999999999
check 2 "more than 2^40 elements" "$RUN" "$SAXPY" --buf x=f64:1099511627776x2
check 2 "DTYPE one of" "$RUN" "$SAXPY" --buf x=f99:4
check 2 "'abc' is not a f32 number" "$RUN" "$SAXPY" --arg f32:abc
check 2 "no --buf named 'nope'" "$RUN" "$SAXPY" --arg buf:nope
check 2 "no --buf named 'nobuf'" "$RUN" "$SAXPY" --tmap t=nobuf:box=4
check 2 "--grid '08x'" "$RUN" "$SAXPY" --grid 08x
check 2 "--grid '0x'" "$RUN" "$SAXPY" --grid 0x
check 2 "not a i32 integer" "$RUN" "$SAXPY" --arg i32:0o17
check 2 "out of range for i8" "$RUN" "$SAXPY" --arg i8:300
check 2 "overflows f16 (largest finite value 65504)" "$RUN" "$SAXPY" --arg f16:1e6
check 2 "iota would produce 299 is out of range for u8" "$RUN" "$SAXPY" --buf x=u8:300:iota
check 2 "rand would produce" "$RUN" "$SAXPY" --buf x=f16:4:rand=1,0,1e9
check 2 "even, non-zero count of hex digits" "$RUN" "$SAXPY" --arg bytes:abc
check 2 "field 'x:1'" "$RUN" "$SAXPY" --arg struct:f32:1,x:1
check 2 "offset 'q'" "$RUN" "$SAXPY" --buf x=f32:4 --arg buf:x+q
check 2 "no --tmap named 'm'" "$RUN" "$SAXPY" --arg tmapptr:m
check 2 "the first launch has no launch before it" "$RUN" "$SAXPY" --pdl
check 2 "no cooperative cluster launch" "$RUN" "$SAXPY" --cooperative --cluster 2
check 2 "--priority 'high'" "$RUN" "$SAXPY" --priority high
check 2 "more than 16 launches" "$RUN" "$SAXPY" --then --then --then --then --then --then --then --then --then --then --then --then --then --then --then --then
check 2 "expected rtol=R and/or atol=A" "$RUN" "$SAXPY" --buf y=f32:4 --expect y=r.npy:rtol=lots
check 2 "would overwrite the --expect reference" "$RUN" "$SAXPY" --buf y=f32:4 --out y="$T/ref.npy" --expect y="$T/ref.npy"
check 2 "are the same file" "$RUN" "$SAXPY" --buf y=f32:4 --out y="$T/./ref.npy" --expect y="$T/ref.npy"
# ---- asyncrt-run: impossible tensor maps (validated before the driver) -------
check 2 "box_dim[0] (300): must be 1..256" "$RUN" "$SAXPY" --buf x=f32:64 --tmap t=x:box=300
check 2 "must be a multiple of 16" "$RUN" "$SAXPY" --buf x=f32:64 --tmap t=x:box=3
check 2 "the span of swizzle 32b" "$RUN" "$TMA" --buf x=f32:64x64 --tmap t=x:box=16,16:swizzle=32b
check 2 "but buffer x holds 256" "$RUN" "$TMA" --buf x=f32:64 --tmap t=x:box=16:dims=1000
check 2 "reach 576 bytes but buffer x holds 512" "$RUN" "$TMA" --buf x=f32:8x4x4 --tmap t=x:box=4,4,4:dims=4,4,9:interleave=16b
check 2 "element_stride[1] (9)" "$RUN" "$TMA" --buf x=f32:64x64 --tmap t=x:box=16,16:estrides=1,9
# ---- asyncrt-run: sizes and files -------------------------------------------
check 1 "cannot allocate 4398046511104 bytes of host memory (more than this machine has)" "$RUN" "$SAXPY" --buf x=f32:1099511627776
check 7 "cannot open /nonexistent/k.cu" "$RUN" /nonexistent/k.cu --arch sm_90 --compile-only
check 7 "cannot read $T" "$RUN" "$T" --arch sm_90 --compile-only
check 7 "No such file or directory" "$RUN" "$SAXPY" --buf x=npy:/nonexistent.npy
check 7 "no \\x93NUMPY magic" "$RUN" "$SAXPY" --buf x=npy:"$T/garbage.npy"
check 7 "truncated header: 118 bytes announced" "$RUN" "$SAXPY" --buf x=npy:"$T/truncated.npy"
check 7 "'<c8' is not supported" "$RUN" "$SAXPY" --buf x=npy:"$T/complex.npy"
check 7 "Fortran (column-major) order" "$RUN" "$SAXPY" --buf x=npy:"$T/fortran.npy"
check 2 "four.npy holds 4 elements but the buffer has 16" "$RUN" "$SAXPY" --buf x=f32:16:npy="$T/four.npy"
check 7 "not a regular file" "$RUN" "$SAXPY" --buf x=npy:/dev/zero
check 7 "not a regular file" "$RUN" "$SAXPY" --buf x=f32:4:npy=/dev/stdin
check 7 "junk after the header dict" "$RUN" "$SAXPY" --buf x=npy:"$T/junk.npy"
check 7 "8 bytes follow the data the shape describes" "$RUN" "$SAXPY" --buf x=npy:"$T/trailing.npy"
check 2 "element 1: nan cannot be stored in i32" "$RUN" "$SAXPY" --buf x=i32:4:npy="$T/nan.npy"
check 7 "cannot write $T/file/x.ptx" "$RUN" "$SAXPY" --arch sm_90 --compile-only --emit-ptx "$T/file/x.ptx"
# ---- asyncrt-run: sources NVRTC or the scanner refuse ------------------------
check 3 "garbage.cu for sm_90 failed (NVRTC_ERROR_COMPILATION)" "$RUN" "$T/garbage.cu" --arch sm_90 --compile-only
check 2 "no __global__ function found" "$RUN" "$T/empty.cu" --arch sm_90 --compile-only
check 3 "compiling stdin.cu for sm_90 failed" sh -c '"$0" - --arch sm_90 --compile-only <"$1"' "$RUN" "$T/garbage.cu"
check 2 "no __global__ function found in -" sh -c '"$0" - --arch sm_90 --compile-only <"$1"' "$RUN" "$T/empty.cu"
check 3 "identifier \"undefined_thing\" is undefined" "$RUN" "$T/error.cu" --arch sm_90 --compile-only
check 2 "identifier \"nosuch\" is undefined" "$RUN" "$SAXPY" --arch sm_90 --compile-only --kernel nosuch
check 3 "garbage2.cu" "$RUN" "$T/garbage2.cu" --arch sm_90 --compile-only --kernel k
check 2 "is a template <typename T, int N>; --kernel tk: name an instantiation, e.g. --kernel 'tk<float, 1>'" "$RUN" "$T/tmpl.cu" --arch sm_90 --compile-only --kernel tk
check 2 "unrecognized option --no-such-flag" "$RUN" "$SAXPY" --arch sm_90 --compile-only -Xnvrtc --no-such-flag
check 2 "invalid value for --std" "$RUN" "$SAXPY" --arch sm_90 --compile-only --std c++99
# ---- asyncrt-run: an unusable cache directory is no failure (docs/cache.md)
check 0 "not caching in $T/file/cache" env ASYNCRT_LOG=1 ASYNCRT_CACHE_DIR="$T/file/cache" "$RUN" "$SAXPY" --arch sm_90 --compile-only
check 0 "not caching in /proc/self/asyncrt-cache" env ASYNCRT_LOG=1 ASYNCRT_CACHE_DIR=/proc/self/asyncrt-cache "$RUN" "$SAXPY" --arch compute_80 --compile-only
# ---- versions: library and NVRTC (as major.minor) ------------------------------
check 0 "(libasyncrt " "$RUN" --version
check 0 "(libasyncrt " "$PROBE" --version
check 0 "(libasyncrt " "$BENCH" --version
# ---- no driver: the same exit code (4) and the library's own words in every tool
check 4 "asyncrt-run: error: no CUDA driver: cannot open /nonexistent/libcuda.so.1" env ASYNCRT_LIBCUDA=/nonexistent/libcuda.so.1 "$RUN" "$SAXPY"
check 4 "--compile-only --arch sm_XY" env ASYNCRT_LIBCUDA=/nonexistent/libcuda.so.1 "$RUN" "$SAXPY"
check 4 "asyncrt-probe: no CUDA driver: cannot open" env ASYNCRT_LIBCUDA=/nonexistent/libcuda.so.1 "$PROBE"
check 4 "\"exit_code\": 4" env ASYNCRT_LIBCUDA=/nonexistent/libcuda.so.1 "$PROBE" --json
check 4 "asyncrt-bench: error: no CUDA driver: cannot open" env ASYNCRT_LIBCUDA=/nonexistent/libcuda.so.1 "$BENCH"
# ---- asyncrt-probe -----------------------------------------------------------
check 2 "unknown option '--bogus'" "$PROBE" --bogus
check 2 "unknown option 'extra'" "$PROBE" extra
check 2 "--device needs a device ordinal" "$PROBE" --device
check 2 "--device needs a device ordinal" "$PROBE" --device -1
check 2 "--device needs a device ordinal" "$PROBE" --device abc
check 2 "--device needs a device ordinal" "$PROBE" --device 99999999999999
# ---- asyncrt-bench -----------------------------------------------------------
check 2 "bad option '--bogus'" "$BENCH" --bogus
check 2 "bad option 'extra'" "$BENCH" extra
check 2 "bad option '--sizes' (or its value is missing)" "$BENCH" --sizes
check 2 "bad --sizes '-4'" "$BENCH" --sizes -4
check 2 "bad --sizes '0'" "$BENCH" --sizes 0
check 2 "bad --sizes '99999999999'" "$BENCH" --sizes 99999999999
check 2 "bad --sizes 'abc'" "$BENCH" --sizes abc
check 2 "unknown path 'warp'" "$BENCH" --paths warp
check 2 "--repeats '0' is not a whole number from 1 to 100000" "$BENCH" --repeats 0
check 2 "--repeats '-5' is not a whole number from 1 to 100000" "$BENCH" --repeats -5
check 2 "--warmup '-1' is not a whole number from 0 to 100000" "$BENCH" --warmup -1
check 2 "--device 'x' is not a whole number from 0 to 1024" "$BENCH" --device x
check 2 "bad option '--repeats' (or its value is missing)" "$BENCH" --repeats
check 4 "\"exit_code\": 4" env ASYNCRT_LIBCUDA=/nonexistent/libcuda.so.1 "$BENCH" --json
# ---- asyncrt-cache -----------------------------------------------------------
mkdir -m 700 "$T/empty-cache" "$T/damaged"
check 0 "(libasyncrt " "$CACHE" --version
check 0 "0 files verified: 0 bad" "$CACHE" --dir "$T/empty-cache" verify
check 2 "unknown option '--bogus'" "$CACHE" --bogus
check 2 "no command given" "$CACHE"
check 2 "unknown command 'frob'" "$CACHE" frob
check 2 "--dir needs a value" "$CACHE" --dir
check 2 "--max-bytes N is required" "$CACHE" --dir "$T/empty-cache" prune
check 2 "\"exit_code\": 2" "$CACHE" --dir "$T/empty-cache" --json list extra
check 3 "identifier \"undefined_thing\" is undefined" "$CACHE" --dir "$T/empty-cache" warm --arch sm_90 "$T/error.cu"
check 2 "'banana' is malformed" "$CACHE" --dir "$T/empty-cache" warm --arch banana "$SAXPY"
check 4 "no CUDA driver" env ASYNCRT_LIBCUDA=/nonexistent/libcuda.so.1 "$CACHE" --dir "$T/empty-cache" warm "$SAXPY"
check 7 "no cache directory at /nonexistent/asyncrt-cache" "$CACHE" --dir /nonexistent/asyncrt-cache stats
check 7 "\"exit_code\": 7" "$CACHE" --json --dir /nonexistent/asyncrt-cache list
check 7 "import: cannot read /nonexistent-dir (No such file or directory)" "$CACHE" --dir "$T/empty-cache" import /nonexistent-dir
check 7 "warm: cannot read $T/nosuch.cu (No such file or directory)" "$CACHE" --dir "$T/empty-cache" warm --arch sm_90 "$T/nosuch.cu"
check 7 "would not use this directory: " "$CACHE" --dir "$T/file" verify
# a damaged entry: verify names it (6); export skips it (6)
check 0 "1 program (1 compiled" "$CACHE" --dir "$T/damaged" warm --arch compute_80 "$SAXPY"
entry=$(ls "$T"/damaged/*.bin)
printf 'X' | dd of="$entry" bs=1 seek=200 conv=notrunc status=none
check 6 "checksum mismatch (damaged)" "$CACHE" --dir "$T/damaged" verify
check 6 "skipping $(basename "$entry"): cache entry: checksum mismatch" "$CACHE" --dir "$T/damaged" export "$T/exported"
# ---- a driver that works but fails a call, or runs nothing (FAKE_DEVICE) -------
if [ -n "$FAKE_DEVICE" ]; then
  fake=(env ASYNCRT_LIBCUDA="$FAKE_DEVICE")
  check 5 "cuDeviceGetName failed" "${fake[@]}" FAKE_FAIL=cuDeviceGetName "$PROBE"
  check 5 "cuDeviceGetName failed" "${fake[@]}" FAKE_FAIL=cuDeviceGetName "$BENCH"
  check 5 "cuDeviceGetName failed" "${fake[@]}" FAKE_FAIL=cuDeviceGetName "$CACHE" --dir "$T/empty-cache" warm "$SAXPY"
  check 5 "cuMemAlloc failed" "${fake[@]}" "$RUN" "$SAXPY" --buf x=f32:4 --buf y=f32:4 --arg f32:1 --arg buf:x --arg buf:y --arg i32:4
  check 6 "FAILED: " "${fake[@]}" "$PROBE" --check
fi

# Every tool, every exit code it can produce here. Not here: 1 (out of
# memory) for probe, bench and cache, and run's 6 (--expect against a real
# result: test_run_gpu); bench's 0 is a real run only (its --version stands
# in); 5 and probe's 6 need FAKE_DEVICE.
declare -A want=([asyncrt-run]="0 1 2 3 4 5 7" [asyncrt-probe]="0 2 4 5 6" [asyncrt-bench]="0 2 4 5"
                 [asyncrt-cache]="0 2 3 4 5 6 7")
for tool in asyncrt-run asyncrt-probe asyncrt-bench asyncrt-cache; do
  missing=""
  for code in ${want[$tool]}; do
    [ -z "$FAKE_DEVICE" ] && { [ "$code" = 5 ] || { [ "$tool" = asyncrt-probe ] && [ "$code" = 6 ]; }; } && continue
    [[ " ${seen[$tool]:-} " == *" $code "* ]] || missing+=" $code"
  done
  if [ -n "$missing" ]; then
    failed=$((failed + 1))
    rows+=("$(printf '%-4s %-3s %-5s %s' "-" "-" "FAIL" "$tool never ended with exit code(s)$missing")")
  fi
done

printf '%-4s %-3s %-5s %-80s %s\n' "#" "rc" "" "invocation" "problem"
printf '%s\n' "${rows[@]}"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -ge 40 ]
