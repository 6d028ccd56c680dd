#!/usr/bin/env python3
"""Compact images for the GPU half (issue 37): compact-images --out DIR's sets (nvrtc-V/, compact-V/,
one KERNEL.cubin each) and a folder of nvcc's images (build_images.py's nvcc-X.Y/) made into one
folder that tests/parity/run_parity.py --images times: nvcc as the reference, every other set a
candidate, with build_images.py's manifest (source digests, run digests: a compact image that is
NVRTC's own runs once). run_parity's table then has each set's image bytes and cuModuleLoadData time
(load_ms) beside nvcc's, and checks each set's results and attributes against nvcc's.

usage: compact_image_sets.py COMPACT_OUT NVCC_DIR OUT    (writes OUT/ and OUT.tar.xz)
  e.g. build/tests/compact/compact-images --out /tmp/compact --nvcc-dir parity-images/nvcc-13.0
       python3 tests/compact/compact_image_sets.py /tmp/compact parity-images/nvcc-13.0 parity-compact
"""
import json
import os
import shutil
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "parity"))
import build_images  # noqa: E402  (run_digest)
import parity_common as pc  # noqa: E402


def main():
    if len(sys.argv) != 4:
        print(__doc__.split("\n\n")[-1], file=sys.stderr)
        return 2
    compact, nvcc, out = sys.argv[1:]
    if not os.path.isdir(nvcc):
        raise SystemExit("%s: no folder of nvcc's images" % nvcc)
    ref = os.path.basename(nvcc.rstrip("/"))
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(nvcc, os.path.join(out, ref))
    sets = [{"label": ref, "compiler": "nvcc", "version": ref.split("-", 1)[-1], "how": "nvcc -cubin (%s)" % nvcc}]
    for label in sorted(os.listdir(compact)):
        if not os.path.isdir(os.path.join(compact, label)) or "-" not in label:
            continue
        shutil.copytree(os.path.join(compact, label), os.path.join(out, label))
        kind, version = label.split("-", 1)
        sets.append({"label": label, "compiler": "nvrtc", "version": version,
                     "how": "compact-images: NVRTC %s's image%s" % (
                         version, "" if kind == "nvrtc" else ", compact where proven equal (else NVRTC's)")})
    kernels = {}
    for k in pc.kernels():
        entry = {"arch": k.arch, "sha256": k.sha256, "source": os.path.relpath(k.path, pc.HERE), "failed": {},
                 "digest": {}}
        for s in sets:
            path = os.path.join(out, s["label"], k.name + ".cubin")
            if os.path.isfile(path):
                entry["digest"][s["label"]] = build_images.run_digest(path)
            else:
                entry["failed"][s["label"]] = "missing"
        kernels[k.name] = entry
    manifest = {"schema": "asyncrt-parity-images/1", "reference": ref, "sets": sets,
                "headers": "NVRTC: its built-in headers and the toolkit's CCCL", "kernels": kernels}
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    archive = out.rstrip("/") + ".tar.xz"
    with tarfile.open(archive, "w:xz") as t:
        t.add(out, arcname=os.path.basename(out.rstrip("/")))
    print("%d sets x %d kernels in %s (%s: %.1f MB)" % (len(sets), len(kernels), out, archive,
                                                       os.path.getsize(archive) / 1e6))
    return 0


if __name__ == "__main__":
    sys.exit(main())
