#!/usr/bin/env bash
# Builds asyncrt on a GPU machine and runs, in one go, what needs the GPU:
#   tools/gpu-check.sh [test] [sanitize] [bench] [sweep] [profile] [parity] [parity-sweep] [compact] [link]
#                      [graph] [nsys] [multi]
#   (default: test)
# Logs go under $OUT (or ./gpu-out): build.log, test.log, sanitize.log, bench.log, sweep.log, ncu.txt,
# parity.md, parity-sweep.md (and parity-sweep/parity.json, profile/), compact.md (and compact/,
# compact.log), graph.log (and graph-*.json), nsys/ (cold and warm .nsys-rep and .sqlite, timeline.png
# where matplotlib is), multi.log (and multi-probe.txt/.json, multi-run.json), summary.txt.
# CMocka may come as .deb files in .debs/ (the GPU machine has no apt access), NVIDIA's
# nvidia-cuda-nvrtc and nvidia-nvjitlink wheels of cmake/nvrtc-wheel-version.txt's version
# as .whl files in .whl/ (tools/setup-nvrtc.sh installs them into .pip/), or the installed .pip/
# folder itself packed as .pip.tar.xz (both wheels together are over what a call may carry; with
# xz's dictionary over both libraries, --lzma2=preset=9e,dict=256MiB, the folder with its
# nvPTXCompiler loader packs into 37 MB).
# ASYNCRT_GPU_CTEST: the test stage's ctest selection (default: the GPU tests, 4 at a time; the
# CPU tests run in CI).
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
stages=${*:-test}
summary="$OUT/summary.txt"
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }

