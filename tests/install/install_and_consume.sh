#!/usr/bin/env bash
# An installed asyncrt works as the README says, from nothing but the prefix:
#   install_and_consume.sh BUILD_DIR WORK_DIR            install BUILD_DIR, then check
#   install_and_consume.sh --prefix PREFIX WORK_DIR      check an installed tree (the .deb)
# Checks: no libcuda / libnvrtc in any DT_NEEDED; the installed tools start;
# examples/ builds with find_package and with pkg-config (the README's lines)
# and runs. Everything runs through the dynamic loader with its cache off
# (ld.so --inhibit-cache), no LD_LIBRARY_PATH and no CUDA_PATH/CUDA_HOME, so
# libasyncrt must come from the runpath and NVRTC from asyncrt's own search.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$here/../.." && pwd)
if [ "$1" = --prefix ]; then
  PREFIX=$(cd "$2" && pwd) work=$3
  rm -rf "$work" && mkdir -p "$work" && work=$(cd "$work" && pwd)
else
  build=$1 work=$2
  rm -rf "$work" && mkdir -p "$work" && work=$(cd "$work" && pwd)
  PREFIX=$work/prefix
  cmake --install "$build" --prefix "$PREFIX" >/dev/null
fi
fail() { echo "install test: $*" >&2; exit 1; }

libdir=$(dirname "$(find "$PREFIX" -name 'libasyncrt.*' -print -quit)")
[ -f "$libdir/pkgconfig/asyncrt.pc" ] || fail "no asyncrt.pc in $libdir/pkgconfig"
pc_libdir=$(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --variable=libdir asyncrt)
[[ $pc_libdir != *//* ]] && [ "$(cd "$pc_libdir" && pwd -P)" = "$(cd "$libdir" && pwd -P)" ] ||
  fail "pkg-config's libdir is $pc_libdir, not $libdir"
for f in "$libdir"/libasyncrt.so* "$PREFIX"/bin/asyncrt-*; do
  [ -f "$f" ] && [ ! -L "$f" ] || continue
  if readelf -d "$f" | grep -E "NEEDED.*(libcuda|libnvrtc)"; then fail "$f links the driver or NVRTC"; fi
done

# The loader with its cache off and nothing in the environment pointing at CUDA.
run_clean() {
  local ldso
  ldso=$(readelf -l "$1" | sed -n 's/.*Requesting program interpreter: \(.*\)\]/\1/p')
  env -u LD_LIBRARY_PATH -u CUDA_PATH -u CUDA_HOME ASYNCRT_CACHE_DIR="$work/cache" \
    "$ldso" --inhibit-cache "$@"
}

# The installed tools start (no driver needed for these).
if [ -x "$PREFIX/bin/asyncrt-run" ]; then
  run_clean "$PREFIX/bin/asyncrt-run" --help >/dev/null || fail "installed asyncrt-run does not start"
  run_clean "$PREFIX/bin/asyncrt-run" "$source_dir/examples/stage_scale.cu" --compile-only --arch sm_90 \
    >"$work/run.out" 2>&1 || { cat "$work/run.out"; fail "installed asyncrt-run cannot compile"; }
fi

expect_ok() { # the example's output: checked on a GPU, compiled without one
  grep -qE "match the CPU reference|running it needs a GPU" "$1" || { cat "$1"; fail "$2 said the above"; }
}

# The README's consumer lines, with /opt/asyncrt replaced by the prefix.
cd "$work"
cmake -S "$source_dir/examples" -B app-build -DCMAKE_PREFIX_PATH="$PREFIX" >/dev/null
cmake --build app-build >/dev/null
run_clean app-build/scale_host >cmake.out 2>&1 || { cat cmake.out; fail "find_package consumer failed"; }
expect_ok cmake.out "find_package consumer"

export PKG_CONFIG_PATH=$libdir/pkgconfig
cc -std=c11 -o scale_host "$source_dir/examples/scale_host.c" $(pkg-config --cflags --libs asyncrt) \
  -lm -Wl,-rpath,$(pkg-config --variable=libdir asyncrt)
run_clean ./scale_host >pc.out 2>&1 || { cat pc.out; fail "pkg-config consumer failed"; }
expect_ok pc.out "pkg-config consumer"
echo "install test: $PREFIX: tools start, find_package and pkg-config consumers run without LD_LIBRARY_PATH or the loader cache"
cat pc.out
