#!/usr/bin/env python3
"""Runs asyncrt-probe and checks what it prints and returns.

usage: probe_cli.py TOOL arch-matrix | arch-rule | no-driver | no-device | usage | gpu
"""
import json
import re
import subprocess
import sys

SKIP = 77


def run(tool, *args, env=None):
    return subprocess.run([tool, *args], capture_output=True, text=True, env=env, timeout=600)


def fail(msg, p=None):
    if p is not None:
        msg += f"\n--- rc {p.returncode}\n--- stdout\n{p.stdout}\n--- stderr\n{p.stderr}"
    sys.exit(msg)


def arch_matrix(tool):
    p = run(tool, "--arch-matrix", "--json")
    if p.returncode != 0:
        fail("--arch-matrix failed", p)
    doc = json.loads(p.stdout)
    m = doc["arch_matrix"]
    if doc["devices"] != []:
        fail("--arch-matrix alone must probe no device", p)
    # Which NVRTC the search order chose, and why (runtime/base/nvrtc_loader.h).
    if "libnvrtc" not in (doc["nvrtc_path"] or "") or not doc["nvrtc_choice"]:
        fail("nvrtc_path / nvrtc_choice missing", p)
    for arch in ("sm_80", "sm_90", "sm_90a"):
        if arch not in m["archs"]:
            fail(f"{arch} missing from {m['archs']}")
    f = m["features"]
    want = {
        ("ldgsts", "sm_80"): True, ("mbarrier", "sm_80"): True,
        ("tma_tile", "sm_80"): False, ("mbarrier_tx", "sm_80"): False, ("clusters", "sm_80"): False,
        ("ldgsts", "sm_90"): True, ("tma_tile", "sm_90"): True, ("tma_im2col", "sm_90"): True,
        ("bulk_copy", "sm_90"): True, ("cluster_multicast", "sm_90"): True, ("dsmem", "sm_90"): True,
        ("sm90a", "sm_90"): False, ("sm90a", "sm_90a"): True,
    }
    if "sm_100a" in m["archs"]:
        want.update({("sm100a", "sm_100a"): True, ("sm100a", "sm_100"): False, ("sm90a", "sm_100a"): False})
    if "sm_75" in m["archs"]:
        want[("ldgsts", "sm_75")] = False
    for (feature, arch), expected in want.items():
        if f[feature][arch] is not expected:
            fail(f"{feature} on {arch}: {f[feature][arch]}, expected {expected}")
    for feature, row in f.items():
        if set(row) != set(m["archs"]):
            fail(f"{feature} lacks some archs: {sorted(row)}")
    # the table form says the same
    t = run(tool, "--arch-matrix")
    if t.returncode != 0 or "compiles for" not in t.stdout or "sm_90a" not in t.stdout:
        fail("--arch-matrix table", t)


def arch_rule(tool):
    """On a fake device (tests/runtime's fake_device_libcuda, compute capability
    9.0): the rule arch auto follows, in the library's sentence, for a CUDA 13.0
    driver and for a CUDA 12.8 one (older than the real NVRTC 13); and the
    NVRTCs the search found, one of them chosen."""
    import os
    for driver, target, words in (("13000", "sm_90", "knows compute capability 9.0 and is of the driver's major"),
                                  ("12080", None, "of a newer major version than the driver (CUDA 12.8)")):
        env = dict(os.environ, FAKE_DRIVER_VERSION=driver)
        p = run(tool, "--arch-matrix", "--device", "0", "--json", env=env)
        if p.returncode != 0:
            fail("--arch-matrix --device 0 on the fake device failed", p)
        doc = json.loads(p.stdout)
        d = doc["devices"][0]
        if d["auto_target"] != target or words not in d["auto_rule"]:
            fail(f"driver {driver}: auto_target {d['auto_target']}, rule '{d['auto_rule']}'; expected {target}, "
                 f"'{words}'", p)
        chosen = [c for c in doc["nvrtc_candidates"] if c["chosen"]]
        if len(chosen) != 1 or not chosen[0]["found_by"] or not chosen[0]["version"]:
            fail("nvrtc_candidates: expected exactly one chosen, with where and which version", p)
        t = run(tool, "--arch-matrix", "--device", "0", env=env)
        if t.returncode != 0 or f"arch auto on device 0: {d['auto_rule']}" not in t.stdout:
            fail("the table form must state the same rule", t)
        if f"* {chosen[0]['version']}" not in t.stdout:
            fail("the table form must list the chosen NVRTC", t)


def no_device_like(tool, expected_rc, what):
    p = run(tool)
    lines = p.stderr.strip().splitlines()
    if p.returncode != expected_rc or len(lines) != 1 or what not in lines[0] or p.stdout:
        fail(f"expected exit {expected_rc} and one line on stderr saying '{what}'", p)
    q = run(tool, "--json", "--check")
    if q.returncode != expected_rc:
        fail(f"--json --check: expected exit {expected_rc}", q)
    # --json still prints a document on stdout, saying why it has no devices
    doc = json.loads(q.stdout)
    if doc["exit_code"] != expected_rc or doc["devices"] != [] or what not in doc["error"]:
        fail(f"--json: expected a document with exit_code {expected_rc} and an error about '{what}'", q)
    # the arch matrix needs no device: with --check it is still printed, as tables and in --json
    m = run(tool, "--arch-matrix", "--check")
    if m.returncode != expected_rc or "compiles for" not in m.stdout or what not in m.stderr:
        fail(f"--arch-matrix --check: expected exit {expected_rc}, the matrix on stdout, '{what}' on stderr", m)


