#!/usr/bin/env python3
"""The CPU half of the NVRTC version sweep (issue 32): every parity kernel's image from each
compiler, built on a machine without a GPU, into one folder that run_parity.py --images DIR times
and checks on the GPU machine.

Image sets (each a folder DIR/LABEL/ of KERNEL.cubin):
  nvcc-X.Y          the toolkit's nvcc -cubin (CUDA_PATH or /usr/local/cuda), the reference
  nvrtc-X.Y         asyncrt-run --compile-only --emit-cubin with the toolkit's NVRTC
  nvrtc-V           the same with ASYNCRT_NVRTC=the nvidia-cuda-nvrtc==V wheel's libnvrtc.so.13
  nvcc-V            (--nvcc-wheel V,V...) nvcc, cicc and ptxas of the nvidia-cuda-nvcc, nvidia-nvvm,
                    nvidia-cuda-crt and nvidia-cuda-runtime wheels of V, with the toolkit's CCCL
Every compile uses the file's own arch and run line (corpus/README.md), as run_parity.py does.
Headers: the wheels' NVRTC builds with its own built-in headers and the toolkit's CCCL (asyncrt's
include path); nvcc-V with its own CUDA headers and the toolkit's CCCL.

Wheels are fetched with `pip download --no-deps` into --wheels (kept there for the next run).
DIR/manifest.json names the sets, the compilers' versions, and for each kernel its source's digest
(the GPU side refuses an image of another source), arch, and each image's run digest (code,
registers, constant banks, shared sizes, globals: images with one digest are run once).
DIR/elf.md compares every image with the reference from its ELF: registers, stack, shared layout,
code (byte for byte, or the same instructions scheduled otherwise). DIR.tar.xz is DIR packed for
the GPU machine (run_parity.py --images takes either).

With --ptx, each set's PTX too (DIR-ptx/LABEL/KERNEL.ptx, not packed) and DIR-ptx/ptx.md: which
kernels' PTX is the reference's, and how each addresses shared memory (the front end's part of a
difference, where elf.md shows the whole).

usage: build_images.py BUILD_DIR DIR [--filter W] [--versions V,V...] [--nvcc-wheel V,V...] [--wheels W] [--jobs N] [--ptx]
  e.g. build_images.py build parity-images --nvcc-wheel 13.5.37   (parity-images* is git-ignored)
"""
import argparse
import concurrent.futures
import glob
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tarfile
import tempfile
import zipfile

import cubin
import parity_common as pc

WHEEL_VERSIONS = "13.1.115,13.2.86,13.3.33,13.4.92,13.5.37"
NVCC_WHEELS = ("nvidia-cuda-nvcc", "nvidia-nvvm", "nvidia-cuda-crt", "nvidia-cuda-runtime")


def release_version(package, version):
    """The version of package that CUDA release `version` ships: version itself, else the newest of
    its major.minor not past it (an update release bumps only the components it changes: CUDA
    13.1.1's nvcc is 13.1.115, its runtime headers still 13.1.80). pip is asked for the versions."""
    p = subprocess.run([sys.executable, "-m", "pip", "index", "versions", package], capture_output=True, text=True)
    m = re.search(r"Available versions: (.*)", p.stdout)
    key = lambda v: tuple(int(x) for x in v.split("."))
    want = key(version)
    same = [v for v in (m.group(1).split(", ") if m else []) if re.fullmatch(r"\d+\.\d+\.\d+", v)
            and key(v)[:2] == want[:2] and key(v) <= want]
    if not same:
        raise SystemExit("%s: no version of %d.%d up to %s (pip index versions: %s)" % (
            package, want[0], want[1], version, pc.last_line(p.stdout + p.stderr)))
    return max(same, key=key)


