#!/usr/bin/env python3
"""Merges one comparison run (scripts/compare.sh) into a table, JSON and a plot.

Input: a directory holding weft.<k>.json (weft-bench --json), optionally
weft_shared.<k>.json (weft-bench --mem shared: registered buffers), openmpi.<k>.json and
gloo.<k>.json (bench/peers/*_bench --json), k = 1..repeats, plus limits.json
(limit_probe) and optionally iperf.json (iperf3 -J). Each point is the median over the
repeats of the slowest rank's average time per call (out of place).

Output, next to the input: compare.md (markdown tables), compare.json, and
compare.png (matplotlib) or compare.svg (written directly when matplotlib is missing).

Ratios are peer time / weft time = weft busbw / peer busbw: above 1 means weft is faster.
With limits, each row also carries the memory model's limit (model_limit.py) and the
fraction of it that weft reached on plain and on registered buffers.
"""
import argparse
import glob
import json
import os
import platform
import statistics
import sys

from model_limit import limit_us

LIBS = ["weft", "weft_shared", "openmpi", "gloo"]
WEFTS = ["weft", "weft_shared"]  # weft on plain and on registered buffers; the rest are peers
LABELS = {"weft": "weft", "weft_shared": "weft registered", "openmpi": "Open MPI",
          "gloo": "Gloo"}
OP_ORDER = ["allreduce", "reduce", "broadcast", "allgather", "reducescatter", "alltoall",
            "gather", "scatter"]
MIB = 1 << 20


def load_runs(directory, lib):
    """{(op, bytes): [(time_us, busbw), ...]} over the repeats, and the last file's meta."""
    points, meta = {}, {}
    for path in sorted(glob.glob(os.path.join(directory, f"{lib}.*.json"))):
        with open(path) as f:
            doc = json.load(f)
        meta = doc
        for r in doc["results"]:
            m = r.get("out_of_place")
            if not m or r.get("type", "float32") != "float32" or r["op"] not in OP_ORDER:
                continue
            if r["size_bytes"] == 0:
                continue
            points.setdefault((r["op"], r["size_bytes"]), []).append(
                (m["time_us"], m["busbw_gbps"]))
    return points, meta


def load_rss(directory, lib):
    """Resident memory per rank (MiB), the largest rank's, median over the files: after init
    (the library's own footprint) and peak (with the benchmark's buffers). None if absent."""
    init, peak = [], []
    for path in sorted(glob.glob(os.path.join(directory, f"{lib}.*.json"))):
        with open(path) as f:
            ranks = json.load(f).get("rss_kib") or []
        if ranks:
            init.append(max(r["after_init"] for r in ranks) / 1024)
            peak.append(max(r["peak"] for r in ranks) / 1024)
    if not init:
        return None
    return {"after_init_mib": statistics.median(init), "peak_mib": statistics.median(peak)}


def medians(points):
    return {k: {"time_us": statistics.median(t for t, _ in v),
                "busbw_gbps": statistics.median(b for _, b in v),
                "runs": len(v)} for k, v in points.items()}


def ratio(weft, peer):
    if weft is None or peer is None or weft["time_us"] <= 0:
        return None
    return peer["time_us"] / weft["time_us"]


def fmt(v, spec):
    return "–" if v is None else format(v, spec)


def human(nbytes):
    for unit, div in (("GiB", 1 << 30), ("MiB", MIB), ("KiB", 1 << 10)):
        if nbytes >= div and nbytes % div == 0:
            return f"{nbytes // div} {unit}"
    return f"{nbytes} B"


def nearest(rows, op, target):
    """The row of `op` whose size is closest to target (sizes differ a little per op)."""
    cands = [r for r in rows if r["op"] == op and target / 2 <= r["size_bytes"] <= target * 2]
    return min(cands, key=lambda r: abs(r["size_bytes"] - target), default=None)


def ratio_cells(r, wefts, peers):
    """weft/peer and, with registered buffers, registered/peer and the limit fractions."""
    cells = [fmt(r["ratio"][w].get(p), ".2f") for w in wefts for p in peers]
    if r.get("limit_us") is not None:
        cells.append(", ".join(fmt(r["of_limit"].get(w), ".2f") for w in wefts))
    return cells


def ratio_heads(wefts, peers, limits):
    heads = [f"{LABELS[w]}/{LABELS[p]}" for w in wefts for p in peers]
    if limits:
        heads.append("of model limit: " + ", ".join(LABELS[w] for w in wefts))
    return heads