def usage(tool):
    p = run(tool, "--help")
    if p.returncode != 0 or "Exit codes" not in p.stdout or "--arch-matrix" not in p.stdout:
        fail("--help", p)
    v = run(tool, "--version")
    if v.returncode != 0 or not re.match(r"asyncrt-probe \S+ \(libasyncrt \S+, NVRTC (\d+\.\d|none)\)\n$", v.stdout):
        fail("--version: expected 'asyncrt-probe X (libasyncrt X, NVRTC M.m)'", v)
    for bad in (["--bogus"], ["--device"], ["--device", "x"], ["--device", "-1"]):
        q = run(tool, *bad)
        if q.returncode != 2 or q.stderr.count("see asyncrt-probe --help") != 1:
            fail(f"{bad} should be a usage error (exit 2) saying 'see --help' once", q)


def gpu(tool):
    p = run(tool, "--check", "--bench", "--json")
    if p.returncode == 4:  # no driver or no device (the exit-code table shared by the tools)
        print(p.stderr.strip())
        sys.exit(SKIP)
    doc = json.loads(p.stdout)
    for d in doc["devices"]:
        for key, f in d["features"].items():
            if f["status"] not in ("verified", "no"):
                fail(f"device {d['ordinal']}: {key} is {f['status']}: {f['reason']}", p)
        cc = d["compute_capability"]
        if (cc["major"], cc["minor"]) == (9, 0):
            lacking = [k for k, f in d["features"].items() if f["status"] != "verified" and k != "sm100a"]
            if lacking:
                fail(f"an sm_90 device must verify everything but sm100a; not: {lacking}", p)
        if d["bench"]["d2d_gbs"] is None or d["bench"]["paths"]["plain"] is None:
            fail("bench missing", p)
    if p.returncode != 0:
        fail("--check --bench failed", p)
    print(run(tool, "--check", "--bench").stdout)


PEER_KEYS = ("src", "dst", "can_access_peer", "performance_rank", "access_supported", "native_atomics",
             "cuda_array_access", "copy_gbs", "copy_bytes", "copy_runs", "copy_error")


def peer_matrix(doc, p):
    """Every ordered pair of the devices once, each with every key."""
    ordinals = [d["ordinal"] for d in doc["devices"]]
    pairs = [(q["src"], q["dst"]) for q in doc["peers"]]
    want = [(a, b) for a in ordinals for b in ordinals if a != b]
    if sorted(pairs) != sorted(want):
        fail(f"peer pairs {pairs}, expected {want}", p)
    for q in doc["peers"]:
        missing = [k for k in PEER_KEYS if k not in q]
        if missing:
            fail(f"peer {q.get('src')} -> {q.get('dst')} lacks {missing}", p)
    return doc["peers"]


def peers_fake(tool):
    """The fake driver's two devices: the driver's answers are in the matrix, and a
    copy it cannot make says why (the fake allocates nothing); one device, no matrix."""
    p = run(tool, "--json")
    if p.returncode != 0:
        fail("asyncrt-probe --json failed on the fake driver with two devices", p)
    doc = json.loads(p.stdout)
    for q in peer_matrix(doc, p):
        if q["can_access_peer"] is not True or q["performance_rank"] != 0 or q["native_atomics"] is not True:
            fail(f"the fake's peer answers are not in {q}", p)
        if q["copy_gbs"] is not None or "failed" not in q["copy_error"]:
            fail(f"a copy the fake cannot make is reported as {q}", p)
    t = run(tool)
    if t.returncode != 0 or "0 -> 1" not in t.stdout or "not measured: " not in t.stdout:
        fail("the text output lacks the peer matrix", t)
    one = run(tool, "--device", "1", "--json")
    if one.returncode != 0 or json.loads(one.stdout)["peers"] != []:
        fail("--device 1 printed a peer matrix", one)


def peers_gpu(tool):
    """Two or more GPUs: every pair answered and its copy measured at a plausible rate
    (above 1 GB/s: PCIe 3 x16 staged through the host gives ~10; NVLink, hundreds)."""
    p = run(tool, "--json")
    if p.returncode == 4:
        print(p.stderr.strip())
        sys.exit(SKIP)
    doc = json.loads(p.stdout)
    if len(doc["devices"]) < 2:
        print(f"peers-gpu: {len(doc['devices'])} device(s); the peer matrix needs 2 or more")
        sys.exit(SKIP)
    for q in peer_matrix(doc, p):
        for k in ("can_access_peer", "access_supported", "native_atomics", "cuda_array_access"):
            if q[k] is None:
                fail(f"peer {q['src']} -> {q['dst']}: {k} unknown", p)
        if q["performance_rank"] is None or q["performance_rank"] < 0:
            fail(f"peer {q['src']} -> {q['dst']}: no performance rank", p)
        if q["copy_gbs"] is None or not (1.0 < q["copy_gbs"] < 5000.0):
            fail(f"peer {q['src']} -> {q['dst']}: copy {q['copy_gbs']} GB/s ({q['copy_error']})", p)
    print(run(tool).stdout)


def main():
    tool, mode = sys.argv[1], sys.argv[2]
    if mode == "arch-matrix":
        arch_matrix(tool)
    elif mode == "arch-rule":
        arch_rule(tool)
    elif mode == "no-driver":
        no_device_like(tool, 4, "driver")  # the same code as no device, in every tool
    elif mode == "no-device":
        no_device_like(tool, 4, "device")
    elif mode == "usage":
        usage(tool)
    elif mode == "gpu":
        gpu(tool)
    elif mode == "peers":
        peers_fake(tool)
    elif mode == "peers-gpu":
        peers_gpu(tool)
    else:
        fail(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
