#!/usr/bin/env bash
# The main job on a built-in default: set up and build, show what the GPU can
# do, then run examples/stage_scale.cu (y = 2x + 1 over 16 Mi floats, staged
# through shared memory by the device's copy hardware) with asyncrt-run
# --arch auto, checked against a CPU reference and timed. Without a GPU it
# compiles the kernel for sm_90, shows the TMA instructions, and says why it
# stops there.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh

run=build/tools/run/asyncrt-run
probe=build/tools/probe/asyncrt-probe
kernel=examples/stage_scale.cu
work=build/demo
mkdir -p "$work"

echo "== asyncrt-probe"
set +e
"$probe" 2>"$work/probe.err"
probe_rc=$?
set -e
if [ $probe_rc = 3 ] || [ $probe_rc = 4 ]; then
  echo "no GPU to run on: $(cat "$work/probe.err")"
  echo "== asyncrt-run $kernel --compile-only --arch sm_90 (what can be done without a GPU)"
  "$run" "$kernel" --compile-only --arch sm_90 --emit-ptx "$work/stage_scale.ptx" -v
  echo "the sm_90 PTX stages through the TMA engine with:"
  grep -oE "(cp\.async\.bulk|mbarrier)\.[.a-z:_0-9]+" "$work/stage_scale.ptx" | sort -u | sed 's/^/  /'
  echo "stopping here: running the kernel needs an NVIDIA driver and GPU (asyncrt-probe said why above)."
  exit 0
fi
[ $probe_rc = 0 ] || { cat "$work/probe.err" >&2; exit $probe_rc; }

# The CPU reference: x = 0.25 i, so y = 2x + 1 = 1 + 0.5 i, exact in float32.
n=16777216
python3 - "$work/want.npy" $n <<'PY'
import array, sys
path, n = sys.argv[1], int(sys.argv[2])
header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % n
header += " " * (63 - (10 + len(header)) % 64) + "\n"
with open(path, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode())
    array.array("f", (1 + 0.5 * i for i in range(n))).tofile(f)
PY
echo "== asyncrt-run $kernel --arch auto"
"$run" "$kernel" --arch auto -v --grid $((n / 2048)) --block 256 \
  --buf x=f32:$n:iota=0,0.25 --buf y=f32:$n:poison \
  --arg buf:x --arg buf:y --arg f32:2 --arg f32:1 --arg i32:$n \
  --expect y="$work/want.npy" --repeat 50
