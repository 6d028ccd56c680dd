#!/usr/bin/env python3
"""tools/docs/nvtx_timeline.py on a made-up `nsys export --type sqlite` file
of the tables and columns it reads (nsys 2024-2025: NVTX_EVENTS with textId
and domainId, StringIds, CUPTI_ACTIVITY_KIND_KERNEL): it finds the asyncrt
domain's ranges (not another domain's), nests them, and writes a PNG.
Skipped (77) without matplotlib."""
import os
import sqlite3
import subprocess
import sys
import tempfile

try:
    import matplotlib  # noqa: F401
except ImportError:
    print("skipped: no matplotlib (pip install matplotlib)")
    sys.exit(77)

script = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "docs", "nvtx_timeline.py")
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "cold.sqlite")
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)")
    db.execute("CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, text TEXT, "
               "globalTid INTEGER, textId INTEGER, domainId INTEGER)")
    db.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, shortName INTEGER)")
    db.executemany("INSERT INTO StringIds VALUES (?, ?)", [(1, "compile scale.cu (sm_90)"), (2, "scale")])
    ms = 1_000_000
    db.executemany("INSERT INTO NVTX_EVENTS VALUES (?, ?, ?, ?, ?, ?, ?)", [
        (0, None, 75, "asyncrt", 1, None, 7),
        (0, None, 75, "other", 1, None, 8),
        (1 * ms, 2 * ms, 59, "cache lookup scale.cu", 1, None, 7),
        (2 * ms - 10, None, 34, "cache scale.cu: miss", 1, None, 7),
        (3 * ms, 900 * ms, 59, None, 1, 1, 7),            # its text in StringIds
        (4 * ms, 5 * ms, 59, "someone else's range", 1, None, 8),
        (901 * ms, 905 * ms, 59, "load scale.cu (sm_90)", 1, None, 7),
        (906 * ms, 907 * ms, 59, "launch scale", 1, None, 7),
    ])
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, ?)", (907 * ms, 908 * ms, 2))
    db.commit()
    db.close()
    png = os.path.join(tmp, "t.png")
    out = subprocess.run([sys.executable, script, path, path, "-o", png, "--titles", "cold,warm"],
                         capture_output=True, text=True)
    print(out.stdout, out.stderr)
    assert out.returncode == 0, out.returncode
    assert "cold: 4 ranges, 1 marks, 1 kernels" in out.stdout, out.stdout
    if os.environ.get("KEEP_PNG"):
        import shutil
        shutil.copy(png, os.environ["KEEP_PNG"])
    with open(png, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
print("ok")
