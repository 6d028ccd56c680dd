#!/usr/bin/env python3
"""run_parity.py on the CPU (ctest test_parity_harness): a fake asyncrt-run stands in for the GPU and
answers each process with planned times, attributes and results, so the harness's decisions are
held to what they must be: the A/A band, the 2% floor, batches for short kernels, attributes that
must match, NVRTC 13.0's known differences, results, and the exit code."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import parity_common as pc  # noqa: E402
import run_parity  # noqa: E402

# The fake asyncrt-run. PLAN (JSON, env FAKE_PLAN): kernel -> image set -> {"ms": [per-process times,
# cycled], "attrs": {...}, "mismatch": bool}; the set is the --image file's folder, or "own".
FAKE = r'''#!/usr/bin/env python3
import json, os, sys
args = sys.argv[1:]
if "--version" in args:
    print("asyncrt-run 0.1.0 (libasyncrt 0.1.0, NVRTC %s)" % os.environ.get("FAKE_NVRTC", "13.0")); sys.exit(0)
if "--compile-only" in args:
    sys.exit(0)
def opt(name, default=None):
    return args[args.index(name) + 1] if name in args else default
kernel = os.path.basename(args[0])[:-3]
image = opt("--image")
label = os.path.basename(os.path.dirname(image)) if image else "own"
if image and os.path.basename(image) == "nvcc.cubin":
    label = "nvcc"
plan = json.load(open(os.environ["FAKE_PLAN"])).get(kernel, {})
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
print(json.dumps({"status": "mismatch" if bad else "ok", "image_bytes": 1000, "load_ms": 0.1, "launches": [launch]}))
sys.exit(6 if bad else 0)
'''

KERNELS = "sgemm_warptiling,flash_attention_minimal,fp8_convert,cs_reduce7,cs_printf"


class Harness(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="parity-harness.")
        self.tool = os.path.join(self.dir, "asyncrt-run")
        with open(self.tool, "w") as f:
            f.write(FAKE)
        os.chmod(self.tool, 0o755)
        os.makedirs(os.path.join(self.dir, "state"))

    def images(self, labels, digests=None):
        """A build_images.py folder with empty images of KERNELS for labels (the first the reference);
        digests: {kernel: {label: digest}}."""
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
                open(os.path.join(d, label, k.name + ".cubin"), "w").close()
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
        self.assertIn("| nvrtc-13.0 | 5 | 1 | 1 | 0 | 1 | 0 |", text)
        self.assertIn("| nvrtc-13.5.37 | 5 | 0 | 1 | 1 | 0 | 0 |", text)

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
