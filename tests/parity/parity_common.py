"""What the parity scripts share: the kernel files under tests/parity/{tricky,corpus} and their
'// parity: KEY=VALUE' header lines (corpus/README.md), and running a tool that prints JSON."""
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))


def header(text, key):
    m = re.search(r"^// parity: %s=(.*)$" % re.escape(key), text, re.M)
    return m.group(1).strip() if m else ""


class Kernel:
    """One kernel file: its name (the file's, less .cu), path, arch, run line, compare list, timing."""

    def __init__(self, path):
        self.path = path
        self.name = os.path.basename(path)[:-3]
        with open(path, "rb") as f:
            data = f.read()
        self.sha256 = hashlib.sha256(data).hexdigest()
        text = data.decode("utf-8", "replace")
        self.arch = (header(text, "arch").split() or [""])[0]
        self.run_line = shlex.split(header(text, "run"))
        self.compare = header(text, "compare").split()
        self.timed = not header(text, "timing").startswith("skip")
        self.nvcc_flags = shlex.split(header(text, "nvcc"))


def kernels(filt=""):
    """Every kernel file, tricky/ then corpus/, by name; filt: comma-separated words, one of which
    the file name must hold."""
    words = [w for w in filt.split(",") if w]
    for folder in ("tricky", "corpus"):
        d = os.path.join(HERE, folder)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if name.endswith(".cu") and (not words or any(w in name for w in words)):
                yield Kernel(os.path.join(d, name))


def run(cmd, env=None, timeout=300):
    """(exit code, the JSON object the tool printed or None, stdout, stderr)."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return 124, None, "", "timed out after %d s: %s" % (timeout, " ".join(cmd[:3]))
    doc = None
    start = p.stdout.find("{")
    if start >= 0:
        try:
            doc = json.loads(p.stdout[start:])
        except ValueError:
            doc = None
    return p.returncode, doc, p.stdout, p.stderr


def last_line(text):
    lines = [l for l in (text or "").strip().splitlines() if l.strip()]
    return lines[-1][:200] if lines else ""


def version_text(v):
    """13050 -> '13.5' (asyncrt's major*1000 + minor*10)."""
    return "%d.%d" % (v // 1000, v % 1000 // 10) if isinstance(v, int) and v > 0 else "?"


def image_folder(images, work):
    """The folder of build_images.py's images: IMAGES itself, or where its .tar.xz is unpacked
    (under work)."""
    if os.path.isdir(images):
        return images
    to = os.path.join(work, "images")
    shutil.rmtree(to, ignore_errors=True)
    os.makedirs(to)
    with tarfile.open(images) as t:
        if hasattr(tarfile, "data_filter"):
            t.extractall(to, filter="data")
        else:
            t.extractall(to)
    found = sorted(r for r, _, fs in os.walk(to) if "manifest.json" in fs)
    if not found:
        raise SystemExit("%s: no manifest.json inside" % images)
    return found[0]


HOLD = r"""
import ctypes, sys
cuda = ctypes.CDLL("libcuda.so.1")
dev, ctx = ctypes.c_int(), ctypes.c_void_p()
if cuda.cuInit(0) or cuda.cuDeviceGet(ctypes.byref(dev), 0) or cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev):
    sys.exit(1)
print("held", flush=True)
sys.stdin.read()
"""


def hold_device():
    """A process holding device 0's primary context, idle, while the harness runs: each of its
    hundreds of asyncrt-run processes then starts on an initialised driver, where persistence
    mode may be off (no setting is changed). None where there is no driver; close() ends it."""
    try:
        p = subprocess.Popen([sys.executable, "-c", HOLD], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True)
    except OSError:
        return None
    if p.stdout.readline().strip() != "held":
        p.wait()
        return None
    return p
