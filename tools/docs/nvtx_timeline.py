#!/usr/bin/env python3
"""An nsys timeline of asyncrt's NVTX ranges as a PNG, for the README.

    python3 tools/docs/nvtx_timeline.py cold.sqlite warm.sqlite -o timeline.png

Each SQLITE is `nsys export --type sqlite` of one profiled run (gpu-check.sh's
nsys stage records a cold and a warm asyncrt-run). One panel per file: the
"asyncrt" domain's ranges, one lane per nesting depth and coloured by kind
(compile, cache lookup, link, load, launch; the cache tier that answered is the
mark inside the lookup), and the GPU's kernels below them, on one time axis in
milliseconds from the run's first range. Needs matplotlib (pip install
matplotlib); only the standard library otherwise.
"""
import argparse
import os
import sqlite3
import sys

KINDS = [("compile", "#1f77b4"), ("cache", "#2ca02c"), ("link", "#9467bd"), ("load", "#ff7f0e"),
         ("launch", "#d62728")]
MARK, PUSH_POP, START_END, DOMAIN = 34, 59, 60, 75


def kind_colour(text):
    for kind, colour in KINDS:
        if text.startswith(kind):
            return colour
    return "#7f7f7f"


def tables(db):
    return {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def columns(db, table):
    return {row[1] for row in db.execute(f"PRAGMA table_info({table})")}


def read_run(path):
    """The asyncrt domain's ranges and marks, and the kernels, in ns."""
    db = sqlite3.connect(path)
    have = tables(db)
    if "NVTX_EVENTS" not in have:
        sys.exit(f"{path}: no NVTX_EVENTS table (was the run profiled with --trace=nvtx?)")
    strings = dict(db.execute("SELECT id, value FROM StringIds")) if "StringIds" in have else {}
    nvtx = columns(db, "NVTX_EVENTS")
    text_id = "textId" if "textId" in nvtx else "NULL"
    domain_id = "domainId" if "domainId" in nvtx else "0"
    rows = db.execute(f"SELECT start, end, eventType, text, {text_id}, {domain_id}, globalTid FROM NVTX_EVENTS "
                      "ORDER BY start").fetchall()
    domains = {}
    for start, end, kind, text, tid_text, dom, tid in rows:
        if kind == DOMAIN:
            domains[dom] = text if text is not None else strings.get(tid_text, "")
    ours = {d for d, name in domains.items() if name == "asyncrt"}
    ranges, marks = [], []
    for start, end, kind, text, tid_text, dom, tid in rows:
        if ours and dom not in ours:
            continue
        text = text if text is not None else strings.get(tid_text, "?")
        if kind in (PUSH_POP, START_END) and end is not None:
            ranges.append((start, end, text, tid))
        elif kind == MARK:
            marks.append((start, text, tid))
    kernels = []
    if "CUPTI_ACTIVITY_KIND_KERNEL" in have:
        name_col = "shortName" if "shortName" in columns(db, "CUPTI_ACTIVITY_KIND_KERNEL") else "demangledName"
        for start, end, name in db.execute(f"SELECT start, end, {name_col} FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start"):
            kernels.append((start, end, strings.get(name, str(name))))
    db.close()
    return ranges, marks, kernels


def lanes_of(ranges):
    """A lane per nesting depth: a range inside an open one goes one lane down."""
    open_ends, lanes = [], []
    for start, end, text, tid in ranges:
        while open_ends and open_ends[-1] <= start:
            open_ends.pop()
        lanes.append(len(open_ends))
        open_ends.append(end)
    return lanes


def draw(ax, title, ranges, marks, kernels):
    t0 = min([r[0] for r in ranges] + [m[0] for m in marks] + [k[0] for k in kernels] or [0])
    ms = lambda ns: (ns - t0) / 1e6
    lanes = lanes_of(ranges)
    depth = max(lanes, default=0) + 1
    span = max([ms(r[1]) for r in ranges] + [ms(k[1]) for k in kernels] or [1])
    for (start, end, text, _), lane in zip(ranges, lanes):
        y = depth - lane
        ax.barh(y, ms(end) - ms(start), left=ms(start), height=0.8, color=kind_colour(text), edgecolor="black",
                linewidth=0.4)
        if ms(end) - ms(start) > 0.06 * span:  # a name where it fits; the legend tells the kinds apart
            ax.text(ms(start), y, " " + text, fontsize=6, va="center", ha="left", color="white", clip_on=True)
    for start, text, _ in marks:
        ax.plot([ms(start)], [depth + 0.5], marker="v", color=kind_colour(text), markersize=5)
        ax.text(ms(start), depth + 0.75, text.split(": ", 1)[-1], fontsize=6, ha="left")
    for start, end, name in kernels:
        ax.barh(0, max(ms(end) - ms(start), 1e-3), left=ms(start), height=0.8, color="#17becf")
    ax.set_yticks([0] + [depth - lane for lane in range(depth)])
    ax.set_yticklabels(["GPU kernels"] + [f"asyncrt depth {lane}" for lane in range(depth)], fontsize=7)
    ax.set_ylim(-0.6, depth + 1.3)
    ax.set_xlim(0, span * 1.02)
    ax.set_title(f"{title}: {span:.1f} ms from the first range", fontsize=9, loc="left")
    ax.set_xlabel("ms", fontsize=8)
    ax.tick_params(axis="x", labelsize=7)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sqlite", nargs="+", help="nsys export --type sqlite files, one panel each")
    parser.add_argument("-o", "--output", default="nvtx-timeline.png")
    parser.add_argument("--titles", help="comma-separated panel titles (default: the file names)")
    args = parser.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.patches import Patch
    except ImportError:
        sys.exit("nvtx_timeline.py needs matplotlib: pip install matplotlib")
    titles = args.titles.split(",") if args.titles else [os.path.basename(p).rsplit(".", 1)[0] for p in args.sqlite]
    runs = [read_run(p) for p in args.sqlite]
    fig, axes = plt.subplots(len(runs), 1, figsize=(11, 2.6 * len(runs)), squeeze=False)
    for ax, title, run in zip(axes[:, 0], titles, runs):
        draw(ax, title, *run)
    handles = [Patch(color=c, label=k) for k, c in KINDS] + [Patch(color="#17becf", label="GPU kernel")]
    fig.legend(handles=handles, loc="upper right", ncol=len(handles), fontsize=7, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    fig.savefig(args.output, dpi=150)
    for title, (ranges, marks, kernels) in zip(titles, runs):
        print(f"{title}: {len(ranges)} ranges, {len(marks)} marks, {len(kernels)} kernels")
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
