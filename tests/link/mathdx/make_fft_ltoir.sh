#!/usr/bin/env bash
# Makes tests/link/mathdx/fft64_c2c_f32_sm90.ltoir, the device library the
# MathDx link tests use, on a machine with PyPI access (no GPU needed):
# fetches NVIDIA's libmathdx (pip nvidia-libmathdx-cu13, pinned) into a
# temporary folder, builds gen_fft_ltoir.c against it and runs it (libmathdx
# runs the toolkit's NVRTC: CUDA_PATH or /usr/local/cuda). The LTO-IR is
# cuFFTDx code under NVIDIA's licence, so it is made here, not checked in
# (.gitignore); the GPU machine has no network: carry the file there (the lead's
# run tool: carry tests/link/mathdx/fft64_c2c_f32_sm90.ltoir).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cuda=${CUDA_PATH:-/usr/local/cuda}
version=${LIBMATHDX_VERSION:-0.4.1.15}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m pip download --quiet --no-deps -d "$work" "nvidia-libmathdx-cu13==$version"
(cd "$work" && python3 -m zipfile -e nvidia_libmathdx_cu13-*.whl x)
root=$work/x/nvidia/cu13
cc -std=c11 -O1 -o "$work/gen" "$here/gen_fft_ltoir.c" -I"$root/include" "$root/lib/libmathdx.so.0" \
   -Wl,-rpath,"$root/lib"
LD_LIBRARY_PATH=$cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$work/gen" "$here/fft64_c2c_f32_sm90.ltoir"
echo "wrote $here/fft64_c2c_f32_sm90.ltoir (libmathdx $version)"
