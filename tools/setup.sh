#!/usr/bin/env bash
# Installs what the build needs (Debian packages, only when missing) and
# NVIDIA's NVRTC wheel of the pinned version into the checkout's .pip/
# (tools/setup-nvrtc.sh) with nvPTXCompiler of its version built beside it
# (tools/setup-ptxcompiler.sh), then configures and builds asyncrt into build/.
# Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
[ -f /usr/include/cmocka.h ] || missing+=(libcmocka-dev)
command -v cmake >/dev/null || missing+=(cmake)
command -v ninja >/dev/null || missing+=(ninja-build)
command -v cc >/dev/null || missing+=(gcc)
command -v pkg-config >/dev/null || missing+=(pkg-config) # the install test builds a pkg-config consumer
command -v help2man >/dev/null || missing+=(help2man)     # the tools' man pages, from their --help
# The remote cache (issue 26): hiredis's headers to build its client (it is
# opened at run time), a redis-server for its tests to start on their own.
[ -f /usr/include/hiredis/hiredis.h ] || missing+=(libhiredis-dev)
command -v redis-server >/dev/null || [ -x /usr/bin/redis-server ] || missing+=(redis-server)
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo -H"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if [ ! -d "${CUDA_PATH:-/usr/local/cuda}/include" ]; then
  echo "setup: no CUDA toolkit at ${CUDA_PATH:-/usr/local/cuda} (its headers are needed to build, NVRTC to compile kernels)" >&2
  exit 1
fi
# NVIDIA's NVRTC and nvJitLink wheels into .pip/ (one line says what it found).
bash tools/setup-nvrtc.sh
# nvPTXCompiler of that NVRTC's version, built here from the user's own
# nvidia-nvptxcompiler wheel (compact images, issue 37; never redistributed).
# Automatic like the NVRTC wheel, under the same licence terms and in the same
# folder; ASYNCRT_SETUP_PTXCOMPILER=0 skips it. One line says what it did.
[ "${ASYNCRT_SETUP_PTXCOMPILER:-1}" = 0 ] || bash tools/setup-ptxcompiler.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build build
