#!/usr/bin/env python3
"""The GPU half of the nvcc parity harness (issues 22, 32).

For every kernel file under tests/parity/{tricky,corpus}/ (headers in corpus/README.md) it holds
candidate images against a reference image, all run by asyncrt-run on the file's run line:
  default        reference: nvcc -cubin of the file, built here; candidate: asyncrt's own image,
                 made by the NVRTC asyncrt-run uses (asyncrt-run --version names it)
  --compact      (default mode) a second candidate: the image asyncrt-run makes with compact images
                 on (ASYNCRT_COMPACT_IMAGES=1, issue 37; the nvPTXCompiler beside the NVRTC in use or
                 $ASYNCRT_PTXCOMPILER), emitted once and loaded with --image; its table notes each
                 kernel's verdict ("compact image: ..." or why NVRTC's image stayed)
  --images DIR   the folder build_images.py made on a CPU machine (or its .tar.xz): reference
                 DIR/nvcc-X.Y, every other set in it (NVRTC 13.0 ... 13.5, nvcc 13.5) a candidate, one
                 table per set; a kernel's images that run the same (one digest in the manifest) run
                 once, and the others show its figures

Per kernel:
  1. The reference runs once with --out (its outputs) and a short per-launch timing (--repeat 5),
     which says how the kernel is timed: under 50 us, as batches (--batch 200: events around 200
     back-to-back launches, 10 samples); else one launch per sample (20 samples).
  2. Rounds: the reference, then each candidate, one process each, ROUNDS times, and the reference
     once more. A candidate's first process also checks its outputs against the reference's
     (--expect). Each process gives one time (the median of its samples).
  3. A candidate's time ratio is the median over rounds of its time over the geometric mean of the
     reference processes before and after it. The A/A band is the largest |ratio - 1| of each
     reference process against the next one: the reference against itself, as many rounds as the
     A/B. A time difference is a ratio outside max(+-2%, the band).
  4. Registers, static shared, local memory and max threads per block (the driver's, from
     asyncrt-run --json) must be the reference's.
A known difference (KNOWN: per NVRTC version, kernel, what and why) is reported and not failed.
--own-nvcc KIT (default mode): KIT is build_images.py's images (folder or .tar.xz) with nvcc of the
NVRTC asyncrt-run uses, of its release (--nvcc-wheel 13.1.115 for NVRTC 13.1). asyncrt's image of
each kernel (asyncrt-run --compile-only --emit-cubin, the image the timed processes load) is read
against that nvcc's (cubin.py: the same kernels, code and resources); where it holds them, its
differences from the machine's nvcc are that release's own, reported as "nvcc 13.1 makes the same"
and not failed. Any other difference fails.
While it runs, an idle process holds device 0's primary context, so that each of the hundreds of
asyncrt-run processes starts on an initialised driver whether persistence mode is on or not.

Prints one table per candidate set and a summary, writes them to OUT/parity.md and every process's
figures to OUT/parity.json (rewritten after each kernel, so a run cut short keeps what it did), and
exits 1 on any difference that is not known.

usage: run_parity.py BUILD_DIR OUT_DIR [--images DIR|DIR.tar.xz | --own-nvcc DIR|DIR.tar.xz] [--compact] [--filter W,W]
                     [--rounds N] [--deadline S]
"""
import argparse
import concurrent.futures
import json
import math
import os
import re
import shutil
import statistics
import sys
import tempfile
import time

import cubin
import parity_common as pc

# NVRTC's known differences from nvcc 13.0's images, by NVRTC major.minor: kernel -> (what, why).
# 'what' names the columns excused: regs, static_shared, local, max_threads, time. NVRTC 13.0's:
# the kernels whose registers differ from nvcc's (test_parity_elf, build_images.py's elf.md) and the
# times its code changes on the H100 (the version sweep, 2026-11-26: the warp-tiled SGEMM 1.27x,
# cs_bf16_wmma_gemm 0.77x, flash_attention_minimal 1.021x with a band of +-0.2% (issue 32: 1.020,
# 1.018), fastcu_matmul5_warp_specialized 0.969x with +-1.4%, one run); the PTX of all from NVRTC
# 13.1-13.5 addresses shared memory as nvcc 13.0's does (NOTES-nvrtc-versions.md).
SHARED64 = ("NVRTC 13.0 addresses shared memory with 64-bit registers ([%rd] in PTX; nvcc's cicc runs with "
            "--sharedmem32, NVRTC 13.0's cannot): other code and registers. NVRTC 13.1+ gives nvcc 13.0's PTX")