def write_markdown(path, summary, rows, libs_present, limits, iperf):
    peers = [l for l in libs_present if l not in WEFTS]
    wefts = [l for l in libs_present if l in WEFTS]
    out = []
    out.append(f"# weft vs peers: {summary['nranks']} ranks, {summary['transport']}\n")
    m = summary["machine"]
    out.append(f"Machine: {m['cpu']}, {m['nproc']} hardware threads, Linux {m['kernel']}. "
               f"Versions: " + ", ".join(f"{LABELS[l]} {summary['versions'].get(l, '?')}"
                                         for l in libs_present) + ".\n")
    out.append(f"Medians of {summary['repeats']} runs; float32 sum; out of place; time = slowest "
               "rank's average per call. Ratio = peer time / weft time (> 1: weft faster).\n")
    limit_line = ""
    if limits:
        limit_line += (f"Limits (one core, 16 MiB): memcpy {limits['memcpy_gbps']:.2f} GB/s, "
                       f"float32 `a += b` {limits['add_float32_gbps']:.2f} GB/s; the model "
                       "limit of each collective (bench/peers/model_limit.py) is computed "
                       "from them, and 'of model limit' is that time / weft's time.")
    if iperf:
        limit_line += (f" Socket (iperf3, bidirectional, {iperf['where']}): "
                       f"{iperf['each_way_gbit']:.1f} Gbit/s each way "
                       f"({iperf['each_way_gbit'] / 8:.2f} GB/s).")
    out.append(limit_line + "\n")
    if os.path.exists(os.path.join(os.path.dirname(path), "run.txt")):
        with open(os.path.join(os.path.dirname(path), "run.txt")) as f:
            out.append("Run: " + " ".join(line.strip() for line in f) + "\n")
    # Headline: smallest size (latency), 1 MiB and 16 MiB (busbw) for every collective.
    head = "| collective | " + " | ".join(
        [f"small: {LABELS[l]} µs" for l in libs_present] +
        [f"1 MiB: {LABELS[l]} GB/s" for l in libs_present] +
        [f"16 MiB: {LABELS[l]} GB/s" for l in libs_present] +
        [f"{LABELS[w]}/{LABELS[p]} small, 1M, 16M" for w in wefts for p in peers] +
        (["of model limit 1M, 16M: " + ", ".join(LABELS[w] for w in wefts)] if limits else [])
    ) + " |"
    out.append("## Summary\n")
    out.append(head)
    out.append("|" + " --- |" * (head.count("|") - 1))
    for op in OP_ORDER:
        small = min((r for r in rows if r["op"] == op), key=lambda r: r["size_bytes"], default=None)
        if small is None:
            continue
        one = nearest(rows, op, MIB) or {"ratio": {}}
        sixteen = nearest(rows, op, 16 * MIB) or {"ratio": {}}
        cells = [f"{op} ({human(small['size_bytes'])})"]
        cells += [fmt(small.get(l) and small[l]["time_us"], ".2f") for l in libs_present]
        cells += [fmt(one.get(l) and one[l]["busbw_gbps"], ".2f") for l in libs_present]
        cells += [fmt(sixteen.get(l) and sixteen[l]["busbw_gbps"], ".2f") for l in libs_present]
        for w in wefts:
            for p in peers:
                cells.append(", ".join(fmt(r["ratio"].get(w, {}).get(p), ".2f")
                                       for r in (small, one, sixteen)))
        if limits:
            cells.append("; ".join(", ".join(fmt(r.get("of_limit", {}).get(w), ".2f")
                                             for w in wefts) for r in (one, sixteen)))
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    rss = summary.get("rss") or {}
    if rss:
        out.append("## Resident memory per rank (largest rank, MiB)\n")
        out.append("| library | after init | peak (with benchmark buffers) |")
        out.append("| --- | ---: | ---: |")
        for l in libs_present:
            if rss.get(l):
                out.append(f"| {LABELS[l]} | {rss[l]['after_init_mib']:.1f} | "
                           f"{rss[l]['peak_mib']:.1f} |")
        out.append("")
    for op in OP_ORDER:
        op_rows = [r for r in rows if r["op"] == op]
        if not op_rows:
            continue
        out.append(f"## {op}\n")
        head = "| size (B) | " + " | ".join(
            [f"{LABELS[l]} µs" for l in libs_present] +
            [f"{LABELS[l]} busbw" for l in libs_present] +
            (["model limit µs"] if limits else []) + ratio_heads(wefts, peers, limits)) + " |"
        out.append(head)
        out.append("|" + " ---: |" * (head.count("|") - 1))
        for r in op_rows:
            cells = [str(r["size_bytes"])]
            cells += [fmt(r.get(l) and r[l]["time_us"], ".2f") for l in libs_present]
            cells += [fmt(r.get(l) and r[l]["busbw_gbps"], ".3f") for l in libs_present]
            if limits:
                cells.append(fmt(r.get("limit_us"), ".2f"))
            cells += ratio_cells(r, wefts, peers)
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def plot_matplotlib(path, rows, libs_present, limits, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    ops = [op for op in OP_ORDER if any(r["op"] == op for r in rows)]
    cols = 4 if len(ops) > 1 else 1
    nrows = (len(ops) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(4.2 * cols, 3.4 * nrows), squeeze=False)
    for ax, op in zip(axes.flat, ops):
        for lib in libs_present:
            pts = [(r["size_bytes"], r[lib]["busbw_gbps"]) for r in rows
                   if r["op"] == op and r.get(lib)]
            if pts:
                ax.plot(*zip(*pts), marker=".", label=LABELS[lib])
        if limits:
            ax.axhline(limits["memcpy_gbps"], color="grey", ls="--", lw=1, label="memcpy, 1 core")
            ax.axhline(limits["add_float32_gbps"], color="grey", ls=":", lw=1,
                       label="a += b, 1 core")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(op)
        ax.set_xlabel("size (B)")
        ax.set_ylabel("busbw (GB/s)")
        ax.grid(True, which="major", alpha=0.3)
    for ax in list(axes.flat)[len(ops):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=90)


def plot_svg(path, rows, libs_present, limits, title, op="allreduce"):
    """A dependency-free log-log plot of one collective, for machines without matplotlib."""
    import math
    w, h, ml, mb, mt, mr = 640, 400, 60, 40, 30, 130
    series = {l: [(r["size_bytes"], r[l]["busbw_gbps"]) for r in rows
                  if r["op"] == op and r.get(l) and r[l]["busbw_gbps"] > 0] for l in libs_present}
    xs = [x for s in series.values() for x, _ in s]
    ys = [y for s in series.values() for _, y in s] + (
        [limits["memcpy_gbps"], limits["add_float32_gbps"]] if limits else [])
    if not xs:
        return
    x0, x1 = math.log2(min(xs)), math.log2(max(xs)) + 1e-9
    y0, y1 = math.floor(math.log10(min(ys))), math.ceil(math.log10(max(ys)))
    y1 = max(y1, y0 + 1)
    px = lambda x: ml + (math.log2(x) - x0) / (x1 - x0) * (w - ml - mr)
    py = lambda y: h - mb - (math.log10(y) - y0) / (y1 - y0) * (h - mb - mt)
    colors = {"weft": "#d62728", "weft_shared": "#ff7f0e", "openmpi": "#1f77b4",
              "gloo": "#2ca02c"}
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
           'font-family="sans-serif" font-size="11">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{w / 2}" y="18" text-anchor="middle">{title}: {op} busbw (GB/s) vs size (B)</text>']
    for e in range(y0, y1 + 1):
        y = py(10 ** e)
        svg.append(f'<line x1="{ml}" x2="{w - mr}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>')
        svg.append(f'<text x="{ml - 4}" y="{y + 4:.1f}" text-anchor="end">{10 ** e:g}</text>')
    for e in range(int(x0), int(x1) + 1, 2):
        x = px(2 ** e)
        svg.append(f'<text x="{x:.1f}" y="{h - mb + 14}" text-anchor="middle">2^{e}</text>')
    legend = []
    for lib, pts in series.items():
        if pts:
            d = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in pts)
            svg.append(f'<polyline fill="none" stroke="{colors[lib]}" stroke-width="2" points="{d}"/>')
            legend.append((LABELS[lib], colors[lib], ""))
    if limits:
        for key, name, dash in (("memcpy_gbps", "memcpy, 1 core", "6,3"),
                                ("add_float32_gbps", "a += b, 1 core", "2,3")):
            y = py(limits[key])
            svg.append(f'<line x1="{ml}" x2="{w - mr}" y1="{y:.1f}" y2="{y:.1f}" stroke="grey" '
                       f'stroke-dasharray="{dash}"/>')
            legend.append((name, "grey", dash))
    for i, (name, color, dash) in enumerate(legend):
        y = mt + 10 + 16 * i
        svg.append(f'<line x1="{w - mr + 8}" x2="{w - mr + 28}" y1="{y}" y2="{y}" stroke="{color}" '
                   f'stroke-width="2" stroke-dasharray="{dash}"/>')
        svg.append(f'<text x="{w - mr + 32}" y="{y + 4}">{name}</text>')
    svg.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(svg) + "\n")


