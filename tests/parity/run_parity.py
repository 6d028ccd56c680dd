#!/usr/bin/env python3
"""The GPU half of the nvcc parity harness (issue 22).

For every kernel file under tests/parity/{tricky,corpus}/ (headers in
corpus/README.md): nvcc -cubin builds the file, asyncrt-run runs nvcc's image
(--image) on the file's run line and saves the outputs, then runs asyncrt's own
image on the same inputs and checks its outputs against nvcc's (--expect).
Then both images are timed, alternating A B A B, each process timing --repeat
launches after a warm-up; a kernel's time is the median over all of them.
The driver's attributes (cuFuncGetAttribute) and each image's size and
cuModuleLoadData time come from asyncrt-run's --json.

Prints one table and exits 1 on any difference in results, static shared or
local memory, max threads per block, or a time outside +-2% of nvcc's; a
register count unlike nvcc's is shown (NVRTC's front end makes other PTX
than nvcc's for some kernels, see test_parity_elf.c) and counted, and fails
only with --strict-registers.

usage: run_parity.py BUILD_DIR OUT_DIR [--filter SUBSTRING] [--rounds N] [--repeat N]
"""
import argparse
import json
import os
import re
import shlex
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def header(text, key):
    m = re.search(r"^// parity: %s=(.*)$" % re.escape(key), text, re.M)
    return m.group(1).strip() if m else ""


def kernel_files(filt):
    for folder in ("tricky", "corpus"):
        d = os.path.join(HERE, folder)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if name.endswith(".cu") and (not filt or any(w in name for w in filt.split(","))):
                yield os.path.join(d, name)


def run(cmd, out_json=True, timeout=300):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    doc = None
    if out_json:
        try:
            doc = json.loads(p.stdout[p.stdout.find("{"):]) if "{" in p.stdout else None
        except ValueError:
            doc = None
    return p.returncode, doc, p.stdout, p.stderr