def wheel_tree(package, version, wheels, release=False):
    """The unpacked wheel package==version under wheels/, downloaded if missing. release: where
    there is no such version, the one CUDA release `version` ships (release_version)."""
    tree = os.path.join(wheels, "%s-%s" % (package, version))
    if os.path.isdir(tree):
        return tree
    stem = package.replace("-", "_") + "-" + version + "-"
    found = [f for f in glob.glob(os.path.join(wheels, "*.whl")) if os.path.basename(f).startswith(stem)]
    if not found:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "%s==%s" % (package, version), "-d", wheels]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0 and release and "No matching distribution" in p.stderr:
            shipped = release_version(package, version)
            print("%s==%s does not exist: %s, the newest of its release" % (package, version, shipped), flush=True)
            os.makedirs(os.path.dirname(tree), exist_ok=True)
            real = wheel_tree(package, shipped, wheels)
            os.symlink(os.path.basename(real), tree)
            return tree
        if p.returncode != 0:
            raise SystemExit("pip download %s==%s failed: %s" % (package, version, pc.last_line(p.stderr)))
        found = [f for f in glob.glob(os.path.join(wheels, "*.whl")) if os.path.basename(f).startswith(stem)]
    part = tree + ".part"
    shutil.rmtree(part, ignore_errors=True)
    with zipfile.ZipFile(found[0]) as z:
        z.extractall(part)
    for root, _, files in os.walk(part):  # zip keeps no modes: the executables and libraries
        for f in files:
            if "/bin" in root or ".so" in f:
                os.chmod(os.path.join(root, f), 0o755)
    os.rename(part, tree)
    return tree


def nvcc_wheel(version, wheels):
    """One tree of the nvcc, nvvm, crt and runtime wheels of CUDA release `version` (nvcc.profile
    finds cicc and the headers relative to nvcc); returns (its nvcc, 'package==version' of each)."""
    tree = os.path.join(wheels, "nvcc-tree-%s" % version)
    trees = [wheel_tree(package, version, wheels, release=True) for package in NVCC_WHEELS]
    if not os.path.isdir(tree):
        part = tree + ".part"
        shutil.rmtree(part, ignore_errors=True)
        for t in trees:
            shutil.copytree(t + "/", part, dirs_exist_ok=True, symlinks=True)
        os.rename(part, tree)
    used = [os.path.basename(os.path.realpath(t)) for t in trees]  # package-version
    return os.path.join(tree, "nvidia/cu13/bin/nvcc"), ["%s==%s" % tuple(u.rsplit("-", 1)) for u in used]


