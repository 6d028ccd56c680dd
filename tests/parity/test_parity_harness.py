#!/usr/bin/env python3
"""run_parity.py on the CPU (ctest test_parity_harness): a fake asyncrt-run stands in for the GPU and
answers each process with planned times, attributes and results, so the harness's decisions are
held to what they must be: the A/A band, the 2% floor, batches for short kernels, attributes that
must match, NVRTC 13.0's known differences, results, and the exit code."""
import json
import os
import struct
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import cubin  # noqa: E402
import parity_common as pc  # noqa: E402
import run_parity  # noqa: E402

# The fake asyncrt-run. PLAN (JSON, env FAKE_PLAN): kernel -> image set -> {"ms": [per-process times,
# cycled], "attrs": {...}, "mismatch": bool}; the set is the --image file's folder, or "own".
FAKE = r'''import json, os, sys
args = sys.argv[1:]
if "--version" in args:
    print("asyncrt-run 0.1.0 (libasyncrt 0.1.0, NVRTC %s)" % os.environ.get("FAKE_NVRTC", "13.0")); sys.exit(0)
def opt(name, default=None):
    return args[args.index(name) + 1] if name in args else default
kernel = os.path.basename(args[0])[:-3]
plan = json.load(open(os.environ["FAKE_PLAN"])).get(kernel, {})
if "--compile-only" in args and opt("--emit-cubin", "").endswith(".compact.cubin"):  # --compact's image
    with open(os.environ["FAKE_LOG"], "a") as log:
        log.write(json.dumps({"kernel": kernel, "label": "compact compile", "args": args,
                              "setting": os.environ.get("ASYNCRT_COMPACT_IMAGES")}) + "\n")
    open(opt("--emit-cubin"), "wb").write(b"compact")
    sys.stderr.write("asyncrt: compact images on: nvPTXCompiler 13.0.88 (x)\nasyncrt: %s: %s\n" % (args[0],
        plan.get("compact", {}).get("verdict", "compact image: 5504 bytes for NVRTC's 162104 (1174 unused library "
                                    "globals removed, 0 kept as 1-byte placeholders), proven the same program")))
    sys.exit(0)
if "--compile-only" in args:  # asyncrt's own image: plan[kernel]["own"]["image"], a file
    own = plan.get("own", {}).get("image")
    if own and "--emit-cubin" in args:
        open(opt("--emit-cubin"), "wb").write(open(own, "rb").read())
    sys.exit(0)
image = opt("--image")
label = os.path.basename(os.path.dirname(image)) if image else "own"
if image and os.path.basename(image) == "nvcc.cubin":
    label = "nvcc"
if image and image.endswith(".compact.cubin"):
    label = "compact"
p = plan.get(label, plan.get("*", {}))
with open(os.environ["FAKE_LOG"], "a") as log:
    log.write(json.dumps({"kernel": kernel, "label": label, "args": args}) + "\n")
count_file = os.path.join(os.environ["FAKE_STATE"], kernel + "." + label)
n = int(open(count_file).read()) if os.path.exists(count_file) else 0
times = p.get("ms", [1.0])
launch = {"kernel": kernel, "attributes": dict({"regs": 40, "static_shared": 0, "local": 0, "max_threads": 1024},
                                                **p.get("attrs", {}))}
if "--repeat" in args:
    open(count_file, "w").write(str(n + 1))
    launch["timing"] = {"repeat": int(opt("--repeat")), "batch": int(opt("--batch", "1")),
                        "median_ms": times[n % len(times)]}
for o in [args[i + 1] for i, a in enumerate(args) if a == "--out"]:
    open(o.split("=", 1)[1], "w").write("npy")
bad = "--expect" in args and p.get("mismatch")
size = p.get("loaded_bytes") or (os.path.getsize(p["image"]) if p.get("image") else 1000)
print(json.dumps({"status": "mismatch" if bad else "ok", "image_bytes": size, "load_ms": 0.1, "launches": [launch]}))
sys.exit(6 if bad else 0)
'''