prefix=()
if [ ! -f /usr/include/cmocka.h ] && ls .debs/*.deb >/dev/null 2>&1; then
  rm -rf /tmp/asyncrt-debs && mkdir -p /tmp/asyncrt-debs
  for f in .debs/*.deb; do dpkg -x "$f" /tmp/asyncrt-debs; done
  prefix=(-DCMAKE_PREFIX_PATH=/tmp/asyncrt-debs/usr)
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | sed 's/^/gpu: /' | tee -a "$summary"

# NVIDIA's NVRTC wheel of the pinned version into .pip/, offline from .whl/
# where the wheels were carried there (this machine has no PyPI).
[ -f .pip.tar.xz ] && [ ! -d .pip ] && tar -xJf .pip.tar.xz
bash tools/setup-nvrtc.sh | tee -a "$summary"

build=build-gpu
if ! { cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${prefix[@]}" &&
       cmake --build $build; } >"$OUT/build.log" 2>&1; then
  tail -40 "$OUT/build.log"; note "build: FAILED"; exit 1
fi
note "build: ok"
export ASYNCRT_TEST_SOURCE_DIR=$PWD ASYNCRT_CACHE_DIR=/tmp/asyncrt-gpu-cache
# The library runs only an installed worker by itself; the build tree's is named (as ctest does).
export ASYNCRT_COMPILE_WORKER=$PWD/$build/runtime/asyncrt-compile-worker

# Compact images are on by default: a loader carried in .ptxc/ (e.g. 13.0.88, built on a CPU machine
# for the toolkit's NVRTC 13.0 when no .pip/ came) is the one every stage uses; else the one beside
# the NVRTC in use, if any (the probe's line says which, or why none).
if [ -z "${ASYNCRT_PTXCOMPILER:-}" ] && [ -f .ptxc/libasyncrt_ptxcompiler.so.xz ] && [ ! -f .ptxc/libasyncrt_ptxcompiler.so ]; then
  xz -dk .ptxc/libasyncrt_ptxcompiler.so.xz
fi
if [ -z "${ASYNCRT_PTXCOMPILER:-}" ] && [ -f .ptxc/libasyncrt_ptxcompiler.so ]; then
  export ASYNCRT_PTXCOMPILER=$PWD/.ptxc/libasyncrt_ptxcompiler.so
fi
note "$($build/tools/probe/asyncrt-probe --arch-matrix 2>&1 | grep -m1 '^compact images')"

rc=0
for stage in $stages; do
  case $stage in
  test)
    # Twice: with the NVRTC the library chooses (the set-up's wheel, newer than a 13.0 driver,
    # whose PTX that driver refuses: the compute_80 cases are skipped, saying so), then with the
    # toolkit's (not newer than the driver), under which the sm_80 path runs through compute_80
    # PTX (docs/library.md, "Arch selection"). Cases skipped inside a test (CMocka's, which ctest counts
    # as passed) are listed with the reason they printed.
    toolkit_nvrtc=${CUDA_PATH:-/usr/local/cuda}/lib64/libnvrtc.so.13
    for run in default toolkit; do
      log=$OUT/test.log label="test" nvrtc_env=()
      if [ $run = toolkit ]; then
        log=$OUT/test-toolkit-nvrtc.log label="test (ASYNCRT_NVRTC=$toolkit_nvrtc)" nvrtc_env=(ASYNCRT_NVRTC="$toolkit_nvrtc")
        if [ ! -f "$toolkit_nvrtc" ]; then note "$label: not run: no such file"; rc=1; continue; fi
      fi
      # shellcheck disable=SC2086
      env ${nvrtc_env[@]+"${nvrtc_env[@]}"} ctest --test-dir $build --output-on-failure --timeout 300 \
        ${ASYNCRT_GPU_CTEST:--L gpu -j4} >"$log" 2>&1 || rc=1
      awk '/\[ RUN      \]/ {name = $NF} /^skipped: / {print "cmocka skipped " name ": " substr($0, 10, 240)}' \
        "$build/Testing/Temporary/LastTest.log" 2>/dev/null | sort -u >>"$log"
      note "$label: $(grep -E 'tests passed|tests failed' "$log" | tail -1)"
      grep -E '\*\*\*Failed|Not Run|Skipped|Timeout|^cmocka skipped' "$log" | sed 's/^/  /' | tee -a "$summary"
    done
    ;;
  sanitize)
    # Every GPU test under each tool, several at once (one GPU copes; the
    # tools are CPU-bound). The tests provoke failing API calls on purpose
    # (bad arches, missing kernels) and check our statuses for them; the
    # sanitizer is here for what the device does, so API errors are off.
    # Each test runs as ctest would: its exact argv, environment and folder
    # (ctest's JSON; a bash -c test keeps its quoting). ASYNCRT_SANITIZE_FILTER:
    # a regex of test names. A test that skips before any CUDA call (exit 77,
    # "skipped") is reported skipped, one that makes none (example_remote_fleet
    # on a warm cache compiles only) "no CUDA call", not as the tool's error.
    # ASYNCRT_SANITIZE_CHILDREN: tests whose device work is in the asyncrt-run
    # they start; the tool wraps each of those runs instead of the test (under
    # the tool, test_run_gpu's own process, which makes no CUDA call, aborts at
    # exit on a damaged heap: ASan and glibc's checks find nothing without it).
    rm -rf /tmp/asyncrt-sanitize && mkdir -p /tmp/asyncrt-sanitize
    export ASYNCRT_UNDER_SANITIZER=1 # tests skip the faults they cause on purpose
    python3 - "$build" "${ASYNCRT_SANITIZE_FILTER:-}" "${ASYNCRT_SANITIZE_CHILDREN:-^test_run_(multi_)?gpu\$}" "$PWD" \
      >/tmp/asyncrt-sanitize/jobs <<'PY'
import json, re, shlex, subprocess, sys
build, wanted, children, here = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
listing = subprocess.run(["ctest", "--test-dir", build, "--show-only=json-v1", "-L", "gpu"],
                         capture_output=True, text=True, check=True).stdout
for test in json.loads(listing)["tests"]:
    if wanted and not re.search(wanted, test["name"]):
        continue
    props = {p["name"]: p["value"] for p in test.get("properties", [])}
    env = " ".join(shlex.quote(e) for e in props.get("ENVIRONMENT", []))
    folder = shlex.quote(props.get("WORKING_DIRECTORY", "."))
    for tool in ("memcheck", "racecheck", "synccheck", "initcheck"):
        sanitizer = f"compute-sanitizer --tool {tool} --report-api-errors no --target-processes all --error-exitcode 99"
        if re.search(children, test["name"]):
            # The device work is in the asyncrt-run it starts: each run goes under the tool, keeping its
            # own exit code (tools/sanitize-run.sh), the test itself does not.
            wrap = (shlex.quote(f"ASYNCRT_TEST_TOOL_WRAPPER=bash {here}/tools/sanitize-run.sh {tool}") + " " +
                    shlex.quote(f"ASYNCRT_SANITIZE_RUNS=/tmp/asyncrt-sanitize/{test['name']}.{tool}.runs"))
            print(f"{tool}\t{test['name']}\tcd {folder} && env {env} {wrap} {shlex.join(test['command'])}")
        else:
            print(f"{tool}\t{test['name']}\tcd {folder} && env {env} {sanitizer} {shlex.join(test['command'])}")
PY
    tr '\n' '\0' </tmp/asyncrt-sanitize/jobs |
      ASYNCRT_SANITIZE_TIMEOUT=${ASYNCRT_SANITIZE_TIMEOUT:-300} xargs -0 -P "${ASYNCRT_SANITIZE_JOBS:-8}" -n 1 \
      bash -c 'IFS=$(printf "\t") read -r tool name cmd <<<"$0"; log=/tmp/asyncrt-sanitize/$name.$tool.log
               timeout "$ASYNCRT_SANITIZE_TIMEOUT" bash -c "$cmd" >"$log" 2>&1; code=$?
               wrapped=no; case $cmd in *ASYNCRT_TEST_TOOL_WRAPPER=*) wrapped=yes ;; esac
               if [ $code != 0 ] && [ $wrapped = no ] && grep -q "before first instrumented API call" "$log"; then
                 if grep -q "skipped" "$log"; then code=77; else code=78; fi; fi
               echo "$code $tool $name" >>/tmp/asyncrt-sanitize/results'
    sort -k3 /tmp/asyncrt-sanitize/results | while read -r code tool name; do
      runs=/tmp/asyncrt-sanitize/$name.$tool.runs checked=""
      [ -f "$runs" ] && checked=" ($(grep -c ' checked ' "$runs") asyncrt-run runs under the tool, $(grep -c ' no-cuda ' "$runs") stopped before CUDA)"
      if [ "$code" = 0 ]; then note "sanitize $tool $name: clean$checked"
      elif [ "$code" = 77 ]; then note "sanitize $tool $name: skipped"
      elif [ "$code" = 78 ]; then note "sanitize $tool $name: no CUDA call (nothing for the tool to check)"
      elif [ "$code" = 124 ]; then note "sanitize $tool $name: TIMEOUT (${ASYNCRT_SANITIZE_TIMEOUT:-300} s)"
      else note "sanitize $tool $name: ERRORS (exit $code)$checked"; fi
    done
    grep -qvE '^(0|77|78) ' /tmp/asyncrt-sanitize/results && rc=1
    for f in /tmp/asyncrt-sanitize/*.log; do echo "=== $f"; cat "$f"; done >"$OUT/sanitize.log"
    ;;
  bench)
    : >"$OUT/bench.log"
    for tool in $build/tools/*/asyncrt-bench $build/tools/*/asyncrt-probe; do
      [ -x "$tool" ] || continue
      case $tool in
      *bench) args=${ASYNCRT_BENCH_ARGS:-} ;;
      *probe) args="--check --bench" ;;
      esac
      # shellcheck disable=SC2086
      { echo "== $tool $args"; "$tool" $args; echo "exit $?"; } >>"$OUT/bench.log" 2>&1
    done
    # The JIT cold-start section (issue 15): batch vs sequential, fresh processes.
    for tool in $build/tools/bench/asyncrt-bench; do
      [ -x "$tool" ] && { echo "== $tool --jit --json"; "$tool" --jit --json; echo "exit $?"; } >>"$OUT/bench.log" 2>&1
    done
    tail -60 "$OUT/bench.log"
    ;;
  sweep)
    # The tile variants x paths x builds, the dispatcher's pick, the peers (issue 16).
    { "$build/tools/bench/asyncrt-bench" --tile-sweep; echo "exit $?"
      if python3 -c 'import torch' 2>/dev/null; then python3 tools/bench/peer_torch.py; echo "exit $?"
      else echo "peer_torch: no torch here"; fi
      # A calibration of this device, in a directory of its own (it would steer later stages' AUTO paths).
      ASYNCRT_CACHE_DIR="$OUT/calibration" "$build/tools/bench/asyncrt-bench" --calibrate; echo "exit $?"
    } >"$OUT/sweep.log" 2>&1
    grep -q '^exit [1-9]' "$OUT/sweep.log" && rc=1
    note "sweep: $(grep -c ' ok$' "$OUT/sweep.log") rows ok, $(grep -c 'WRONG\|failed' "$OUT/sweep.log") wrong or failed"
    cat "$OUT/sweep.log"
    ;;
  profile)
    # ncu on one instance each of the tile kernels issue 16 is about: small text in $OUT/ncu.txt.
    # Bank conflicts (shared ld/st), bytes used per 32-byte sector (global ld/st), achieved
    # occupancy and its limiters, L2 and DRAM traffic. If the metric list is refused, sections.
    ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
    metrics=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
    metrics=$metrics,smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct,smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct
    metrics=$metrics,sm__warps_active.avg.pct_of_peak_sustained_active,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem
    metrics=$metrics,launch__registers_per_thread,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum
    metrics=$metrics,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,gpu__time_duration.sum
    : >"$OUT/ncu.txt"
    for f in transpose/ldgsts/native/variant=blocks transpose/ldgsts/native/variant=staged \
             transpose/plain/native/variant=blocks transpose/ldgsts/sm80-ptx/variant=staged \
             transpose/tma/native/threads=256 stencil/ldgsts/native/opt=16 stencil/ldgsts/native/opt=32; do
      run=("$build/tools/bench/asyncrt-bench" --sweep-filter "$f" --repeats 1 --warmup 0)
      echo "=== $f" >>"$OUT/ncu.txt"
      "$ncu" -k regex:asyncrt_tile_kernel -c 1 --metrics "$metrics" "${run[@]}" >/tmp/asyncrt-ncu.txt 2>&1 ||
        "$ncu" -k regex:asyncrt_tile_kernel -c 1 --section SpeedOfLight --section Occupancy \
          --section MemoryWorkloadAnalysis_Tables "${run[@]}" >/tmp/asyncrt-ncu.txt 2>&1 || rc=1
      grep -vE '^(transpose|stencil5) |^Tile sweep|^op |^cuMemcpy|^peer' /tmp/asyncrt-ncu.txt >>"$OUT/ncu.txt"
    done
    note "profile: $(grep -c '^===' "$OUT/ncu.txt") kernels in ncu.txt"
    ;;
  parity)
    # nvcc's image and asyncrt's of every kernel in tests/parity, on the same inputs (issues 22, 32).
    # shellcheck disable=SC2086
    python3 tests/parity/run_parity.py $build "$OUT/parity" ${ASYNCRT_PARITY_ARGS:-} >"$OUT/parity.log" 2>&1 || rc=1
    cp "$OUT/parity/parity.md" "$OUT/parity.md" 2>/dev/null
    note "parity: $(grep -E '^\| asyncrt|processes, ' "$OUT/parity.log" | tr '\n' ' ')"
    ;;
  parity-sweep)
    # The NVRTC version sweep (issue 32): the images tests/parity/build_images.py made on a CPU
    # machine (parity-images/ or parity-images.tar.xz, carried here), every set against nvcc's, then
    # Nsight Compute on flash_attention_minimal's images (profile/). ASYNCRT_PARITY_ARGS: the
    # harness's options (default: 3 rounds, no kernel started past 360 s).
    images=${ASYNCRT_PARITY_IMAGES:-parity-images.tar.xz}
    [ -d parity-images ] && [ -z "${ASYNCRT_PARITY_IMAGES:-}" ] && images=parity-images
    # shellcheck disable=SC2086
    python3 tests/parity/run_parity.py $build "$OUT/parity-sweep" --images "$images" ${ASYNCRT_PARITY_ARGS:---rounds 3 --deadline 360} \
      >"$OUT/parity-sweep.log" 2>&1 || rc=1
    cp "$OUT/parity-sweep/parity.md" "$OUT/parity-sweep.md" 2>/dev/null
    note "parity-sweep: $(grep -E '^\| (nvrtc|nvcc)-|processes, ' "$OUT/parity-sweep.log" | tr '\n' ' ')"
    timeout "${ASYNCRT_PROFILE_TIMEOUT:-100}" python3 tests/parity/profile_images.py $build "$images" flash_attention_minimal \
      "$OUT/profile" ${ASYNCRT_PROFILE_SETS:-nvcc-13.0 nvrtc-13.4.92 nvrtc-13.5.37 nvcc-13.5.37} >>"$OUT/parity-sweep.log" 2>&1
    note "profile: $(find "$OUT/profile" -name '*.txt' 2>/dev/null | wc -l) ncu reports in profile/"
    ;;
  compact)
    # Compact images (issue 37) from the real flow: run_parity.py --compact holds, for every parity
    # kernel, asyncrt's own image (NVRTC's) and asyncrt-run's with ASYNCRT_COMPACT_IMAGES=1 against
    # nvcc's: results, attributes, time, image bytes and cuModuleLoadData time (load_ms), with each
    # kernel's verdict ("compact image: ..." or why NVRTC's stayed). nvPTXCompiler of NVRTC's exact
    # version: beside the NVRTC in use (.pip/, tools/setup-ptxcompiler.sh), or a loader carried in
    # .ptxc/ (e.g. 13.0.88, built on a CPU machine, for the toolkit's NVRTC 13.0 when no .pip/ came).
    note "compact: $($build/tools/run/asyncrt-run --version 2>&1 | head -1); toolkit: $("${CUDA_PATH:-/usr/local/cuda}/bin/nvcc" --version 2>&1 | tail -1); nvPTXCompiler ${ASYNCRT_PTXCOMPILER:-beside that NVRTC}"
    # The CPU half on this machine's NVRTC first (ASYNCRT_COMPACT_CPU=0 skips it, e.g. in a second
    # call that runs other kernels): the flow's verdicts and the proof of every kernel.
    : >"$OUT/compact.log"
    if [ "${ASYNCRT_COMPACT_CPU:-1}" != 0 ]; then
      ctest --test-dir $build -R 'test_compact_flow|test_compact_corpus' --output-on-failure -V >"$OUT/compact.log" 2>&1 || rc=1
      note "compact: $(grep -E 'tests passed|skipped:|compact images;|kernel files' "$OUT/compact.log" | tr '\n' ' ')"
    fi
    # shellcheck disable=SC2086
    python3 tests/parity/run_parity.py $build "$OUT/compact" --compact ${ASYNCRT_PARITY_ARGS:---rounds 3 --deadline 480} \
      >>"$OUT/compact.log" 2>&1 || rc=1
    cp "$OUT/compact/parity.md" "$OUT/compact.md" 2>/dev/null
    note "compact: $(grep -E '^Compact images:|^\| (asyncrt|compact) \(' "$OUT/compact.md" 2>/dev/null | tr '\n' ' ')"
    # compact-images' sets made on a CPU machine (tests/compact/compact_image_sets.py), when carried.
    sets=${ASYNCRT_COMPACT_IMAGE_SETS:-}
    [ -z "$sets" ] && [ -f parity-images-compact.tar.xz ] && sets=parity-images-compact.tar.xz
    [ -z "$sets" ] && [ -d parity-images-compact ] && sets=parity-images-compact
    if [ -n "$sets" ]; then
      # shellcheck disable=SC2086
      python3 tests/parity/run_parity.py $build "$OUT/compact-sets" --images "$sets" ${ASYNCRT_PARITY_ARGS:---rounds 3 --deadline 360} \
        >"$OUT/compact-sets.log" 2>&1 || rc=1
      note "compact sets: $(grep -E '^\| (nvrtc|compact)-|processes, ' "$OUT/compact-sets.log" | tr '\n' ' ')"
    fi
    ;;
  link)
    # A call across files: one file, linked, linked with LTO (issue 27; tools/bench/link_bench.sh).
    bash tools/bench/link_bench.sh $build "$OUT" >"$OUT/link.log" 2>&1 || rc=1
    grep -q 'FAILED\|exit [1-9]' "$OUT/link.log" && rc=1
    grep '^link bench\|exit' "$OUT/link.log" | sed 's/^/link: /' | tee -a "$summary"
    ;;
  graph)
    # asyncrt-run --graph (issue 36): a --then sequence captured once and replayed as a CUDA graph,
    # checked like the plain run (--expect), then timed per iteration against the same launches on
    # the stream: a PDL pair plus an in-place kernel (launch_kernels.cu, the producer spins ~0.1 ms),
    # and three tiny launches, where launch overhead is all there is.
    asyncrt_run=$build/tools/run/asyncrt-run src=tests/runtime/launch_kernels.cu n=1048576 small=4096
    # out = 3 * iota(0, 0.5) + 2 (PDL pair + add_one) and iota(0, 0.5) + 3 (add_one three times), as .npy
    python3 - "$OUT" $n $small <<'PY'
import struct, sys
out, n, small = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def npy(path, values):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % len(values)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%df" % len(values), *values))
npy(out + "/graph-pdl-want.npy", [3 * (0.5 * i) + 2 for i in range(n)])
npy(out + "/graph-tiny-want.npy", [0.5 * i + 3 for i in range(small)])
PY
    g=$((n / 256)) gs=$((small / 256))
    # shellcheck disable=SC2054,SC2206 # iota=START,STEP; the counts are numbers
    pdl=(--buf in=f32:$n:iota=0,0.5 --buf mid=f32:$n:poison --buf out=f32:$n:poison
         --kernel pdl_producer --grid $g --block 256 --arg buf:in --arg buf:mid --arg i32:$n
         --then --kernel pdl_consumer --grid $g --block 256 --arg buf:mid --arg buf:out --arg i32:$n --pdl
         --then --kernel add_one --grid $g --block 256 --arg buf:out --arg i32:$n --expect out="$OUT/graph-pdl-want.npy")
    # shellcheck disable=SC2054,SC2206
    tiny=(--buf x=f32:$small:iota=0,0.5 --kernel add_one --grid $gs --block 256 --arg buf:x --arg i32:$small
          --then --kernel add_one --grid $gs --block 256 --arg buf:x --arg i32:$small
          --then --kernel add_one --grid $gs --block 256 --arg buf:x --arg i32:$small --expect x="$OUT/graph-tiny-want.npy")
    : >"$OUT/graph.log"
    for case in pdl tiny; do
      if [ $case = pdl ]; then args=("${pdl[@]}"); else args=("${tiny[@]}"); fi
      "$asyncrt_run" $src --arch auto -v "${args[@]}" --graph 1000 --warmup 50 >>"$OUT/graph.log" 2>&1 || rc=1
      "$asyncrt_run" $src --arch auto "${args[@]}" --graph 1000 --warmup 50 --json >"$OUT/graph-$case.json" 2>>"$OUT/graph.log" || rc=1
      note "graph ($case): $(grep -E '^graph:|^check|mismatch' "$OUT/graph.log" | tail -2 | tr '\n' ' ')"
    done
    ;;
  nsys)
    # The README's timeline (issue 36): a cold and a warm asyncrt-run (a fresh disk cache, then the
    # same one) under Nsight Systems with CUDA and NVTX tracing, each exported as SQLite, then
    # tools/docs/nvtx_timeline.py's PNG where matplotlib is (else run it on the CPU machine).
    # Without an Nsight Systems on PATH, the one Nsight Compute carries (its host/target-linux-x64/nsys,
    # whose raw .qdstrm its QdstrmImporter turns into the report).
    if ! command -v nsys >/dev/null; then
      found=$(ls -d /opt/nvidia/nsight-compute/*/host/target-linux-x64 2>/dev/null | sort -V | tail -1)
      [ -n "$found" ] && [ -x "$found/nsys" ] && PATH=$found:$PATH
    fi
    if ! command -v nsys >/dev/null; then note "nsys: not on this machine: skipped"; continue; fi
    importer=$(ls "$(dirname "$(command -v nsys)")"/../*/QdstrmImporter 2>/dev/null | head -1)
    mkdir -p "$OUT/nsys"
    cache=$(mktemp -d /tmp/asyncrt-nsys-cache.XXXXXX)
    for pass in cold warm; do
      ASYNCRT_CACHE_DIR=$cache nsys profile --trace=cuda,nvtx --force-overwrite=true -o "$OUT/nsys/$pass" \
        $build/tools/run/asyncrt-run examples/stage_scale.cu --arch auto --grid 8192 --block 256 \
        --buf x=f32:16777216:iota=0,0.25 --buf y=f32:16777216:poison \
        --arg buf:x --arg buf:y --arg f32:2 --arg f32:1 --arg i32:16777216 --graph 20 >"$OUT/nsys/$pass.log" 2>&1 || rc=1
      if [ ! -f "$OUT/nsys/$pass.nsys-rep" ] && [ -f "$OUT/nsys/$pass.qdstrm" ] && [ -n "$importer" ]; then
        "$importer" -i "$OUT/nsys/$pass.qdstrm" >>"$OUT/nsys/$pass.log" 2>&1 && rm -f "$OUT/nsys/$pass.qdstrm"
      fi
      nsys export --type sqlite --force-overwrite=true -o "$OUT/nsys/$pass.sqlite" "$OUT/nsys/$pass.nsys-rep" \
        >>"$OUT/nsys/$pass.log" 2>&1 || rc=1
    done
    rm -rf "$cache"
    note "nsys: $(nsys --version 2>&1 | head -1); $(cd "$OUT/nsys" && echo *)"
    python3 tools/docs/nvtx_timeline.py "$OUT/nsys/cold.sqlite" "$OUT/nsys/warm.sqlite" --titles "cold cache,warm cache" \
      -o "$OUT/nsys/timeline.png" 2>&1 | sed 's/^/nsys: /' | tee -a "$summary"
    ;;
  multi)
    # Many GPUs in one process (issue 36), for a machine with two or more (kind nvidia-h100-x2):
    # the library (test_multi_gpu: results on every device, one compile, tensor maps per device,
    # an op's device), asyncrt-run --devices all (test_run_multi_gpu) and the probe's peer matrix
    # (probe_cli_peers-gpu), each skipped, saying so, below two devices; the fake-driver tests
    # too. Then, for the record: the peer matrix, and one --devices all run with each device's
    # origin, compile and load times and kernel time.
    ctest --test-dir $build -R '^(test_multi_gpu|test_run_multi_gpu|probe_cli_peers-gpu|probe_cli_peers|test_multi_device.*)$' \
      --output-on-failure -V --timeout 300 >"$OUT/multi.log" 2>&1 || rc=1
    note "multi: $(grep -E 'tests passed|tests failed' "$OUT/multi.log" | tail -1)"
    grep -E '\*\*\*Failed|Not Run|\*\*\*Skipped|Timeout|skipped, |compiled_once_runs_everywhere: |saxpy_on_every_device: ' \
      "$OUT/multi.log" | sed 's/^[0-9]*: //; s/^/  /' | sort -u | tee -a "$summary"
    $build/tools/probe/asyncrt-probe --json >"$OUT/multi-probe.json" 2>>"$OUT/multi.log"
    devices=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["devices"]))' "$OUT/multi-probe.json" 2>/dev/null || echo 0)
    if [ "$devices" -lt 2 ]; then
      note "multi: $devices device(s): the peer matrix and the --devices all record need 2 or more; not run"
      continue
    fi
    $build/tools/probe/asyncrt-probe >"$OUT/multi-probe.txt" 2>&1 || rc=1
    sed -n '/^peer /,$p' "$OUT/multi-probe.txt" | sed 's/^/multi: /' | tee -a "$summary"
    n=$((1 << 24))
    ASYNCRT_CACHE_DIR=$(mktemp -d) $build/tools/run/asyncrt-run tests/run/kernels/saxpy.cu --devices all --json \
      --grid $(((n + 255) / 256)) --block 256 --buf x=f32:$n:rand=1 --buf y=f32:$n:rand=2 --arg f32:2 --arg buf:x \
      --arg buf:y --arg i32:$n --repeat 50 --warmup 5 --bytes $((12 * n)) >"$OUT/multi-run.json" 2>>"$OUT/multi.log" || rc=1
    python3 - "$OUT/multi-run.json" <<'PY' | tee -a "$summary"
import json, sys
try:
    runs = json.load(open(sys.argv[1]))
except ValueError as e:
    sys.exit(f"multi: --devices all printed no JSON array: {e}")
for d, r in enumerate(runs):
    t = r.get("timing", {})
    print(f"multi: --devices all, device {d}: {r.get('status')}, {r.get('origin')} in {r.get('compile_ms', 0):.1f} ms, "
          f"load {r.get('load_ms', 0):.2f} ms, saxpy 2^24 median {t.get('median_ms', 0):.4f} ms ({t.get('gbps', 0):.0f} GB/s)")
PY
    ;;
  *) note "unknown stage $stage"; rc=2 ;;
  esac
done
cat "$summary"
exit $rc
