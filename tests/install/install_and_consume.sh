#!/usr/bin/env bash
# An installed asyncrt works as docs/deployment.md says, from nothing but the prefix,
# wherever that prefix is moved:
#   install_and_consume.sh BUILD_DIR WORK_DIR            install BUILD_DIR, then check
#   install_and_consume.sh --prefix PREFIX WORK_DIR      check an installed tree (the .deb)
# The prefix is moved (and given back at the end) before anything runs.
# Checks: no libcuda / libnvrtc in any DT_NEEDED; nothing of nvPTXCompiler
# (a file of its name, a file defining its API); the installed tools start;
# the installed compile worker starts, and a batch runs it: found beside
# libasyncrt.so, beside the installed tools (asyncrt-cache warm), or named
# by ASYNCRT_COMPILE_WORKER for a program that links libasyncrt.a; each tool
# has its completion and man page; examples/ builds with find_package (every
# example) and with pkg-config (the lines of docs/deployment.md) and runs.
# Everything runs through the dynamic loader with its cache off
# (ld.so --inhibit-cache), no LD_LIBRARY_PATH and no CUDA_PATH/CUDA_HOME, so
# libasyncrt must come from the runpath and NVRTC from asyncrt's own search.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$here/../.." && pwd)
if [ "$1" = --prefix ]; then
  installed=$(cd "$2" && pwd -P) work=$3
  rm -rf "$work" && mkdir -p "$work" && work=$(cd "$work" && pwd -P)
else
  build=$1 work=$2
  rm -rf "$work" && mkdir -p "$work" && work=$(cd "$work" && pwd -P)
  installed=$work/installed
  cmake --install "$build" --prefix "$installed" >/dev/null
fi
PREFIX=$work/moved-prefix
mv "$installed" "$PREFIX"
trap 'mv "$PREFIX" "$installed"' EXIT
fail() { echo "install test: $*" >&2; exit 1; }