KERNELS = "sgemm_warptiling,flash_attention_minimal,fp8_convert,cs_reduce7,cs_printf"


class Harness(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="parity-harness.")
        self.tool = os.path.join(self.dir, "asyncrt-run")
        with open(self.tool, "w") as f:
            # -S: no site import, a fifth of each of its few hundred starts (the harness's CPU time)
            f.write("#!%s -S\n%s" % (sys.executable, FAKE))
        os.chmod(self.tool, 0o755)
        os.makedirs(os.path.join(self.dir, "state"))

    def images(self, labels, digests=None, cubins=None):
        """A build_images.py folder with empty images of KERNELS for labels (the first the reference);
        digests: {kernel: {label: digest}}; cubins: {label: {kernel: bytes}}, images that are not empty."""
        d = os.path.join(self.dir, "images")
        sets = []
        for label in labels:
            os.makedirs(os.path.join(d, label), exist_ok=True)
            compiler, version = label.split("-", 1)
            sets.append({"label": label, "compiler": compiler, "version": version, "how": "test"})
        kernels = {}
        for k in pc.kernels(KERNELS):
            kernels[k.name] = {"arch": k.arch, "sha256": k.sha256, "digest": (digests or {}).get(k.name, {})}
            for label in labels:
                with open(os.path.join(d, label, k.name + ".cubin"), "wb") as f:
                    f.write((cubins or {}).get(label, {}).get(k.name, b""))
        with open(os.path.join(d, "manifest.json"), "w") as f:
            json.dump({"reference": labels[0], "sets": sets, "kernels": kernels}, f)
        return d

    def harness(self, plan, *extra, nvrtc="13.0"):
        with open(os.path.join(self.dir, "plan.json"), "w") as f:
            json.dump(plan, f)
        env = dict(os.environ, ASYNCRT_RUN=self.tool, FAKE_PLAN=os.path.join(self.dir, "plan.json"),
                   FAKE_LOG=os.path.join(self.dir, "log"), FAKE_STATE=os.path.join(self.dir, "state"),
                   FAKE_NVRTC=nvrtc, ASYNCRT_NVCC="/bin/true")
        out = os.path.join(self.dir, "out")
        p = subprocess.run([sys.executable, os.path.join(HERE, "run_parity.py"), "build", out, "--filter", KERNELS,
                            "--rounds", "3"] + list(extra), capture_output=True, text=True, env=env)
        with open(os.path.join(out, "parity.json")) as f:
            doc = json.load(f)
        with open(os.path.join(self.dir, "log")) as f:
            self.log = [json.loads(l) for l in f]
        return p.returncode, {r["kernel"]: r for r in doc["rows"]}, p.stdout

    def test_sweep_of_image_sets(self):
        d = self.images(["nvcc-13.0", "nvrtc-13.0", "nvrtc-13.5.37"])
        plan = {
            # NVRTC 13.0: slower, a known difference, but not other registers; 13.5: nvcc's.
            "sgemm_warptiling": {"nvcc-13.0": {"ms": [0.49, 0.491]}, "nvrtc-13.0": {"ms": [0.62], "attrs": {"regs": 128}},
                                 "nvrtc-13.5.37": {"ms": [0.49]}},
            # 13.5 reproducibly 15% slower in a quiet kernel: a difference; 13.0 within 2%.
            "flash_attention_minimal": {"nvcc-13.0": {"ms": [11.5, 11.51, 11.49]}, "nvrtc-13.0": {"ms": [11.7]},
                                        "nvrtc-13.5.37": {"ms": [13.2]}},
            # A kernel of microseconds whose reference swings +-8% between processes: +5% is noise.
            "fp8_convert": {"nvcc-13.0": {"ms": [0.006, 0.0066, 0.0061, 0.0065, 0.006]},
                            "nvrtc-13.0": {"ms": [0.0066, 0.0065, 0.0064]}, "nvrtc-13.5.37": {"ms": [0.0063]}},
            # Other results, and max threads unlike nvcc's where nothing excuses them.
            "cs_reduce7": {"nvcc-13.0": {"ms": [0.1]}, "nvrtc-13.0": {"ms": [0.1], "mismatch": True},
                           "nvrtc-13.5.37": {"ms": [0.1], "attrs": {"max_threads": 512}}},
        }
        rc, rows, text = self.harness(plan, "--images", d)
        self.assertEqual(rc, 1, text)
        s = rows["sgemm_warptiling"]["sets"]
        self.assertEqual(s["nvrtc-13.0"]["differences"], ["regs"])
        self.assertEqual(s["nvrtc-13.0"]["known"], ["time"])
        self.assertEqual(s["nvrtc-13.5.37"]["differences"] + s["nvrtc-13.5.37"]["known"], [])
        f = rows["flash_attention_minimal"]["sets"]
        self.assertEqual(f["nvrtc-13.5.37"]["differences"], ["time"])
        self.assertAlmostEqual(f["nvrtc-13.5.37"]["ratio"], 13.2 / 11.5, delta=0.01)
        self.assertEqual(f["nvrtc-13.0"]["differences"], [])
        p = rows["fp8_convert"]
        self.assertEqual(p["timing"], "batch 200")
        self.assertGreater(p["sets"]["nvrtc-13.0"]["band"], 0.05)
        self.assertGreater(p["sets"]["nvrtc-13.0"]["ratio"], 1.02)
        self.assertEqual(p["sets"]["nvrtc-13.0"]["differences"], [])
        timed = [e for e in self.log if e["kernel"] == "fp8_convert" and "--batch" in e["args"]]
        self.assertTrue(timed and all(e["args"][e["args"].index("--batch") + 1] == "200" for e in timed))
        r = rows["cs_reduce7"]["sets"]
        self.assertEqual(r["nvrtc-13.0"]["differences"], ["results"])
        self.assertEqual(r["nvrtc-13.5.37"]["differences"], ["max_threads"])
        self.assertEqual(rows["cs_reduce7"]["timing"], "per launch")
        # Each timed kernel: a reference check, then reference and candidates alternating for 3
        # rounds, and the reference once more; an untimed kernel (cs_printf) only its checks.
        order = [e["label"] for e in self.log if e["kernel"] == "flash_attention_minimal"]
        self.assertEqual(order, ["nvcc-13.0"] + ["nvcc-13.0", "nvrtc-13.0", "nvrtc-13.5.37"] * 3 + ["nvcc-13.0"])
        self.assertEqual(len([e for e in self.log if e["kernel"] == "cs_printf"]), 3)
        # Failed: the kernels with a difference nothing excuses.
        self.assertIn("| nvrtc-13.0 | 5 | 1 | 1 | 0 | 1 | 0 | 2 |\n", text)
        self.assertIn("| nvrtc-13.5.37 | 5 | 0 | 1 | 1 | 0 | 0 | 2 |\n", text)

    def test_same_images_run_once(self):
        # fp8_convert: 13.5's image is the reference's; sgemm_warptiling: 13.5's is 13.0's, whose
        # differences are known for NVRTC 13.0 only. From a .tar.xz, as the lead carries it.
        d = self.images(["nvcc-13.0", "nvrtc-13.0", "nvrtc-13.5.37"],
                        {"fp8_convert": {"nvcc-13.0": "a", "nvrtc-13.0": "b", "nvrtc-13.5.37": "a"},
                         "sgemm_warptiling": {"nvcc-13.0": "x", "nvrtc-13.0": "y", "nvrtc-13.5.37": "y"}})
        archive = os.path.join(self.dir, "images.tar.xz")
        subprocess.run(["tar", "cJf", archive, "-C", self.dir, "images"], check=True)
        plan = {"sgemm_warptiling": {"nvcc-13.0": {"ms": [0.49]}, "nvrtc-13.0": {"ms": [0.62]}}}
        rc, rows, text = self.harness(plan, "--images", archive)
        self.assertEqual(rc, 1, text)
        self.assertFalse([e for e in self.log if e["label"] == "nvrtc-13.5.37" and e["kernel"] in plan.keys() | {"fp8_convert"}])
        f = rows["fp8_convert"]["sets"]["nvrtc-13.5.37"]
        self.assertEqual((f["same_as"], f["result"], f["ratio"], f["differences"]), ("nvcc-13.0", "identical", 1.0, []))
        g = rows["sgemm_warptiling"]["sets"]
        self.assertEqual(g["nvrtc-13.5.37"]["same_as"], "nvrtc-13.0")
        self.assertEqual(g["nvrtc-13.5.37"]["differences"], ["time"])
        self.assertEqual((g["nvrtc-13.0"]["differences"], g["nvrtc-13.0"]["known"]), ([], ["time"]))
        self.assertIn("identical (nvrtc-13.0's image)", text)

    def test_nvrtc_in_use_decides_what_is_known(self):
        plan = {"sgemm_warptiling": {"nvcc": {"ms": [0.49]}, "own": {"ms": [0.62]}}}
        rc, rows, text = self.harness(plan, nvrtc="13.0")
        self.assertEqual(rc, 0, text)
        self.assertEqual(rows["sgemm_warptiling"]["sets"]["asyncrt (NVRTC 13.0)"]["known"], ["time"])
        self.assertIn("Known: NVRTC 13.0 addresses shared memory with 64-bit registers", text)
        rc, rows, text = self.harness(plan, nvrtc="13.5")
        self.assertEqual(rc, 1, text)
        self.assertEqual(rows["sgemm_warptiling"]["sets"]["asyncrt (NVRTC 13.5)"]["differences"], ["time"])

    def test_compact_images_from_the_flow(self):
        # --compact: a third set, asyncrt-run's image with ASYNCRT_COMPACT_IMAGES=1, emitted once and
        # loaded with --image; its bytes and load time beside nvcc's, its verdict in the notes.
        plan = {"sgemm_warptiling": {"*": {"loaded_bytes": 5000}, "own": {"loaded_bytes": 162104},
                                     "compact": {"loaded_bytes": 5504}},
                "cs_reduce7": {"compact": {"mismatch": True,
                                           "verdict": "NVRTC's image: no unused library global to remove"}}}
        rc, rows, text = self.harness(plan, "--compact", nvrtc="13.5")
        self.assertEqual(rc, 1, text)
        s = rows["sgemm_warptiling"]["sets"]["compact (NVRTC 13.5)"]
        self.assertEqual((s["bytes"], s["differences"]), (5504, []))
        self.assertEqual(rows["cs_reduce7"]["sets"]["compact (NVRTC 13.5)"]["differences"], ["results"])
        self.assertEqual(rows["cs_reduce7"]["sets"]["asyncrt (NVRTC 13.5)"]["differences"], [])
        made = [e for e in self.log if e["label"] == "compact compile"]
        self.assertEqual([e["setting"] for e in made], ["1"] * len(KERNELS.split(",")))
        loaded = [e for e in self.log if e["label"] == "compact"]
        self.assertTrue(loaded and all(e["args"][e["args"].index("--image") + 1].endswith(".compact.cubin")
                                       for e in loaded))
        self.assertIn("; compact image: 5504 bytes for NVRTC's 162104 (1174 unused library globals removed, 0 kept "
                      "as 1-byte placeholders) |", text)
        self.assertIn("; NVRTC's image: no unused library global to remove |", text)
        self.assertIn("| compact (NVRTC 13.5) | 5 | 1 | 0 | 0 | 0 | 0 | 1 |", text)
        self.assertIn("Compact images: 4 of 5 kernels; within 2x of nvcc's image bytes: 4, of its cuModuleLoadData "
                      "time: 4", text)

    def test_stale_image_is_refused(self):
        d = self.images(["nvcc-13.0", "nvrtc-13.5.37"])
        with open(os.path.join(d, "manifest.json")) as f:
            m = json.load(f)
        m["kernels"]["cs_reduce7"]["sha256"] = "0" * 64
        with open(os.path.join(d, "manifest.json"), "w") as f:
            json.dump(m, f)
        rc, rows, text = self.harness({}, "--images", d)
        self.assertEqual(rc, 1)
        self.assertIn("build_images.py again", rows["cs_reduce7"]["error"])


    def test_own_nvcc_makes_the_same(self):
        # NVRTC 13.1 in use; the kit has nvcc 13.1's images. sgemm_warptiling: asyncrt's image holds
        # nvcc 13.1's kernel (its bank-4 offsets aside), other registers and time than nvcc 13.0:
        # 13.1's, not failed. flash_attention_minimal: other code than nvcc 13.1's, slower: fails.
        # fp8_convert: nvcc 13.1's kernel, but the process loaded another image: fails.
        same, shifted, other = cubin_of(), cubin_of(shift=True), cubin_of(regs=40)
        kit = self.images(["nvcc-13.0", "nvcc-13.1.115"], cubins={"nvcc-13.1.115": {
            "sgemm_warptiling": same, "flash_attention_minimal": same, "fp8_convert": same}})
        own = {}
        for name, data in (("sgemm", shifted), ("flash", other), ("fp8", same)):
            own[name] = os.path.join(self.dir, name + ".cubin")
            with open(own[name], "wb") as f:
                f.write(data)
        plan = {"sgemm_warptiling": {"nvcc": {"ms": [0.49]}, "own": {"ms": [0.62], "image": own["sgemm"],
                                                                     "attrs": {"regs": 128}}},
                "flash_attention_minimal": {"nvcc": {"ms": [11.5]}, "own": {"ms": [13.2], "image": own["flash"]}},
                "fp8_convert": {"nvcc": {"ms": [0.006]}, "own": {"ms": [0.0075], "image": own["fp8"],
                                                                 "loaded_bytes": 12345}}}
        rc, rows, text = self.harness(plan, "--own-nvcc", kit, nvrtc="13.1")
        self.assertEqual(rc, 1, text)
        label = "asyncrt (NVRTC 13.1)"
        g = rows["sgemm_warptiling"]["sets"][label]
        self.assertEqual((g["differences"], g["release"]), ([], ["regs", "time"]))
        self.assertIn("regs (nvcc 13.1 makes the same), time (nvcc 13.1 makes the same)", text)
        f = rows["flash_attention_minimal"]["sets"][label]
        self.assertEqual(f["differences"], ["time"])
        self.assertIn("registers", f["own_nvcc"])
        p = rows["fp8_convert"]["sets"][label]
        self.assertEqual(p["differences"], ["time"])
        self.assertIn("not the one read", p["own_nvcc"])
        self.assertIn("holds nvcc-13.1.115's kernels (tests/parity/cubin.py) for 1 of 5 kernels", text)
        self.assertIn("| %s | 5 | 0 | 0 | 2 | 0 | 1 | 2 |\n" % label, text)
        # Without flash and fp8: nothing fails.
        rc, rows, text = self.harness({"sgemm_warptiling": plan["sgemm_warptiling"]}, "--own-nvcc", kit, nvrtc="13.1")
        self.assertEqual(rc, 0, text)
        # The kit's nvcc is of another release than NVRTC in use: every difference fails.
        rc, rows, text = self.harness({"sgemm_warptiling": plan["sgemm_warptiling"]}, "--own-nvcc", kit, nvrtc="13.2")
        self.assertEqual(rc, 1, text)
        self.assertIn("has no nvcc of NVRTC 13.2's release", text)


