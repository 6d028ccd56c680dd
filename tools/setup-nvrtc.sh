#!/usr/bin/env bash
# NVIDIA's NVRTC and nvJitLink wheels (issue 32), of the version
# cmake/nvrtc-wheel-version.txt names, into the checkout's .pip/ folder, where
# libasyncrt looks with no variable set (runtime/base/lib_search.h) and which
# it prefers to the toolkit's NVRTC. Called by tools/setup.sh (and so by the
# README's two commands and CI) and tools/gpu-check.sh. Safe to run again:
# nothing is done when .pip/ holds that version already.
#
# It changes nothing outside the checkout: `pip install --target` needs no
# virtual environment and no root, and is allowed where the system's Python is
# externally managed (PEP 668 refuses only installs into the environment
# itself). Wheels found in .whl/ are used offline (a machine without PyPI;
# the NVRTC wheel alone will do there, nvJitLink is then the toolkit's).
# Without python3, pip, or PyPI, it says so and compiles go on with the
# toolkit's NVRTC. Prints one line.
set -uo pipefail
cd "$(dirname "$0")/.."
cuda=${CUDA_PATH:-/usr/local/cuda}
dir=.pip
pin=$(grep -E '^[0-9]+\.[0-9]+\.[0-9]+$' cmake/nvrtc-wheel-version.txt | head -1)
major=${pin%%.*}
toolkit=$(sed -n 's/^#define CUDA_VERSION \([0-9][0-9]*\).*/\1/p' "$cuda/include/cuda.h" 2>/dev/null | head -1)
toolkit_nvrtc="the toolkit's NVRTC ${toolkit:+$((toolkit / 1000)).$((toolkit % 1000 / 10))}"
[ -n "$toolkit" ] || toolkit_nvrtc="the toolkit's NVRTC"
say() { echo "setup: $*"; }

if [ -n "$toolkit" ] && [ "$((toolkit / 1000))" != "$major" ]; then
  say "NVRTC: $toolkit_nvrtc (the pinned wheels, $pin, are of another major version than the toolkit)"
  exit 0
fi
have() { [ -d "$dir/$1-$pin.dist-info" ]; }
wheel() { ls .whl/"$1-$pin"-*.whl >/dev/null 2>&1; }
# What is there, in one line.
found() {
  local jit="nvJitLink $pin"
  have nvidia_nvjitlink || jit="the toolkit's nvJitLink (no nvidia-nvjitlink wheel: LTO links need one of NVRTC's version)"
  say "NVRTC $pin (NVIDIA's wheel) in $dir/, used before $toolkit_nvrtc; $jit"
}
# Offline from .whl/ (a machine without PyPI) with the wheels found there: NVRTC's alone will do.
packages=(nvidia-cuda-nvrtc nvidia-nvjitlink)
from=()
if wheel nvidia_cuda_nvrtc; then
  from=(--no-index --find-links .whl)
  wheel nvidia_nvjitlink || packages=(nvidia-cuda-nvrtc)
fi
if have nvidia_cuda_nvrtc && { have nvidia_nvjitlink || [ ${#packages[@]} = 1 ]; } &&
   [ -f "$dir/nvidia/cu$major/lib/libnvrtc.so.$major" ]; then
  found
  exit 0
fi
if ! command -v python3 >/dev/null || ! python3 -m pip --version >/dev/null 2>&1; then
  say "NVRTC: $toolkit_nvrtc: no pip for python3 to install NVRTC $pin (Debian: apt-get install python3-pip; then run tools/setup.sh again)"
  exit 0
fi
tmp=.pip.tmp.$$
rm -rf "$tmp"
if python3 -m pip install --quiet --disable-pip-version-check --no-deps --timeout 20 --retries 1 --target "$tmp" \
     "${from[@]}" "${packages[@]/%/==$pin}" >"$tmp.log" 2>&1 &&
   [ -f "$tmp/nvidia/cu$major/lib/libnvrtc.so.$major" ]; then
  rm -rf "$dir" && mv "$tmp" "$dir" && rm -f "$tmp.log"
  found
else
  why=$(grep -E 'ERROR|error' "$tmp.log" | tail -1)
  rm -rf "$tmp" "$tmp.log"
  say "NVRTC: $toolkit_nvrtc: pip could not install ${packages[*]/%/==$pin} (${why:-no reason given})"
fi
exit 0