libdir=$(dirname "$(find "$PREFIX" -name 'libasyncrt.*' -print -quit)")
[ -f "$libdir/pkgconfig/asyncrt.pc" ] || fail "no asyncrt.pc in $libdir/pkgconfig"
pc_libdir=$(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --variable=libdir asyncrt)
[[ $pc_libdir != *//* ]] && [ "$(cd "$pc_libdir" && pwd -P)" = "$(cd "$libdir" && pwd -P)" ] ||
  fail "pkg-config's libdir is $pc_libdir, not $libdir"
# The licence goes with every install: Debian's place and its own name, and
# the package metadata names it.
for f in copyright LICENSE; do
  cmp -s "$PREFIX/share/doc/asyncrt/$f" "$source_dir/LICENSE" || fail "no share/doc/asyncrt/$f (the licence)"
done
grep -qx 'License: Apache-2.0' "$libdir/pkgconfig/asyncrt.pc" || fail "asyncrt.pc names no licence"
grep -q 'asyncrt_LICENSE "Apache-2.0"' "$libdir/cmake/asyncrt/asyncrt-config.cmake" ||
  fail "asyncrt-config.cmake names no licence"
for f in "$libdir"/libasyncrt.so* "$PREFIX"/bin/asyncrt-*; do
  [ -f "$f" ] && [ ! -L "$f" ] || continue
  if readelf -d "$f" | grep -E "NEEDED.*(libcuda|libnvrtc)"; then fail "$f links the driver or NVRTC"; fi
done

# NVIDIA's nvPTXCompiler (compact images, issue 37) is the user's own: its
# libnvptxcompiler_static.a is not redistributable, so no file of it, and no
# code linked from it (a file that defines its API), is ever installed or
# packaged; tools/setup-ptxcompiler.sh builds the loader on the user's machine.
while IFS= read -r -d '' f; do
  case ${f##*/} in
  *nvptxcompiler* | *ptxcompiler*) fail "$f: nvPTXCompiler is never installed (the set-up builds it from the user's wheel)" ;;
  esac
  [ "$(head -c4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] || [[ $f == *.a ]] || continue
  defined=$({ nm --defined-only "$f"; nm -D --defined-only "$f"; } 2>/dev/null || true) # grep -q would cut a pipe
  if grep -qE ' [A-Za-z] (nvPTXCompiler[A-Za-z]+|asyncrt_ptxcompiler_version)$' <<<"$defined"; then
    fail "$f defines nvPTXCompiler's API: NVIDIA's object code must not be installed"
  fi
done < <(find "$PREFIX" -type f -print0)

# The loader with its cache off and nothing in the environment pointing at
# CUDA or at a compile worker: run_clean [NAME=VALUE...] PROGRAM ARGS...
run_clean() {
  local vars=() ldso
  while [[ $1 == *=* ]]; do vars+=("$1"); shift; done
  ldso=$(readelf -l "$1" | sed -n 's/.*Requesting program interpreter: \(.*\)\]/\1/p')
  env -u LD_LIBRARY_PATH -u CUDA_PATH -u CUDA_HOME -u ASYNCRT_COMPILE_WORKER ASYNCRT_CACHE_DIR="$work/cache" \
    "${vars[@]}" "$ldso" --inhibit-cache "$@"
}

# The installed tools start (no driver needed for these).
if [ -x "$PREFIX/bin/asyncrt-run" ]; then
  run_clean "$PREFIX/bin/asyncrt-run" --help >/dev/null || fail "installed asyncrt-run does not start"
  run_clean "$PREFIX/bin/asyncrt-run" "$source_dir/examples/stage_scale.cu" --compile-only --arch sm_90 \
    >"$work/run.out" 2>&1 || { cat "$work/run.out"; fail "installed asyncrt-run cannot compile"; }
fi

# Each installed tool has its bash completion and, where help2man is (it
# made them at build time), its man page, which man finds in the prefix.
for tool in "$PREFIX"/bin/asyncrt-*; do
  [ -x "$tool" ] || continue
  t=$(basename "$tool")
  [ -s "$PREFIX/share/bash-completion/completions/$t" ] || fail "no bash completion for $t"
  if command -v help2man >/dev/null && command -v man >/dev/null; then
    MANPATH=$PREFIX/share/man man -w "$t" >/dev/null 2>&1 || fail "man $t: no page in $PREFIX/share/man"
    MANPATH=$PREFIX/share/man man "$t" 2>&1 | grep -q "^NAME" || fail "man $t does not show the page"
  fi
done

# The compile worker starts from the prefix alone (an empty request: exit 2).
worker=$(find "$PREFIX" -path '*/asyncrt/asyncrt-compile-worker' -type f -print -quit)
[ -n "$worker" ] || fail "no asyncrt-compile-worker under $PREFIX"
rc=0
run_clean "$worker" </dev/null || rc=$?
[ "$rc" = 2 ] || fail "the installed worker $worker does not start (exit $rc)"
expect_worker() { # a batch's ASYNCRT_LOG=2 output: the installed worker compiled its misses
  grep -qF "go to worker processes ($worker)" "$1" || { cat "$1"; fail "$2 did not run $worker"; }
  if grep -q "compile worker" "$1"; then cat "$1"; fail "$2: the worker failed"; fi
}
cd "$work"
mkdir src
for k in a b; do echo "extern \"C\" __global__ void $k(int *x) { x[0] = 1; }" >"src/$k.cu"; done
if [ -x "$PREFIX/bin/asyncrt-cache" ]; then # found beside the tool that links the library statically
  run_clean ASYNCRT_LOG=2 "$PREFIX/bin/asyncrt-cache" --dir "$work/warm-cache" warm --arch sm_90 src/a.cu src/b.cu \
    >warm.out 2>&1 || { cat warm.out; fail "installed asyncrt-cache warm failed"; }
  expect_worker warm.out "asyncrt-cache warm"
fi
export PKG_CONFIG_PATH=$libdir/pkgconfig
cc -std=c11 -o batch_consumer "$here/batch_consumer.c" $(pkg-config --cflags --libs asyncrt) \
  -Wl,-rpath,$(pkg-config --variable=libdir asyncrt)
if [ -e "$libdir/libasyncrt.so" ]; then # found beside libasyncrt.so
  run_clean ASYNCRT_LOG=2 ./batch_consumer 1 >batch.out 2>&1 || { cat batch.out; fail "batch consumer failed"; }
  expect_worker batch.out "a program using libasyncrt.so"
else # linked statically, outside the prefix: none beside it, so it is named
  run_clean ASYNCRT_LOG=2 ./batch_consumer 1 >batch.out 2>&1 || { cat batch.out; fail "batch consumer failed"; }
  grep -q "no worker installed at" batch.out || { cat batch.out; fail "a static consumer found a worker"; }
  run_clean ASYNCRT_LOG=2 ASYNCRT_COMPILE_WORKER="$worker" ./batch_consumer 2 >batch.out 2>&1 ||
    { cat batch.out; fail "batch consumer failed"; }
  expect_worker batch.out "a program using libasyncrt.a"
fi

expect_ok() { # the example's output: checked on a GPU, compiled without one
  grep -qE "match the CPU reference|running it needs a GPU" "$1" || { cat "$1"; fail "$2 said the above"; }
}

# The consumer lines of docs/deployment.md, with /opt/asyncrt replaced by the
# prefix: every example builds; each runs as far as this machine allows
# (compiles without a GPU), the bundle one with a bundle the installed tool
# made and no toolkit at all.
cmake -S "$source_dir/examples" -B app-build -DCMAKE_PREFIX_PATH="$PREFIX" >/dev/null
cmake --build app-build >/dev/null
run_clean app-build/scale_host >cmake.out 2>&1 || { cat cmake.out; fail "find_package consumer failed"; }
expect_ok cmake.out "find_package consumer"
for example in batch_compile link_two remote_fleet; do
  run_clean app-build/$example >$example.out 2>&1 || { cat $example.out; fail "example $example failed"; }
done
if [ -x "$PREFIX/bin/asyncrt-bundle" ]; then
  run_clean "$PREFIX/bin/asyncrt-bundle" "$source_dir/examples/reverse_tiles.cu" --arch sm_90 -o reverse_tiles.bundle \
    >bundle.out 2>&1 || { cat bundle.out; fail "installed asyncrt-bundle failed"; }
  run_clean ASYNCRT_TOOLKIT=none app-build/bundle_deploy reverse_tiles.bundle "$source_dir/examples/reverse_tiles.cu" sm_90 \
    >bundle.out 2>&1 && grep -q "with the bundle's headers" bundle.out || { cat bundle.out; fail "example bundle_deploy failed"; }
fi

cc -std=c11 -o scale_host "$source_dir/examples/scale_host.c" $(pkg-config --cflags --libs asyncrt) \
  -lm -Wl,-rpath,$(pkg-config --variable=libdir asyncrt)
run_clean ./scale_host >pc.out 2>&1 || { cat pc.out; fail "pkg-config consumer failed"; }
expect_ok pc.out "pkg-config consumer"
echo "install test: $installed, moved to $PREFIX: tools and the compile worker start, find_package and pkg-config consumers run without LD_LIBRARY_PATH or the loader cache"
cat pc.out
