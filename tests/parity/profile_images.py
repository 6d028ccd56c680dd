#!/usr/bin/env python3
"""Nsight Compute on one kernel's images from build_images.py (GPU): where two compilers' code for
the same kernel spends its time differently (issue 32: flash_attention_minimal under NVRTC 13.5).

For each image set named (default: all in the folder) ncu profiles the kernel's first launch of
asyncrt-run on the file's run line with that image, with the warp-state and source-counter sections
(stall reasons, per-instruction samples). Writes OUT/ncu-KERNEL-SET.txt (the details page) and
OUT/ncu-KERNEL-SET-sass.csv (per SASS instruction: address, source, samples, stall reasons).

usage: profile_images.py BUILD_DIR IMAGES_DIR|IMAGES.tar.xz KERNEL OUT_DIR [SET...]
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import parity_common as pc

SECTIONS = ["SpeedOfLight", "Occupancy", "LaunchStats", "WarpStateStats", "SourceCounters", "MemoryWorkloadAnalysis_Tables"]


def main():
    if len(sys.argv) < 5:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    build, images, name, out = sys.argv[1:5]
    work = tempfile.mkdtemp(prefix="asyncrt-profile.")
    try:
        return profile(build, pc.image_folder(images, work), name, out, sys.argv[5:])
    finally:
        shutil.rmtree(work, ignore_errors=True)


def profile(build, images, name, out, labels):
    with open(os.path.join(images, "manifest.json")) as f:
        labels = labels or [s["label"] for s in json.load(f)["sets"]]
    ks = [k for k in pc.kernels() if k.name == name]
    if not ks:
        print("no kernel file %s.cu under tests/parity" % name, file=sys.stderr)
        return 2
    k = ks[0]
    ncu = shutil.which("ncu") or "/usr/local/cuda/bin/ncu"
    tool = os.path.join(build, "tools/run/asyncrt-run")
    os.makedirs(out, exist_ok=True)
    rc_all = 0
    for label in labels:
        stem = os.path.join(out, "ncu-%s-%s" % (name, label))
        run = [tool, k.path, "--arch", k.arch] + k.run_line + ["--image", os.path.join(images, label, name + ".cubin")]
        cmd = [ncu, "--launch-count", "1", "--import-source", "no", "-f", "-o", stem]
        for s in SECTIONS:
            cmd += ["--section", s]
        rc, _, _, err = pc.run(cmd + run, timeout=240)
        if rc != 0:
            print("%s: ncu failed (exit %d): %s" % (label, rc, pc.last_line(err)))
            rc_all = 1
            continue
        for page, suffix, extra in (("details", ".txt", []), ("source", "-sass.csv", ["--csv", "--print-source", "sass"])):
            p = subprocess.run([ncu, "-i", stem + ".ncu-rep", "--page", page] + extra, capture_output=True, text=True)
            with open(stem + suffix, "w") as f:
                f.write(p.stdout)
        os.remove(stem + ".ncu-rep")
        print("%s: %s.txt, %s-sass.csv" % (label, stem, stem))
    return rc_all


if __name__ == "__main__":
    sys.exit(main())
