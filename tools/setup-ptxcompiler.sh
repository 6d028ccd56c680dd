#!/usr/bin/env bash
# nvPTXCompiler for compact images (issue 37), built on this machine from the
# user's own download: NVIDIA's nvidia-nvptxcompiler wheel ships only
# libnvptxcompiler_static.a, which the CUDA EULA does not list among the files
# an application may redistribute, so asyncrt never ships it (nor anything
# built from it). This script downloads the wheel of exactly NVRTC's version
# (another release assembles other code) and links its archive into a small
# shared "loader library", libasyncrt_ptxcompiler.so, that libasyncrt opens at
# run time like NVRTC (runtime/compile/ptx_assemble.h). It exports
# nvPTXCompiler's C API and asyncrt_ptxcompiler_version(), the wheel's version.
#
#   tools/setup-ptxcompiler.sh                  beside the set-up's NVRTC (.pip/, tools/setup-nvrtc.sh)
#   tools/setup-ptxcompiler.sh --version V --out FILE   for another NVRTC (e.g. the toolkit's 13.0.88;
#                                               then ASYNCRT_PTXCOMPILER=FILE)
#
# Called by tools/setup.sh (ASYNCRT_SETUP_PTXCOMPILER=0 skips it). Safe to run
# again: nothing is done when the library of that version is there. Offline
# from .whl/ (nvidia_nvptxcompiler-V-*.whl) like setup-nvrtc.sh. The wheel and
# its 130 MB archive are deleted after the link; the wheel's licence is kept
# beside the library. Without pip, PyPI or a C compiler it says so in one line
# and exits 0: compact images stay off, nothing else changes.
set -uo pipefail
cd "$(dirname "$0")/.."
say() { echo "setup: $*"; }
version="" out=""
while [ $# -gt 0 ]; do
  case $1 in
  --version) version=${2:-}; shift 2 ;;
  --out) out=${2:-}; shift 2 ;;
  *) echo "usage: tools/setup-ptxcompiler.sh [--version MAJOR.MINOR.PATCH --out FILE]" >&2; exit 2 ;;
  esac
done
if [ -z "$version" ]; then # the set-up's NVRTC, from its wheel's dist-info
  info=$(ls -d .pip/nvidia_cuda_nvrtc-*.dist-info 2>/dev/null | head -1)
  if [ -z "$info" ]; then
    say "compact images off: no NVRTC wheel in .pip/ (tools/setup-nvrtc.sh installs one) to match nvPTXCompiler to"
    exit 0
  fi
  version=${info#.pip/nvidia_cuda_nvrtc-}; version=${version%.dist-info}
  out=$(ls -d .pip/nvidia/cu*/lib 2>/dev/null | head -1)/libasyncrt_ptxcompiler.so
elif [ -z "$out" ]; then
  echo "tools/setup-ptxcompiler.sh: --version needs --out FILE (where ASYNCRT_PTXCOMPILER will name it)" >&2
  exit 2
fi
if ! [[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  echo "tools/setup-ptxcompiler.sh: version '$version' is not MAJOR.MINOR.PATCH" >&2
  exit 2
fi
stamp="$out.version"
if [ -f "$out" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$version" ]; then
  say "nvPTXCompiler $version (built from your nvidia-nvptxcompiler wheel) in $out: compact images can be on"
  exit 0
fi
cc=${CC:-cc}
if ! command -v "$cc" >/dev/null; then
  say "compact images off: no C compiler ($cc) to build the nvPTXCompiler loader"
  exit 0
fi
if ! command -v python3 >/dev/null || ! python3 -m pip --version >/dev/null 2>&1; then
  say "compact images off: no pip for python3 to download nvidia-nvptxcompiler==$version"
  exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/asyncrt-ptxcompiler.XXXXXX") || exit 0
trap 'rm -rf "$tmp"' EXIT
from=()
ls .whl/nvidia_nvptxcompiler-"$version"-*.whl >/dev/null 2>&1 && from=(--no-index --find-links .whl)
if ! python3 -m pip download --quiet --disable-pip-version-check --no-deps --timeout 20 --retries 1 -d "$tmp/wheel" \
     "${from[@]}" "nvidia-nvptxcompiler==$version" >"$tmp/pip.log" 2>&1; then
  say "compact images off: pip could not download nvidia-nvptxcompiler==$version ($(grep -E 'ERROR|error' "$tmp/pip.log" | tail -1))"
  exit 0
fi
# The wheel is a zip: Python's zipfile, as unzip may be missing.
if ! python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' \
     "$(ls "$tmp"/wheel/*.whl | head -1)" "$tmp/tree"; then
  say "compact images off: the nvidia-nvptxcompiler wheel could not be unpacked"
  exit 0
fi
archive=$(ls "$tmp"/tree/nvidia/cu*/lib/libnvptxcompiler_static.a 2>/dev/null | head -1)
if [ -z "$archive" ]; then
  say "compact images off: the nvidia-nvptxcompiler==$version wheel has no libnvptxcompiler_static.a"
  exit 0
fi
# The version call, and only nvPTXCompiler's API exported (the archive's
# internals stay local: no clash with anything else in the process).
printf 'const char *asyncrt_ptxcompiler_version(void) { return "%s"; }\n' "$version" >"$tmp/version.c"
printf '{ global: nvPTXCompiler*; asyncrt_ptxcompiler_version; local: *; };\n' >"$tmp/exports.map"
uses=()
for f in Create Destroy Compile GetCompiledProgramSize GetCompiledProgram GetErrorLogSize GetErrorLog \
         GetInfoLogSize GetInfoLog GetVersion; do
  uses+=("-Wl,-u,nvPTXCompiler$f")
done
mkdir -p "$(dirname "$out")"
if ! "$cc" -shared -fPIC -O2 -s -o "$out.tmp" "$tmp/version.c" "${uses[@]}" "$archive" -Wl,--gc-sections \
     -Wl,--version-script="$tmp/exports.map" -Wl,-z,defs -lpthread -lm -ldl -lrt >"$tmp/link.log" 2>&1; then
  say "compact images off: linking the nvPTXCompiler loader failed: $(tail -1 "$tmp/link.log")"
  rm -f "$out.tmp"
  exit 0
fi
license=$(ls "$tmp"/tree/nvidia_nvptxcompiler-*.dist-info/licenses/License.txt 2>/dev/null | head -1)
[ -n "$license" ] && cp "$license" "$out.LICENSE.txt"
mv "$out.tmp" "$out" && echo "$version" >"$stamp"
say "nvPTXCompiler $version built from your nvidia-nvptxcompiler wheel into $out (NVIDIA's licence: $out.LICENSE.txt; never redistributed)"
exit 0