def first_launch(doc):
    if not doc:
        return {}
    launches = doc.get("launches") or [doc]
    return launches[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("out")
    ap.add_argument("--filter", default="", help="only files whose name holds one of these comma-separated words")
    ap.add_argument("--rounds", type=int, default=2, help="A B pairs of timing processes")
    ap.add_argument("--repeat", type=int, default=20, help="timed launches per process")
    ap.add_argument("--strict-registers", action="store_true")
    a = ap.parse_args()
    tool = os.path.join(a.build, "tools/run/asyncrt-run")
    nvcc = os.environ.get("ASYNCRT_NVCC") or os.path.join(os.environ.get("CUDA_PATH", "/usr/local/cuda"), "bin/nvcc")
    os.makedirs(a.out, exist_ok=True)
    rows, failures, register_notes = [], 0, 0
    for path in kernel_files(a.filter):
        name = os.path.basename(path)[:-3]
        text = open(path).read()
        arch = header(text, "arch").split()[0]
        run_line = shlex.split(header(text, "run"))
        compare = header(text, "compare").split()
        timing = header(text, "timing")
        work = os.path.join(a.out, "work", name)
        os.makedirs(work, exist_ok=True)
        cubin = os.path.join(work, "nvcc.cubin")
        cmd = [nvcc, "-cubin", "-arch=" + arch, "-std=c++17"] + shlex.split(header(text, "nvcc")) + ["-o", cubin, path]
        rc, _, _, err = run(cmd, out_json=False)
        row = {"kernel": name, "arch": arch}
        if rc != 0:
            row["result"] = "nvcc failed: " + err.strip().splitlines()[-1] if err.strip() else "nvcc failed"
            print(name, row["result"], flush=True)
            rows.append(row)
            failures += 1
            continue
        base = [tool, path, "--arch", arch] + run_line
        outs, expects, stdout_cmp = [], [], None
        for c in compare:
            buf, _, tol = c.partition(":")
            if buf == "stdout":
                stdout_cmp = tol or "exact"
                continue
            ref = os.path.join(work, "nvcc_%s.npy" % buf)
            outs += ["--out", "%s=%s" % (buf, ref)]
            expects += ["--expect", "%s=%s%s" % (buf, ref, ":" + tol if tol else "")]
        rc_n, doc_n, out_n, err_n = run(base + ["--image", cubin, "--json"] + outs)
        rc_a, doc_a, out_a, err_a = run(base + ["--json"] + expects)
        if rc_n != 0 or rc_a not in (0, 6):
            row["result"] = "run failed (nvcc image %d, asyncrt %d): %s" % (
                rc_n, rc_a, ((doc_n or {}).get("error") or (doc_a or {}).get("error") or err_n or err_a).strip()[:160])
            failures += 1
            print(name, row["result"], flush=True)
            rows.append(row)
            continue
        same = rc_a == 0
        if stdout_cmp:
            strip = lambda s: [l for l in s.splitlines() if not l.startswith("{")]
            x, y = strip(out_n), strip(out_a)
            if stdout_cmp == "sorted":
                x, y = sorted(x), sorted(y)
            same = same and x == y
        row["result"] = "identical" if same else "DIFFERENT"
        failures += not same
        ln, la = first_launch(doc_n), first_launch(doc_a)
        an, aa = ln.get("attributes", {}), la.get("attributes", {})
        row["attrs"] = (an, aa)
        row["bytes"] = (doc_n.get("image_bytes"), doc_a.get("image_bytes"))
        row["load_ms"] = (doc_n.get("load_ms"), doc_a.get("load_ms"))
        diffs = [k for k in ("static_shared", "local", "max_threads") if an.get(k) != aa.get(k)]
        if diffs:
            row["result"] += ", " + "/".join(diffs) + " differ"
            failures += 1
        if an.get("regs") != aa.get("regs"):
            register_notes += 1
            failures += a.strict_registers
        if timing.startswith("skip"):
            row["ratio"] = None
        else:
            t = {"n": [], "a": []}
            timed = ["--repeat", str(a.repeat), "--warmup", "3", "--json"]
            for _ in range(a.rounds):
                for who, extra in (("n", ["--image", cubin]), ("a", [])):
                    rc, doc, _, err = run(base + extra + timed)
                    l = first_launch(doc)
                    if rc == 0 and l.get("timing"):
                        t[who].append(l["timing"]["median_ms"])
            if t["n"] and t["a"]:
                mn, ma = statistics.median(t["n"]), statistics.median(t["a"])
                row["ms"] = (mn, ma)
                row["ratio"] = ma / mn if mn > 0 else None
                if row["ratio"] is not None and abs(row["ratio"] - 1) > 0.02:
                    row["result"] += ", time %+.1f%%" % (100 * (row["ratio"] - 1))
                    failures += 1
            else:
                row["ratio"] = None
                row["result"] += ", untimed"
        rows.append(row)
        print(name, row.get("result"), row.get("ratio"), flush=True)

    lines = ["| kernel | arch | result | asyncrt/nvcc time | nvcc ms | regs nvcc/asyncrt | static shared | local | "
             "max threads | image bytes nvcc/asyncrt | cuModuleLoadData ms nvcc/asyncrt |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        an, aa = r.get("attrs", ({}, {}))
        pair = lambda k: "%s/%s" % (an.get(k, "?"), aa.get(k, "?")) if an.get(k) != aa.get(k) else str(an.get(k, "?"))
        ratio = "%.3f" % r["ratio"] if r.get("ratio") else "-"
        nms = "%.4f" % r["ms"][0] if r.get("ms") else "-"
        b = r.get("bytes", (None, None))
        lm = r.get("load_ms", (None, None))
        fmt = lambda v: "%.3f" % v if isinstance(v, float) else str(v)
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s/%s | %s/%s |" % (
            r["kernel"], r["arch"], r.get("result"), ratio, nms, pair("regs"), pair("static_shared"), pair("local"),
            pair("max_threads"), b[0], b[1], fmt(lm[0]), fmt(lm[1])))
    lines.append("")
    lines.append("%d kernels: %d differences; %d with registers unlike nvcc's%s" % (
        len(rows), failures, register_notes, "" if a.strict_registers else " (shown, not failed)"))
    table = "\n".join(lines)
    print(table)
    with open(os.path.join(a.out, "parity.md"), "w") as f:
        f.write(table + "\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