def tool_version(cmd, pattern, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    m = re.search(pattern, p.stdout + p.stderr)
    return m.group(1) if m else "?"


class ImageSet:
    def __init__(self, label, compiler, version, how, nvcc=None, nvrtc=None, extra=()):
        self.label, self.compiler, self.version, self.how = label, compiler, version, how
        self.nvcc, self.nvrtc, self.extra = nvcc, nvrtc, list(extra)

    def build(self, tool, k, out, cache, ptx=None):
        """(ok, message) after building k's image into out (and its PTX into ptx)."""
        if self.compiler == "nvcc":
            nvcc = [self.nvcc, "-arch=" + k.arch, "-std=c++17"] + self.extra + k.nvcc_flags
            cmds = [nvcc + ["-cubin", "-o", out, k.path]] + ([nvcc + ["-ptx", "-o", ptx, k.path]] if ptx else [])
            env = None
        else:
            cmds = [[tool, k.path, "--arch", k.arch] + k.run_line + ["--compile-only", "--emit-cubin", out, "--json"] +
                    (["--emit-ptx", ptx] if ptx else [])]
            env = dict(os.environ, ASYNCRT_CACHE_DIR=cache)
            if self.nvrtc:
                env["ASYNCRT_NVRTC"] = self.nvrtc
            else:
                env.pop("ASYNCRT_NVRTC", None)
        for cmd in cmds:
            rc, doc, out_text, err = pc.run(cmd, env=env, timeout=600)
            if rc != 0:
                return False, "exit %d: %s" % (rc, ((doc or {}).get("error") or pc.last_line(err) or pc.last_line(out_text))[:200])
        return True, "ok"

    def describe(self):
        return {"label": self.label, "compiler": self.compiler, "version": self.version, "how": self.how}


def image_sets(a, tool):
    cuda = os.environ.get("CUDA_PATH", "/usr/local/cuda")
    nvcc = os.environ.get("ASYNCRT_NVCC") or os.path.join(cuda, "bin/nvcc")
    v = tool_version([nvcc, "--version"], r"release [\d.]+, V([\d.]+)")
    sets = [ImageSet("nvcc-%s" % ".".join(v.split(".")[:2]), "nvcc", v, "%s -cubin -arch=ARCH -std=c++17" % nvcc, nvcc=nvcc)]
    env = dict(os.environ)
    env.pop("ASYNCRT_NVRTC", None)
    own = tool_version([tool, "--version"], r"NVRTC (\d+\.\d+)", env)
    sets.append(ImageSet("nvrtc-%s" % own, "nvrtc", own, "asyncrt-run --compile-only, the NVRTC asyncrt finds by itself"))
    for version in [x for x in a.versions.split(",") if x]:
        lib = os.path.join(wheel_tree("nvidia-cuda-nvrtc", version, a.wheels), "nvidia/cu13/lib/libnvrtc.so.13")
        seen = tool_version([tool, "--version"], r"NVRTC (\d+\.\d+)", dict(os.environ, ASYNCRT_NVRTC=lib))
        if not version.startswith(seen + "."):
            raise SystemExit("ASYNCRT_NVRTC=%s: asyncrt-run reports NVRTC %s, not %s" % (lib, seen, version))
        sets.append(ImageSet("nvrtc-%s" % version, "nvrtc", version,
                             "asyncrt-run --compile-only, ASYNCRT_NVRTC=nvidia-cuda-nvrtc==%s's libnvrtc.so.13" % version,
                             nvrtc=lib))
    for version in [x for x in a.nvcc_wheel.split(",") if x]:
        wheel_nvcc, used = nvcc_wheel(version, a.wheels)
        cccl = os.path.join(cuda, "include/cccl")
        sets.append(ImageSet("nvcc-%s" % version, "nvcc", version,
                             "nvcc of the wheels %s -isystem %s" % (" ".join(used), cccl),
                             nvcc=wheel_nvcc, extra=["-isystem", cccl]))
    return sets


def sections(path):
    """[(name, sh_flags, bytes)] of an ELF64 little-endian file (a CUBIN)."""
    return cubin.Cubin(path).sections()


def kernel_code(path):
    """{kernel: its .text bytes} of a CUBIN."""
    return {name[6:]: data for name, _, data in sections(path) if name.startswith(".text.")}


def run_digest(path):
    """What a launch of the image depends on: every kernel's code and registers (.text.*, whose
    flags hold the register count), constant banks, shared sizes, globals and their initial values.
    Two images with one digest run the same: the GPU side times one of them."""
    h = hashlib.sha256()
    for name, flags, data in sorted(sections(path)):
        if re.match(r"\.(text\.|nv\.constant\d|nv\.shared\.|nv\.global)", name):
            h.update(b"%s %d %d\0" % (name.encode(), flags, len(data)))
            h.update(data if not name.startswith(".nv.shared") else b"")
        elif name == ".nv.info":  # per kernel: registers, frame and stack sizes (symbol indices left out)
            at, values = 0, []
            while at + 4 <= len(data):
                fmt, attr, size = struct.unpack_from("<BBH", data, at)
                if fmt == 4 and size == 8:
                    values.append((attr, struct.unpack_from("<I", data, at + 8)[0]))
                at += 4 + (size if fmt == 4 else 0)
            h.update(repr(sorted(values)).encode())
    return h.hexdigest()


def without_control(text):
    """Instructions without their scheduling control (bits 105-127 of each 128-bit word: stall
    counts, barriers, reuse), which ptxas of each version sets its own way."""
    words = bytearray(text)
    for at in range(0, len(words) - 15, 16):
        words[at + 13] &= 0x01
        words[at + 14] = words[at + 15] = 0
    return bytes(words)


def code_verdict(a, b):
    """'=' the same code byte for byte, 'c4' the same but for bank-4 offsets of the same globals
    (NVRTC's extra globals come first: cubin.py), 'sched' the same instructions scheduled
    otherwise, 'code'."""
    ca, cb = kernel_code(a), kernel_code(b)
    if ca == cb:
        return "="
    if ca.keys() != cb.keys():
        return "code"
    A, B = cubin.Cubin(a), cubin.Cubin(b)
    if all(ca[k] == cb[k] or cubin.same_code(A, B, ca[k], cb[k], set()) for k in ca):
        return "c4"
    if all(without_control(ca[k]) == without_control(cb[k]) for k in ca):
        return "sched"
    return "code"


def elf_differences(report):
    """cubin-compare --resources's difference lines, in short: 'regs 90/96', 'stack', 'layout'."""
    what = []
    for line in report.splitlines():
        m = re.match(r"^\S+: registers (\d+) against (\d+)$", line)
        if m:
            what.append("regs %s/%s" % m.groups())
        elif re.match(r"^\S+: (stack frame|min stack|max stack) ", line):
            what.append("stack")
        elif re.match(r"^(\S+: (static shared|shared alignment|parameter bank)|kernels:|\S+: only in)", line):
            what.append("layout")
    return sorted(set(what), key=what.index)


def elf_table(compare_tool, out, sets, names):
    """Every image against the reference from its ELF: layout, registers, stack (cubin-compare
    --resources) and code."""
    ref = sets[0].label
    lines = ["| kernel | " + " | ".join(s.label for s in sets[1:]) + " |", "|---|" + "---|" * (len(sets) - 1)]
    counts = {s.label: {"=": 0, "c4": 0, "sched": 0, "regs": 0} for s in sets[1:]}
    for name in names:
        cells = []
        a = os.path.join(out, ref, name + ".cubin")
        for s in sets[1:]:
            b = os.path.join(out, s.label, name + ".cubin")
            if not (os.path.isfile(a) and os.path.isfile(b)):
                cells.append("missing")
                continue
            p = subprocess.run([compare_tool, "--resources", a, b], capture_output=True, text=True)
            code = code_verdict(a, b)
            what = elf_differences(p.stdout)
            c = counts[s.label]
            c["="] += code in ("=", "c4") and not what
            c["c4"] += code == "c4" and not what
            c["sched"] += code == "sched" and not what
            c["regs"] += any(w.startswith("regs") for w in what)
            cells.append(", ".join(what + ([code] if code != "=" else [])) or "=")
        lines.append("| %s | %s |" % (name, " | ".join(cells)))
    lines += ["", "Against %s's images. '=': the same code byte for byte; 'c4': the same but for the constant "
              "bank 4 offsets of the same globals' addresses; 'sched': the same instructions, other "
              "scheduling control bits (stall counts, barriers: ptxas's version); 'code': other instructions; "
              "'regs R/r': %s's registers/this one's; 'stack', 'layout': other stack or shared layout." % (ref, ref), ""]
    for label, c in counts.items():
        lines.append("- %s: %d of %d the same code (%d of them but for bank-4 offsets), %d the same instructions "
                     "scheduled otherwise, %d other registers" % (label, c["="], len(names), c["c4"], c["sched"], c["regs"]))
    return "\n".join(lines) + "\n"


def own_nvcc(sets):
    """[(an NVRTC set, the nvcc set of its major.minor)] where both were built (not the reference)."""
    minor = lambda s: s.version.split(".")[:2]
    return [(s, n) for s in sets if s.compiler == "nvrtc"
            for n in sets[1:] if n.compiler == "nvcc" and minor(n) == minor(s)]


def ptx_functions(path):
    """{name: text} of every .entry and .func with a body in a PTX file, without its linkage
    (.visible or .weak: nvcc's explicit instantiation against NVRTC's name expression)."""
    with open(path) as f:
        t = f.read()
    out = {}
    for m in re.finditer(r"^(?:\.(?:visible|weak|extern) )*\.(?:entry|func)\s+(?:\([^)]*\)\s*)?([\w$]+)\s*\(", t, re.M):
        end = t.find(")", m.end())
        if end < 0 or t.find("{", end) < 0 or 0 <= t.find(";", end) < t.find("{", end):  # a declaration
            continue
        depth, i = 0, t.find("{", end)
        while i < len(t):
            depth += {"{": 1, "}": -1}.get(t[i], 0)
            if depth == 0:
                break
            i += 1
        out[m.group(1)] = re.sub(r"^(\.(visible|weak|extern) )*", "", t[m.start():i + 1])
    return out


def shared_addresses(path):
    """(ld/st.shared through a 64-bit register, through a 32-bit one)."""
    with open(path) as f:
        t = f.read()
    return (len(re.findall(r"\b(?:ld|st)\.shared\S*\s[^;]*\[%rd", t)),
            len(re.findall(r"\b(?:ld|st)\.shared\S*\s[^;]*\[%r\d", t)))


def ptx_table(ptx_dir, sets, names):
    """Every kernel's PTX functions against the reference's: '=' the same text (linkage aside)."""
    ref = sets[0].label
    lines = ["| kernel | %s | ld/st.shared through [64-bit]/[32-bit] registers: %s |" % (
        " | ".join(s.label for s in sets[1:]), ", ".join(s.label for s in sets)), "|---|" + "---|" * len(sets)]
    same = {s.label: 0 for s in sets[1:]}
    for name in names:
        path = lambda s: os.path.join(ptx_dir, s.label, name + ".ptx")
        if not all(os.path.isfile(path(s)) for s in sets):
            lines.append("| %s | missing |" % name)
            continue
        a = ptx_functions(path(sets[0]))
        cells = []
        for s in sets[1:]:
            b = ptx_functions(path(s))
            equal = all(b.get(f) == text for f, text in a.items())
            same[s.label] += equal
            cells.append("=" if equal else "differs")
        lines.append("| %s | %s | %s |" % (name, " | ".join(cells), ", ".join("%d/%d" % shared_addresses(path(s)) for s in sets)))
    lines += ["", "Against %s's PTX, every function of its (text, linkage aside): " % ref +
              "; ".join("%s the same for %d of %d" % (k, v, len(names)) for k, v in same.items())]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build")
    ap.add_argument("out")
    ap.add_argument("--filter", default="")
    ap.add_argument("--versions", default=WHEEL_VERSIONS, help="nvidia-cuda-nvrtc wheel versions (comma-separated)")
    ap.add_argument("--nvcc-wheel", default="", help="also nvcc of the nvidia-cuda-nvcc wheels of these versions "
                    "(comma-separated)")
    ap.add_argument("--wheels", default=os.path.join(tempfile.gettempdir(), "asyncrt-wheels"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--ptx", action="store_true", help="also each set's PTX, into DIR-ptx/, with DIR-ptx/ptx.md")
    a = ap.parse_args()
    tool = os.path.abspath(os.path.join(a.build, "tools/run/asyncrt-run"))
    compare_tool = os.path.abspath(os.path.join(a.build, "tests/parity/cubin-compare"))
    os.makedirs(a.wheels, exist_ok=True)
    sets = image_sets(a, tool)
    ks = list(pc.kernels(a.filter))
    ptx_dir = a.out.rstrip("/") + "-ptx"
    for d in (a.out, ptx_dir):
        shutil.rmtree(d, ignore_errors=True)
    for s in sets:
        os.makedirs(os.path.join(a.out, s.label))
        if a.ptx:
            os.makedirs(os.path.join(ptx_dir, s.label))
    cache = tempfile.mkdtemp(prefix="asyncrt-images-cache.")
    jobs = []
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        for s in sets:
            for k in ks:
                out = os.path.join(a.out, s.label, k.name + ".cubin")
                ptx = os.path.join(ptx_dir, s.label, k.name + ".ptx") if a.ptx else None
                jobs.append((s, k, pool.submit(s.build, tool, k, out, os.path.join(cache, s.label), ptx)))
    shutil.rmtree(cache, ignore_errors=True)
    kernels = {k.name: {"arch": k.arch, "sha256": k.sha256, "source": os.path.relpath(k.path, pc.HERE), "failed": {}}
               for k in ks}
    failures = 0
    for s, k, f in jobs:
        ok, why = f.result()
        if not ok:
            failures += 1
            kernels[k.name]["failed"][s.label] = why
            print("%s %s: %s" % (s.label, k.name, why), flush=True)
        else:
            kernels[k.name].setdefault("digest", {})[s.label] = run_digest(os.path.join(a.out, s.label, k.name + ".cubin"))
    manifest = {"schema": "asyncrt-parity-images/1", "reference": sets[0].label, "sets": [s.describe() for s in sets],
                "headers": "NVRTC: its built-in headers and the toolkit's CCCL (%s); nvcc wheels: their CUDA headers "
                           "and the toolkit's CCCL" % os.environ.get("CUDA_PATH", "/usr/local/cuda"),
                "kernels": kernels}
    with open(os.path.join(a.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    table = elf_table(compare_tool, a.out, sets, [k.name for k in ks])
    for s, own in own_nvcc(sets):  # each NVRTC against the nvcc of its own release too
        table += "\n" + elf_table(compare_tool, a.out, [own, s], [k.name for k in ks])
    with open(os.path.join(a.out, "elf.md"), "w") as f:
        f.write(table)
    print(table)
    if a.ptx:
        table = ptx_table(ptx_dir, sets, [k.name for k in ks])
        with open(os.path.join(ptx_dir, "ptx.md"), "w") as f:
            f.write(table)
        print(table)
    size = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(a.out) for f in fs)
    archive = a.out.rstrip("/") + ".tar.xz"
    with tarfile.open(archive, "w:xz") as t:
        t.add(a.out, arcname=os.path.basename(a.out.rstrip("/")))
    print("%d image sets x %d kernels in %s (%.1f MB; %s %.1f MB), %d failed" % (
        len(sets), len(ks), a.out, size / 1e6, archive, os.path.getsize(archive) / 1e6, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