def cubin_of(shift=False, regs=168, extra=False):
    """A small CUBIN (ELF64): kernel k (registers in its flags) loading the address of global g
    from constant bank 4 (ULDC.64), g in .nv.global.init. shift: NVRTC's way, 4 globals of its
    own first, so k loads g from another bank-4 offset; extra: g's initial bytes other."""
    names = ["g"] if not shift else ["s0", "s1", "s2", "s3", "g"]
    off = 8 * names.index("g")
    uldc = 0xab9 | (off // 4) << 40 | 4 << 54 | 0x0fe2 << 104
    text = bytes(16) + uldc.to_bytes(16, "little") + bytes(16)
    init = b"".join((b"\7" if (n == "g" and extra) else b"\1") * 8 for n in names)
    strtab = b"\0k\0" + b"".join(n.encode() + b"\0" for n in names)
    syms = [bytes(24), struct.pack("<IBBHQQ", 1, 0x12, 0, 4, 0, len(text))]
    at = 3
    for i, n in enumerate(names):
        syms.append(struct.pack("<IBBHQQ", at, 0x11, 0, 6, 8 * i, 8))
        at += len(n) + 1
    rela = b"".join(struct.pack("<QQq", 8 * i, (2 + i) << 32 | 2, 0) for i in range(len(names)))
    sections = [("", 0, 0, b"", 0, 0), (".shstrtab", 3, 0, None, 0, 0), (".strtab", 3, 0, strtab, 0, 0),
                (".symtab", 2, 0, b"".join(syms), 2, 1), (".text.k", 1, 6 | regs << 24, text, 3, 0),
                (".nv.constant4", 1, 2, bytes(8 * len(names)), 0, 0), (".nv.global.init", 1, 3, init, 0, 0),
                (".rela.nv.constant4", 4, 0x40, rela, 3, 5)]
    shstr = b"\0" + b"".join(s[0].encode() + b"\0" for s in sections[1:])
    sections[1] = (".shstrtab", 3, 0, shstr, 0, 0)
    body, offsets = b"", []
    for s in sections:
        offsets.append(64 + len(body))
        body += s[3]
    heads = b""
    for i, (name, kind, flags, data, link, info) in enumerate(sections):
        name_at = shstr.index(name.encode() + b"\0") if name else 0
        heads += struct.pack("<IIQQQQIIQQ", name_at, kind, flags, 0, offsets[i], len(data), link, info, 8,
                             24 if kind in (2, 4) else 0)
    head = b"\x7fELF\2\1\1" + bytes(9) + struct.pack("<HHIQQQIHHHHHH", 2, 190, 1, 0, 0, 64 + len(body), 0, 64, 0,
                                                        0, 64, len(sections), 1)
    return head + body + heads


class SameKernels(unittest.TestCase):
    def same(self, a, b):
        d = tempfile.mkdtemp(prefix="parity-cubin.")
        paths = [os.path.join(d, n) for n in ("a.cubin", "b.cubin")]
        for path, data in zip(paths, (a, b)):
            with open(path, "wb") as f:
                f.write(data)
        return cubin.same_kernels(*paths)

    def test_what_counts_as_the_same_kernels(self):
        self.assertEqual(self.same(cubin_of(), cubin_of()), (True, "the same code byte for byte"))
        # NVRTC's extra globals move g's address to another bank-4 offset: still nvcc's kernel.
        ok, how = self.same(cubin_of(), cubin_of(shift=True))
        self.assertTrue(ok, how)
        self.assertIn("bank-4 offsets", how)
        self.assertEqual(self.same(cubin_of(), cubin_of(regs=40)), (False, "k: registers 168/40"))
        self.assertEqual(self.same(cubin_of(), cubin_of(shift=True, extra=True)), (False, "the global g"))


class Verdict(unittest.TestCase):
    def test_band_and_floor(self):
        # Quiet reference: a 3% slower candidate is a difference; 1.5% is not (the 2% floor).
        self.assertTrue(run_parity.timing_verdict([1, 1, 1, 1], [1.03, 1.03, 1.03])[2])
        self.assertFalse(run_parity.timing_verdict([1, 1, 1, 1], [1.015, 1.015, 1.015])[2])
        # The reference against itself moved 10%: 5% is inside the band.
        ratio, band, outside = run_parity.timing_verdict([1, 1.1, 1, 1.1], [1.1, 1.1, 1.1])
        self.assertAlmostEqual(band, 0.1, places=6)
        self.assertFalse(outside)


if __name__ == "__main__":
    unittest.main()