KNOWN = {
    "13.0": {
        "sgemm_warptiling": ("time", SHARED64),
        "cs_bf16_wmma_gemm": ("regs max_threads time", SHARED64),
        "cs_half_wmma_gemm": ("regs max_threads time", SHARED64),
        "cs_shfl_scan": ("regs time", SHARED64),
        "llmc_matmul_backward_bias": ("regs time", SHARED64),
        "flash_attention_minimal": ("time", SHARED64),
        "fastcu_matmul5_warp_specialized": ("time", SHARED64),
    },
}
ATTRIBUTES = ("regs", "static_shared", "local", "max_threads")
SHORT_MS = 0.050   # kernels under this are timed as batches
BATCH = 200        # launches per timed sample for those
FLOOR = 0.02       # a time ratio within +-2% is never a difference


def known(nvrtc, kernel):
    """(set of excused columns, why) for a candidate made by NVRTC version nvrtc ('13.0'), or None."""
    entry = KNOWN.get(nvrtc or "", {}).get(kernel)
    return (set(entry[0].split()), entry[1]) if entry else None


def process_time(doc):
    """A process's time in ms: the sum of its launches' median times (one launch for most files)."""
    launches = (doc or {}).get("launches") or []
    times = [l["timing"]["median_ms"] for l in launches if l.get("timing")]
    return sum(times) if times else None


def attributes(doc):
    return [l.get("attributes", {}) for l in ((doc or {}).get("launches") or [doc or {}])]


def timing_verdict(ref_times, cand_times):
    """ref_times: the R+1 reference processes' times, cand_times: the candidate's R, in run order
    (reference r, candidate r, reference r+1). (ratio, band, outside) or Nones where untimed."""
    pairs = [(ref_times[r], ref_times[r + 1], c) for r, c in enumerate(cand_times)
             if c and ref_times[r] and r + 1 < len(ref_times) and ref_times[r + 1]]
    if not pairs:
        return None, None, False
    ratio = statistics.median(c / math.sqrt(a * b) for a, b, c in pairs)
    band = max(abs(b / a - 1) for a, b, _ in pairs)
    return ratio, band, abs(ratio - 1) > max(FLOOR, band)


def stdout_lines(text, mode):
    lines = [l for l in text.splitlines() if not l.startswith("{")]
    return sorted(lines) if mode == "sorted" else lines


class Candidate:
    """One set of images: its label and the NVRTC that made it ('13.0'; None for nvcc). Its image
    of a kernel is given to asyncrt-run as args[kernel] (None: it has none, why[kernel] says why;
    [] runs asyncrt's own)."""

    def __init__(self, label, nvrtc):
        self.label, self.nvrtc, self.args, self.why = label, nvrtc, {}, {}
        self.own_nvcc = {}  # kernel -> (holds the kernels of nvcc of its release, how), --own-nvcc
        self.verdict = {}   # kernel -> the library's compact images verdict, --compact