def machine():
    cpu = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return {"cpu": cpu, "nproc": os.cpu_count(), "kernel": platform.release(),
            "hostname": platform.node()}


def read_iperf(path, where):
    """Each-way rate of a bidirectional iperf3 -J run (the mean of the two directions)."""
    if not os.path.exists(path):
        return None
    with open(path) as f:
        doc = json.load(f)
    end = doc.get("end", {})
    fwd = end.get("sum_received", {}).get("bits_per_second")
    rev = end.get("sum_received_bidir_reverse", {}).get("bits_per_second")
    rates = [r for r in (fwd, rev) if r]
    if not rates:
        return None
    return {"where": where, "forward_gbit": (fwd or 0) / 1e9, "reverse_gbit": (rev or 0) / 1e9,
            "each_way_gbit": sum(rates) / len(rates) / 1e9}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--nranks", type=int, required=True)
    ap.add_argument("--transport", default="one host, shared memory (Gloo: tcp loopback)")
    ap.add_argument("--iperf-where", default="loopback")
    args = ap.parse_args()

    data, versions, repeats = {}, {}, 0
    for lib in LIBS:
        points, meta = load_runs(args.dir, lib)
        if points:
            data[lib] = medians(points)
            repeats = max(repeats, max(m["runs"] for m in data[lib].values()))
            v = meta.get("version") or meta.get("machine", {}).get("weft_version", "?")
            versions[lib] = v.removeprefix(LABELS[lib]).strip()  # "Open MPI v4.1.4" -> "v4.1.4"
    if "weft" not in data:
        sys.exit("merge.py: no weft results in " + args.dir)
    libs_present = [l for l in LIBS if l in data]
    limits = None
    if os.path.exists(os.path.join(args.dir, "limits.json")):
        with open(os.path.join(args.dir, "limits.json")) as f:
            limits = json.load(f)
    iperf = read_iperf(os.path.join(args.dir, "iperf.json"), args.iperf_where)

    keys = sorted(set(data["weft"]), key=lambda k: (OP_ORDER.index(k[0]), k[1]))
    rows = []
    for op, size in keys:
        r = {"op": op, "size_bytes": size}
        for lib in libs_present:
            r[lib] = data[lib].get((op, size))
        peers = [p for p in libs_present if p not in WEFTS]
        wefts = [w for w in libs_present if w in WEFTS]
        r["ratio"] = {w: {p: ratio(r[w], r[p]) for p in peers} for w in wefts}
        if limits:
            r["limit_us"] = limit_us(op, size, args.nranks, os.cpu_count(),
                                     limits.get("memcpy_gbps"), limits.get("add_float32_gbps"))
            r["of_limit"] = {w: ratio(r[w], {"time_us": r["limit_us"]})
                             if r[w] and r["limit_us"] else None for w in wefts}
        rows.append(r)
    summary = {"nranks": args.nranks, "transport": args.transport, "repeats": repeats,
               "machine": machine(), "versions": versions,
               "rss": {l: load_rss(args.dir, l) for l in libs_present}}

    write_markdown(os.path.join(args.dir, "compare.md"), summary, rows, libs_present, limits, iperf)
    with open(os.path.join(args.dir, "compare.json"), "w") as f:
        json.dump({**summary, "limits": limits, "iperf": iperf, "results": rows}, f, indent=1)
    title = f"{args.nranks} ranks, {args.transport}"
    try:
        plot_matplotlib(os.path.join(args.dir, "compare.png"), rows, libs_present, limits, title)
        print("merge.py: wrote compare.md, compare.json, compare.png in " + args.dir)
    except ImportError:
        plot_svg(os.path.join(args.dir, "compare.svg"), rows, libs_present, limits, title)
        print("merge.py: matplotlib missing; wrote compare.md, compare.json, compare.svg in "
              + args.dir)


if __name__ == "__main__":
    main()