class Harness:
    def __init__(self, a):
        self.a = a
        self.tool = os.environ.get("ASYNCRT_RUN") or os.path.join(a.build, "tools/run/asyncrt-run")
        self.nvcc = os.environ.get("ASYNCRT_NVCC") or os.path.join(os.environ.get("CUDA_PATH", "/usr/local/cuda"),
                                                                   "bin/nvcc")
        self.started = time.time()
        self.processes = []  # (seconds, what) per asyncrt-run process
        self.rows = []       # one dict per kernel
        self.stopped = []    # kernels left out by the deadline
        self.manifest = None
        self.release = None  # --own-nvcc: (label of nvcc of NVRTC's release, its folder, its manifest)
        self.release_note = ""
        self.work = tempfile.mkdtemp(prefix="asyncrt-parity.")  # nvcc's images, unpacked images, outputs
        if a.compact:  # asyncrt's own image is NVRTC's, whatever this environment says; compact_image's is not
            os.environ["ASYNCRT_COMPACT_IMAGES"] = "0"

    def run(self, cmd, what):
        t = time.time()
        rc, doc, out, err = pc.run(cmd)
        self.processes.append((time.time() - t, what))
        return rc, doc, out, err

    # -- the image sets ------------------------------------------------------------------------
    def sets(self):
        if not self.a.images:
            m = re.search(r"NVRTC (\d+\.\d+)", pc.run([self.tool, "--version"])[2])
            nvrtc = m.group(1) if m else "?"
            if self.a.own_nvcc:
                self.own_nvcc_set(nvrtc)
            compact = [Candidate("compact (NVRTC %s)" % nvrtc, nvrtc)] if self.a.compact else []
            return Candidate("nvcc", None), [Candidate("asyncrt (NVRTC %s)" % nvrtc, nvrtc)] + compact
        self.folder = pc.image_folder(self.a.images, self.work)
        with open(os.path.join(self.folder, "manifest.json")) as f:
            self.manifest = json.load(f)

        def candidate(s):
            return Candidate(s["label"], ".".join(s["version"].split(".")[:2]) if s["compiler"] == "nvrtc" else None)

        ref = self.manifest["reference"]
        return (candidate(next(s for s in self.manifest["sets"] if s["label"] == ref)),
                [candidate(s) for s in self.manifest["sets"] if s["label"] != ref])

    def own_nvcc_set(self, nvrtc):
        """The kit's nvcc of NVRTC's release (major.minor), if it has one."""
        folder = pc.image_folder(self.a.own_nvcc, self.work)
        with open(os.path.join(folder, "manifest.json")) as f:
            manifest = json.load(f)
        nvccs = [s for s in manifest["sets"] if s["compiler"] == "nvcc" and s["label"] != manifest["reference"]]
        same = [s for s in nvccs if ".".join(s["version"].split(".")[:2]) == nvrtc]
        if same:
            self.release = (same[0]["label"], folder, manifest)
        else:
            self.release_note = ("%s has no nvcc of NVRTC %s's release but its reference (its others: %s): every "
                                 "difference fails" % (self.a.own_nvcc, nvrtc, ", ".join(s["label"] for s in nvccs) or "none"))

    def own_nvcc_check(self, ks, cand):
        """Per kernel: does asyncrt's image (emitted in prepare) hold the kit's nvcc's kernels?"""
        label, folder, manifest = self.release
        for k in ks:
            m = manifest["kernels"].get(k.name)
            kit, own = os.path.join(folder, label, k.name + ".cubin"), os.path.join(self.work, k.name + ".own.cubin")
            if not m or m["sha256"] != k.sha256:
                cand.own_nvcc[k.name] = (False, "no %s image of this source in %s" % (label, self.a.own_nvcc))
            elif not os.path.isfile(kit):
                cand.own_nvcc[k.name] = (False, "no %s image: %s" % (label, m.get("failed", {}).get(label, "missing")))
            elif not os.path.isfile(own):
                cand.own_nvcc[k.name] = (False, "asyncrt-run --emit-cubin wrote no image")
            else:
                same, how = cubin.same_kernels(kit, own)
                cand.own_nvcc[k.name] = (same, ("%s's kernels: " % label if same else "not %s's: " % label) + how)

    def prepare(self, ks, ref, cands):
        """Each set's image of each kernel; beforehand, in parallel: nvcc's images (default mode)
        and every file compiled once, so the timed processes hit asyncrt's cache (asyncrt-run
        compiles the source for its kernels' names even with --image)."""
        def one(k):
            emit = ["--emit-cubin", os.path.join(self.work, k.name + ".own.cubin")] if self.release else []
            pc.run([self.tool, k.path, "--arch", k.arch] + k.run_line + ["--compile-only"] + emit)
            if self.manifest:
                return
            cubin = os.path.join(self.work, k.name + ".cubin")
            cmd = [self.nvcc, "-cubin", "-arch=" + k.arch, "-std=c++17"] + k.nvcc_flags + ["-o", cubin, k.path]
            rc, _, _, err = pc.run(cmd)
            ref.args[k.name] = ["--image", cubin] if rc == 0 else None
            ref.why[k.name] = "nvcc failed: " + pc.last_line(err)
            cands[0].args[k.name] = []
            if self.a.compact:
                self.compact_image(k, cands[1])
        with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 4) as pool:
            list(pool.map(one, ks))
        if self.release:
            self.own_nvcc_check(ks, cands[0])
        for k in ks if self.manifest else []:
            m = self.manifest["kernels"].get(k.name)
            for c in [ref] + cands:
                path = os.path.join(self.folder, c.label, k.name + ".cubin")
                if not m or m["sha256"] != k.sha256:
                    c.why[k.name] = "no image of this source in %s (build_images.py again)" % self.a.images
                elif not os.path.isfile(path):
                    c.why[k.name] = "no %s image: %s" % (c.label, m.get("failed", {}).get(c.label, "missing"))
                else:
                    c.args[k.name] = ["--image", path]

    def compact_image(self, k, cand):
        """--compact: asyncrt-run's image of k with compact images on, and the library's verdict."""
        path = os.path.join(self.work, k.name + ".compact.cubin")
        env = dict(os.environ, ASYNCRT_COMPACT_IMAGES="1", ASYNCRT_LOG="1")
        rc, _, _, err = pc.run([self.tool, k.path, "--arch", k.arch] + k.run_line + ["--compile-only", "--emit-cubin",
                                                                                     path], env=env)
        verdicts = re.findall(r"^asyncrt: (?:.*?: )?((?:compact image|NVRTC's image|compact images off): .*)$", err, re.M)
        cand.verdict[k.name] = verdicts[-1] if verdicts else "no verdict logged"
        cand.args[k.name] = ["--image", path] if rc == 0 and os.path.isfile(path) else None
        cand.why[k.name] = "asyncrt-run with compact images on failed (exit %d): %s" % (rc, pc.last_line(err))

    def same_images(self, k, ref, cands):
        """{candidate label: the earlier set (the reference first) whose image of k runs the same
        (build_images.py's digest)}: those are not run again."""
        digests = self.manifest["kernels"].get(k.name, {}).get("digest", {}) if self.manifest else {}
        first, same = {}, {}
        for c in [ref] + cands:
            d = digests.get(c.label)
            if d and d in first:
                same[c.label] = first[d]
            elif d:
                first[d] = c.label
        return same

    # -- one kernel ----------------------------------------------------------------------------
    def kernel(self, k, ref, cands):
        row = {"kernel": k.name, "arch": k.arch, "sets": {}}
        work = os.path.join(self.work, k.name)  # the reference's outputs, gone after the kernel
        os.makedirs(work, exist_ok=True)
        try:
            return self.kernel_in(k, ref, cands, row, work)
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def kernel_in(self, k, ref, cands, row, work):
        ref_args = ref.args.get(k.name)
        if ref_args is None:
            row["error"] = ref.why.get(k.name, "no %s image" % ref.label)
            return row
        base = [self.tool, k.path, "--arch", k.arch] + k.run_line + ["--json"]
        outs, expects, stdout_mode = [], [], None
        for c in k.compare:
            buf, _, tol = c.partition(":")
            if buf == "stdout":
                stdout_mode = tol or "exact"
                continue
            ref_npy = os.path.join(work, "ref_%s.npy" % buf)
            outs += ["--out", "%s=%s" % (buf, ref_npy)]
            expects += ["--expect", "%s=%s%s" % (buf, ref_npy, ":" + tol if tol else "")]
        probe = ["--repeat", "5", "--warmup", "2"] if k.timed and not stdout_mode else []
        rc, doc, out, err = self.run(base + ref_args + outs + probe, "reference check")
        if rc != 0:
            row["error"] = "%s image failed (exit %d): %s" % (ref.label, rc, ((doc or {}).get("error") or pc.last_line(err))[:160])
            return row
        row["ref"] = {"attributes": attributes(doc), "bytes": doc.get("image_bytes"), "load_ms": doc.get("load_ms")}
        ref_stdout = stdout_lines(out, stdout_mode) if stdout_mode else None
        probe_ms = process_time(doc)
        batch = k.timed and probe_ms is not None and probe_ms < SHORT_MS
        timed = ["--repeat", "10", "--batch", str(BATCH), "--warmup", "20"] if batch else ["--repeat", "20", "--warmup", "3"]
        row["timing"] = "skip" if not k.timed else "batch %d" % BATCH if batch else "per launch"
        row["probe_ms"] = probe_ms
        same = self.same_images(k, ref, cands)
        args = {}
        for c in cands:
            row["sets"][c.label] = {"differences": [], "known": [], "times": []}
            args[c.label] = c.args.get(k.name) if c.label not in same else None
            if c.label not in same and args[c.label] is None:
                row["sets"][c.label]["error"] = c.why.get(k.name, "no image")
        # Reference, candidates, ROUNDS times, then the reference once more. A candidate's first
        # process checks its outputs, and is its first timing too where it prints nothing compared.
        rounds = self.a.rounds if k.timed else 1
        ref_times = []
        for r in range(rounds + 1):
            if k.timed:
                rc, doc, _, _ = self.run(base + ref_args + timed, "reference timing")
                ref_times.append(process_time(doc) if rc == 0 else None)
            if r == rounds:
                break
            for c in cands:
                s = row["sets"][c.label]
                if args[c.label] is None:
                    continue
                if r == 0 and not self.check(base + args[c.label] + expects, timed if k.timed and not stdout_mode else [],
                                             ref_stdout, stdout_mode, s):
                    args[c.label] = None
                    continue
                if k.timed and len(s["times"]) <= r:
                    rc, doc, _, _ = self.run(base + args[c.label] + timed, "candidate timing")
                    s["times"].append(process_time(doc) if rc == 0 else None)
        if k.timed:
            row["ref_times"] = ref_times
        for c in cands:
            if c.label in same:  # the figures of the set whose image it shares
                s, of = row["sets"][c.label], same[c.label]
                s["same_as"] = of
                if of == ref.label:
                    s.update(result="identical", attributes=row["ref"]["attributes"], bytes=row["ref"]["bytes"],
                             load_ms=row["ref"]["load_ms"])
                else:
                    s.update({key: row["sets"][of][key] for key in ("result", "attributes", "bytes", "load_ms",
                                                                    "times", "error") if key in row["sets"][of]})
            self.verdict(k, c, row)
        return row

    def check(self, cmd, timed, ref_stdout, stdout_mode, s):
        """A candidate's first process: its outputs against the reference's, its attributes."""
        rc, doc, out, err = self.run(cmd + timed, "candidate check")
        if rc not in (0, 6):
            s["error"] = "run failed (exit %d): %s" % (rc, ((doc or {}).get("error") or pc.last_line(err))[:160])
            return False
        same = rc == 0 and (ref_stdout is None or stdout_lines(out, stdout_mode) == ref_stdout)
        s["result"] = "identical" if same else "DIFFERENT"
        s["attributes"] = attributes(doc)
        s["bytes"], s["load_ms"] = doc.get("image_bytes"), doc.get("load_ms")
        if timed:
            s["times"].append(process_time(doc))
        return True

    def verdict(self, k, c, row):
        s = row["sets"][c.label]
        if "error" in s:
            s["differences"].append(s["error"])
            return
        excused = known(c.nvrtc, k.name)
        if s["result"] != "identical":
            s["differences"].append("results")
        for x, y in zip(row["ref"]["attributes"], s["attributes"]):
            for key in ATTRIBUTES:
                if x.get(key) != y.get(key):
                    (s["known"] if excused and key in excused[0] else s["differences"]).append(key)
        if "ref_times" in row and s.get("same_as") == self.ref.label:
            s["ratio"], s["band"] = 1.0, timing_verdict(row["ref_times"], row["ref_times"][1:])[1]
        elif "ref_times" in row:
            ratio, band, outside = timing_verdict(row["ref_times"], s["times"])
            s["ratio"], s["band"] = ratio, band
            if ratio is None:
                s["differences"].append("untimed")
            elif outside:
                (s["known"] if excused and "time" in excused[0] else s["differences"]).append("time")
        if excused and s["known"]:
            s["why"] = excused[1]
        self.release_verdict(k, c, s)

    def release_verdict(self, k, c, s):
        """--own-nvcc: where asyncrt's image holds nvcc's kernels of NVRTC's release (and is the
        image the check process loaded: the same size), its differences are that nvcc's."""
        same, how = c.own_nvcc.get(k.name, (False, ""))
        if not how:
            return
        s["own_nvcc"] = how
        own = os.path.join(self.work, k.name + ".own.cubin")
        if same and s.get("bytes") is not None and os.path.isfile(own) and s["bytes"] != os.path.getsize(own):
            same, s["own_nvcc"] = False, "the image loaded (%s bytes) is not the one read (%d)" % (
                s["bytes"], os.path.getsize(own))
        if same and s["differences"] and all(d in ATTRIBUTES + ("results", "time") for d in s["differences"]):
            s["release"], s["differences"] = s["differences"], []

    # -- reports -------------------------------------------------------------------------------
    def table(self, c):
        lines = ["### %s against %s" % (c.label, self.ref.label), "",
                 "| kernel | arch | result | time ratio | A/A band | %s ms | timed | regs | static shared | local | "
                 "max threads | image bytes | load ms | differences |" % self.ref.label,
                 "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for row in self.rows:
            s = row["sets"].get(c.label, {})
            if "error" in row or "error" in s:
                lines.append("| %s | %s | %s |%s" % (row["kernel"], row["arch"], row.get("error") or s["error"], " |" * 11))
                continue
            x, y = row["ref"]["attributes"][0], s["attributes"][0]
            pair = lambda key: str(x.get(key, "?")) if x.get(key) == y.get(key) else "%s/%s" % (x.get(key, "?"), y.get(key, "?"))
            ms = [t for t in row.get("ref_times", []) if t]
            fmt = lambda v, f: f % v if isinstance(v, (int, float)) else "-"
            notes = ", ".join(s["differences"] + ["%s (known)" % d for d in s["known"]] +
                              ["%s (%s makes the same)" % (d, self.release_name()) for d in s.get("release", [])]) or "none"
            if row["kernel"] in c.verdict:
                notes += "; " + c.verdict[row["kernel"]].split(", proven")[0][:150]
            lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s/%s | %s/%s | %s |" % (
                row["kernel"], row["arch"], s["result"] + (" (%s's image)" % s["same_as"] if s.get("same_as") else ""),
                fmt(s.get("ratio"), "%.3f"),
                "+-%.1f%%" % (100 * s["band"]) if s.get("band") is not None else "-",
                fmt(statistics.median(ms) if ms else None, "%.4f"), row["timing"], pair("regs"), pair("static_shared"),
                pair("local"), pair("max_threads"), row["ref"]["bytes"], s.get("bytes"),
                fmt(row["ref"]["load_ms"], "%.3f"), fmt(s.get("load_ms"), "%.3f"), notes))
        whys = sorted({s["why"] for r in self.rows for s in [r["sets"].get(c.label, {})] if s.get("why")})
        lines += [""] + ["Known: " + w for w in whys]
        if c.verdict:
            lines += ["", self.compact_line(c)]
        if self.release or self.release_note:
            lines += [""] + self.release_lines(c)
        return "\n".join(lines)

    def compact_line(self, c):
        """--compact: how many kernels got a compact image, and how many of those are within 2x of the
        reference's image bytes and cuModuleLoadData time (issue 37's bar)."""
        kept = [(r["ref"], r["sets"][c.label]) for r in self.rows if "error" not in r and "error" not in
                r["sets"].get(c.label, {"error": 1}) and c.verdict.get(r["kernel"], "").startswith("compact image:")]
        num = lambda v: isinstance(v, (int, float)) and v > 0
        within = lambda key: sum(num(ref.get(key)) and num(s.get(key)) and s[key] <= 2 * ref[key] for ref, s in kept)
        return ("Compact images: %d of %d kernels; within 2x of %s's image bytes: %d, of its cuModuleLoadData time: %d"
                % (len(kept), len(self.rows), self.ref.label, within("bytes"), within("load_ms")))

    def release_name(self):
        return "nvcc " + ".".join(self.release[0].split("-", 1)[1].split(".")[:2]) if self.release else ""

    def release_lines(self, c):
        """--own-nvcc: which kernels' images hold the kit's nvcc's kernels, and which do not."""
        if not self.release:
            return [self.release_note]
        ss = [(r["kernel"], r["sets"].get(c.label, {})) for r in self.rows]
        held = [k for k, s in ss if c.own_nvcc.get(k, (False,))[0] and "not the one read" not in s.get("own_nvcc", "")]
        others = ["%s (%s)" % (k, s.get("own_nvcc") or c.own_nvcc.get(k, (0, "not read"))[1]) for k, s in ss
                  if k not in held]
        return ["%s: asyncrt's image holds %s's kernels (tests/parity/cubin.py) for %d of %d kernels%s" % (
            self.release_name(), self.release[0], len(held), len(ss),
            "; not: " + "; ".join(others) if others else "")]

    def summary(self, cands):
        lines = ["| images | kernels | results differ | attributes differ | time outside band | known | "
                 "as nvcc of its release | failed |", "|---|---|---|---|---|---|---|---|"]
        for c in cands:
            ss = [r["sets"].get(c.label, {"differences": ["not run"], "known": []}) if "error" not in r
                  else {"differences": [r["error"]], "known": []} for r in self.rows]
            count = lambda keys: sum(any(d in keys for d in s["differences"]) for s in ss)
            lines.append("| %s | %d | %d | %d | %d | %d | %d | %d |" % (
                c.label, len(ss), count(("results",)), count(ATTRIBUTES), count(("time",)),
                sum(bool(s["known"]) for s in ss), sum(bool(s.get("release")) for s in ss),
                sum(bool(s["differences"]) for s in ss)))
        secs = [p[0] for p in self.processes]
        lines += ["", "%d asyncrt-run processes, %.2f s each on average; %.0f s in all%s" % (
            len(secs), statistics.mean(secs) if secs else 0, time.time() - self.started,
            "; not run (deadline): " + ", ".join(self.stopped) if self.stopped else "")]
        return "\n".join(lines)

    def write(self, cands):
        text = "\n\n".join([self.table(c) for c in cands] + [self.summary(cands)]) + "\n"
        with open(os.path.join(self.a.out, "parity.md"), "w") as f:
            f.write(text)
        with open(os.path.join(self.a.out, "parity.json"), "w") as f:
            json.dump({"reference": self.ref.label, "rows": self.rows, "stopped": self.stopped,
                       "processes": len(self.processes), "seconds": time.time() - self.started}, f, indent=1)
        return text

    def main(self):
        os.makedirs(self.a.out, exist_ok=True)
        self.ref, cands = self.sets()
        ks = list(pc.kernels(self.a.filter))
        self.prepare(ks, self.ref, cands)
        planned = 0
        for k in ks:
            same = self.same_images(k, self.ref, cands)
            runs = sum(c.label not in same and c.args.get(k.name) is not None for c in cands)
            planned += 2 + self.a.rounds * (1 + runs) if k.timed else 1 + runs
        print("%d kernels, %d image sets: about %d asyncrt-run processes (%.0f s to prepare)" % (
            len(ks), len(cands), planned, time.time() - self.started), flush=True)
        per_kernel = 0.0
        for n, k in enumerate(ks):
            spent = time.time() - self.started
            if self.a.deadline and n and spent + 1.5 * per_kernel > self.a.deadline:
                self.stopped = [x.name for x in ks[n:]]
                break
            t = time.time()
            row = self.kernel(k, self.ref, cands)
            per_kernel = max(per_kernel * 0.5, time.time() - t) if k.timed else per_kernel
            self.rows.append(row)
            diffs = {c.label: row["sets"][c.label]["differences"] for c in cands if c.label in row.get("sets", {})}
            print("%s %.1fs %s" % (k.name, time.time() - t, row.get("error") or
                                   "; ".join("%s: %s" % (l, ",".join(d) or "ok") for l, d in diffs.items())), flush=True)
            self.write(cands)
        text = self.write(cands)
        print(text)
        bad = any(r.get("error") or any(s["differences"] for s in r["sets"].values()) for r in self.rows)
        return 1 if bad or self.stopped else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build")
    ap.add_argument("out")
    ap.add_argument("--images", default="", help="a folder made by build_images.py: its sets against its reference")
    ap.add_argument("--own-nvcc", default="", help="build_images.py's images with nvcc of the release of the NVRTC "
                    "asyncrt-run uses: differences where asyncrt's image holds that nvcc's kernels are not failed")
    ap.add_argument("--compact", action="store_true", help="default mode: also asyncrt-run's image with compact "
                    "images on (ASYNCRT_COMPACT_IMAGES=1)")
    ap.add_argument("--filter", default="", help="only files whose name holds one of these comma-separated words")
    ap.add_argument("--rounds", type=int, default=3, help="timing rounds (reference and each candidate once per round)")
    ap.add_argument("--deadline", type=float, default=0, help="start no kernel that would end past S seconds")
    a = ap.parse_args()
    if a.images and a.own_nvcc:
        ap.error("--own-nvcc is for asyncrt's own images (the default mode), not with --images")
    if a.images and a.compact:
        ap.error("--compact is for asyncrt's own images (the default mode), not with --images")
    h = Harness(a)
    holder = pc.hold_device()
    try:
        return h.main()
    finally:
        if holder:
            holder.stdin.close()
            holder.wait()
        shutil.rmtree(h.work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
