#!/usr/bin/python3
"""Draw the figures of gpubench result files (schema gpubench/1).

usage: plot.py RESULT.json [RESULT.json ...] --out DIR [--svg]

Writes, for whatever the files contain:
  vecadd-bandwidth.png  kernel bandwidth vs elements per kernel and dtype, with the theoretical
                        and the measured (D2D copy) peak as lines, and the CPU reference
  vecadd-transfers.png  H2D and D2H bandwidth vs elements, pinned vs pageable host memory
  augment-throughput.png images/s vs batch for the CPU reference and each GPU implementation
  pipeline-steps.png    steps/s vs batch per mode, with the ideal overlap, one panel per scenario
  energy-per-op.png     J per element/image/step vs size, gross and net of idle (--energy)
  clocks-over-sweep.png SM clock (min, median) of every GPU measurement in order, flags circled
  multi-gpu-heatmap.png for a merged multi-GPU file (--concurrent or MPI, docs/multi-gpu.md): rank
                        x measurement, each rank's median time over the median across ranks
                        (the other figures show rank 0 of such a file)
Each point is the rate of the median sample; its error bar spans the rates of the 25th to the 75th
percentile of the raw samples. A series (a mode, an implementation) has one colour in every
figure and panel, and legends use the names of the docs (cpu-augment, CPU reference).
Only matplotlib (Debian's python3-matplotlib) is needed; without it the script says which
interpreter lacks it and exits 2.
"""
import argparse
import json
import os
import statistics
import sys

try:
    import matplotlib
except ImportError:
    sys.stderr.write(
        f"plot.py: the Python interpreter {sys.executable} (Python {sys.version.split()[0]}) has no "
        "module 'matplotlib'.\n"
        f"Install it for this interpreter: {sys.executable} -m pip install matplotlib\n"
        "(Debian/Ubuntu system Python: sudo apt install python3-matplotlib), or run the script "
        "with an interpreter that has it, e.g. /usr/bin/python3 scripts/plot.py ...\n")
    sys.exit(2)

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)

SCHEMA = "gpubench/1"

# The names the docs use for the series whose result keys differ (docs/pipeline.md, augment.md).
DISPLAY_NAMES = {
    "cpu_reference": "CPU reference",
    "cpu_augment": "cpu-augment",
    "stage_a_cpu": "stage A on the CPU",
    "h2d": "upload (H2D)",
}
IDEAL = "ideal overlap: 1 / max(tA, tB)"
# One colour per series name across every figure and panel: fixed for the modes and
# implementations the docs name, then the next free colour in first-seen order.
FIXED_COLOURS = {
    "serial": "tab:blue", "streams": "tab:orange", "graph": "tab:green",
    "cpu-augment": "tab:red", "stage A on the CPU": "tab:brown", "CPU reference": "tab:gray",
    "staged": "tab:purple", "fused": "tab:cyan", "upload (H2D)": "tab:olive", IDEAL: "black",
}
SPARE_COLOURS = ["tab:pink", "tab:olive", "tab:brown", "tab:purple", "tab:cyan", "tab:blue",
                 "tab:orange", "tab:green", "tab:red", "tab:gray"]
_assigned = {}


def colour_of(label):
    if label in FIXED_COLOURS:
        return FIXED_COLOURS[label]
    if label not in _assigned:
        _assigned[label] = SPARE_COLOURS[len(_assigned) % len(SPARE_COLOURS)]
    return _assigned[label]


def display_name(key):
    return DISPLAY_NAMES.get(key, key)


class Result:
    """One result with its device name resolved against the devices of its own file."""

    def __init__(self, raw, device):
        self.benchmark = raw["benchmark"]
        self.params = raw.get("params", {})
        self.status = raw.get("status", "ok")
        self.device = device
        self.derived = raw.get("derived", {})
        self.measurements = {m["name"]: m for m in raw.get("measurements", [])}


def load(paths):
    results, gpus, peaks, hosts = [], set(), {}, set()
    for path in paths:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        if doc.get("schema") != SCHEMA:
            sys.exit(f"plot.py: {path}: not a {SCHEMA} result file")
        devices = {d["id"]: d for d in doc.get("devices", [])}
        hosts.add(doc.get("meta", {}).get("host", {}).get("cpu", "CPU"))
        for raw in doc.get("results", []):
            if raw.get("rank", 0) > 0:
                continue  # a merged multi-GPU file: rank 0 stands for the job here
            dev = devices.get(raw.get("device", -1))
            if dev is not None:
                gpus.add(dev["name"])
                # Merge across files: any file that measured the D2D peak supplies it.
                peak = peaks.setdefault(dev["name"], {"theoretical": None, "measured": None})
                peak["theoretical"] = peak["theoretical"] or dev.get("peak_bytes_per_s")
                peak["measured"] = (peak["measured"]
                                    or dev.get("measured", {}).get("d2d_bytes_per_s"))
            results.append(Result(raw, dev["name"] if dev else None))
    return results, sorted(gpus), peaks, sorted(hosts)


def median(m):
    return m.get("stats", {}).get("median") or 0.0


def rate(m, key):
    value = m.get("rates", {}).get(key)
    if value is None and key == "items_per_s" and median(m) > 0:
        value = m.get("items", 0) / median(m)
    return value


def percentile(values, q):
    """Linear interpolation between the closest ranks, as numpy's default."""
    v = sorted(values)
    if not v:
        return None
    pos = (len(v) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def spread(m, work):
    """The rates (work / sample) of the 25th and 75th percentile samples: a longer sample is a
    lower rate, so the 75th percentile of the times gives the low end."""
    times = [t for t in m.get("samples", []) if t and t > 0]
    if not times or not work:
        return None
    return work / percentile(times, 0.75), work / percentile(times, 0.25)


def point(m, key, scale=1.0):
    """(value, low, high) of a measurement's rate `key`, divided by `scale`."""
    value = rate(m, key)
    if not value:
        return None
    work = m.get("bytes") if key == "bytes_per_s" else m.get("items")
    band = spread(m, work)
    lo, hi = band if band else (value, value)
    return value / scale, min(lo, value) / scale, max(hi, value) / scale


def machine_title(gpus, hosts):
    return ", ".join(gpus) if gpus else "CPU only (" + ", ".join(hosts) + ")"


def series_plot(ax, series, marker="o"):
    """series: label -> x -> value or (value, low, high)."""
    for label in sorted(series):
        points = sorted(series[label].items())
        xs = [p[0] for p in points]
        triples = [p[1] if isinstance(p[1], tuple) else (p[1], p[1], p[1]) for p in points]
        ys = [t[0] for t in triples]
        yerr = [[t[0] - t[1] for t in triples], [t[2] - t[0] for t in triples]]
        style = {"linestyle": "--"} if label == IDEAL else {}
        ax.errorbar(xs, ys, yerr=yerr, marker=marker, label=label, color=colour_of(label),
                    capsize=3, **style)


def save(fig, out, name, svg, written):
    fig.tight_layout()
    path = os.path.join(out, name + ".png")
    fig.savefig(path, dpi=120)
    written.append(path)
    if svg:
        path = os.path.join(out, name + ".svg")
        fig.savefig(path)
        written.append(path)
    plt.close(fig)


def plot_vecadd_bandwidth(results, gpus, peaks, hosts, out, svg, written):
    series = {}
    for r in results:
        if r.benchmark != "vecadd" or r.status not in ("ok", "failed"):
            continue
        n, dtype = r.params.get("n"), r.params.get("dtype", "?")
        # The per-launch row, and beside it the back-to-back (--batch-time) and GPU-timestamp
        # (--timestamps) rows of the same kernel when the run has them.
        for row, suffix in (("kernel", ""), ("kernel (batch)", ", back to back"),
                            ("kernel (timestamps)", ", GPU timestamps")):
            if row in r.measurements and r.params.get("memory", "pinned") == "pinned":
                label = f"{r.params.get('kernel', 'kernel')} {dtype}{suffix}"
                p = point(r.measurements[row], "bytes_per_s", 1e9)
                if p:
                    series.setdefault(label, {})[n] = p
        if "cpu_reference" in r.measurements:
            p = point(r.measurements["cpu_reference"], "bytes_per_s", 1e9)
            if p:
                series.setdefault(f"CPU reference {dtype}", {}).setdefault(n, p)
    if not series:
        return
    fig, ax = plt.subplots(figsize=(9, 5.5))
    series_plot(ax, series)
    for name, peak in peaks.items():
        if peak.get("theoretical"):
            ax.axhline(peak["theoretical"] / 1e9, color="black", linestyle="--",
                       label=f"theoretical peak ({name})")
        if peak.get("measured"):
            ax.axhline(peak["measured"] / 1e9, color="grey", linestyle=":",
                       label=f"measured D2D copy peak ({name})")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("elements per vector")
    ax.set_ylabel("bandwidth (GB/s)")
    ax.set_title(f"vecadd bandwidth (c = a + b), {machine_title(gpus, hosts)}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    save(fig, out, "vecadd-bandwidth", svg, written)


def plot_vecadd_transfers(results, gpus, hosts, out, svg, written):
    series = {}
    for r in results:
        if r.benchmark != "vecadd" or r.status not in ("ok", "failed"):
            continue
        for direction in ("h2d", "d2h"):
            m = r.measurements.get(direction)
            if m is None:
                continue
            label = f"{direction.upper()} {r.params.get('memory', '?')}"
            # Transfers do not depend on the kernel: keep the first measurement of each size.
            p = point(m, "bytes_per_s", 1e9)
            if p:
                series.setdefault(label, {}).setdefault(r.params.get("n"), p)
    if not series:
        return
    fig, ax = plt.subplots(figsize=(9, 5.5))
    series_plot(ax, series)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("elements per vector")
    ax.set_ylabel("bandwidth (GB/s)")
    ax.set_title(f"host-device transfers, pinned vs pageable, {machine_title(gpus, hosts)}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    save(fig, out, "vecadd-transfers", svg, written)


def augment_label(r, name):
    if name in DISPLAY_NAMES:
        return DISPLAY_NAMES[name]
    impl = r.params.get("impl")
    if name in ("staged", "fused") or impl in (None, "all"):
        return name
    return impl if name in ("gpu", "kernel", "augment", impl) else f"{impl} {name}"


def plot_augment(results, gpus, hosts, out, svg, written):
    series = {}
    for r in results:
        if r.benchmark != "augment" or r.status not in ("ok", "failed"):
            continue
        batch = r.params.get("batch")
        for name, m in r.measurements.items():
            p = point(m, "items_per_s")
            if p:
                series.setdefault(augment_label(r, name), {}).setdefault(batch, p)
    if not series:
        return
    fig, ax = plt.subplots(figsize=(9, 5.5))
    series_plot(ax, series)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("batch size (images)")
    ax.set_ylabel("throughput (images/s)")
    ax.set_title(f"augment: crop, resize, rotate, blur, normalize, {machine_title(gpus, hosts)}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    save(fig, out, "augment-throughput", svg, written)


def steps_per_s(m):
    """(value, low, high) steps/s of a measurement."""
    if m.get("item_unit") == "steps" and rate(m, "items_per_s"):
        return point(m, "items_per_s")
    if median(m) <= 0:
        return None
    band = spread(m, 1.0)
    value = 1.0 / median(m)
    lo, hi = band if band else (value, value)
    return value, min(lo, value), max(hi, value)


def plot_pipeline(results, gpus, hosts, out, svg, written):
    panels = {}  # scenario -> label -> batch -> steps/s
    for r in results:
        if r.benchmark != "pipeline" or r.status not in ("ok", "failed"):
            continue
        scenario = r.params.get("scenario", "pipeline")
        batch = r.params.get("batch")
        series = panels.setdefault(scenario, {})
        stages = [median(r.measurements[s]) for s in ("stage_a", "stage_b") if s in r.measurements]
        if len(stages) == 2 and max(stages) > 0:
            series.setdefault(IDEAL, {}).setdefault(batch, 1.0 / max(stages))
        for name, m in r.measurements.items():
            if name in ("stage_a", "stage_b"):
                continue
            label = display_name(r.params.get("mode") if name in ("step", "steps") else name)
            value = steps_per_s(m)
            if value and label:
                series.setdefault(label, {}).setdefault(batch, value)
    if not panels:
        return
    fig, axes = plt.subplots(1, len(panels), figsize=(7 * len(panels), 5.5), squeeze=False)
    for ax, scenario in zip(axes[0], sorted(panels)):
        series_plot(ax, panels[scenario])
        ax.set_xscale("log", base=2)
        ax.set_xlabel("batch size")
        ax.set_ylabel("steps/s")
        ax.set_title(scenario)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="small")
    fig.suptitle(f"pipeline: serial vs streams vs graph, {machine_title(gpus, hosts)}")
    save(fig, out, "pipeline-steps", svg, written)


def size_of(r):
    """The x of a sweep point: elements for vecadd, batch for augment and pipeline."""
    return r.params.get("n") if r.benchmark == "vecadd" else r.params.get("batch")


def plot_energy_per_op(results, gpus, hosts, out, svg, written):
    """energy-per-op.png: J per element/image/step vs size, gross and net of idle (--energy)."""
    panels = {}  # benchmark -> label -> size -> J/op
    units = {}
    for r in results:
        x = size_of(r)
        for name, m in r.measurements.items():
            e = m.get("energy") or {}
            if not e.get("supported") or x is None:
                continue
            series = panels.setdefault(r.benchmark, {})
            units[r.benchmark] = e.get("op_unit", "op")
            series.setdefault(f"{name}", {})[x] = e["j_per_op"]
            if e.get("j_per_op_net", 0) > 0:
                series.setdefault(f"{name} (net of idle)", {})[x] = e["j_per_op_net"]
    if not panels:
        return
    fig, axes = plt.subplots(1, len(panels), figsize=(7 * len(panels), 5.5), squeeze=False)
    for ax, bench in zip(axes[0], sorted(panels)):
        series_plot(ax, panels[bench])
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("elements" if bench == "vecadd" else "batch size")
        ax.set_ylabel(f"energy (J per {units[bench]})")
        ax.set_title(bench)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="small")
    fig.suptitle(f"energy per operation (NVML counter; RAPL for the CPU), "
                 f"{machine_title(gpus, hosts)}")
    save(fig, out, "energy-per-op", svg, written)


def plot_clocks_over_sweep(results, gpus, hosts, out, svg, written):
    """clocks-over-sweep.png: SM clock (min and median) and the throttle flags of every GPU
    measurement, in the order measured, so a sweep shows where the clocks fell."""
    points = []  # (label, median, min, flagged)
    for r in results:
        for name, m in r.measurements.items():
            t = m.get("telemetry") or {}
            sm = t.get("sm_clock_mhz")
            if not t.get("available") or not sm:
                continue
            flagged = any(f in ("thermal", "hw_slowdown", "contention") for f in t.get("flags", []))
            points.append((f"{r.benchmark} {size_of(r)} {name}", sm["median"], sm["min"], flagged))
    if not points:
        return
    fig, ax = plt.subplots(figsize=(max(8, 0.25 * len(points)), 5.5))
    xs = list(range(len(points)))
    ax.plot(xs, [p[1] for p in points], marker="o", label="SM clock, median")
    ax.plot(xs, [p[2] for p in points], marker="v", linestyle=":", label="SM clock, min")
    flagged = [(x, p[2]) for x, p in zip(xs, points) if p[3]]
    if flagged:
        ax.scatter([f[0] for f in flagged], [f[1] for f in flagged], s=120, facecolors="none",
                   edgecolors="red", label="flagged (thermal, hw slowdown, contention)")
    ax.set_xticks(xs)
    ax.set_xticklabels([p[0] for p in points], rotation=75, fontsize="x-small")
    ax.set_ylabel("MHz")
    ax.set_title(f"clocks over the sweep, {machine_title(gpus, hosts)}")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    save(fig, out, "clocks-over-sweep", svg, written)


def plot_multi_gpu_heatmaps(paths, out, svg, written):
    """Multi-GPU: one heat map per merged file, rank x (point, measurement), each cell
    the rank's median time over the median across ranks: 1.0 is typical, the straggler is red."""
    merged = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        if doc.get("aggregate") and doc.get("ranks"):
            merged.append(doc)
    for index, doc in enumerate(merged):
        ranks = doc["ranks"]
        columns, cells = [], {}
        for r in doc["results"]:
            params = " ".join(f"{k}={v}" for k, v in r.get("params", {}).items())
            for m in r.get("measurements", []):
                column = f"{r['benchmark']} {params}\n{m['name']}"
                if column not in columns:
                    columns.append(column)
                cells[(r.get("rank", 0), column)] = m["stats"]["median"]
        if not columns:
            continue
        grid = []
        for rk in ranks:
            row = []
            for column in columns:
                times = [t for (rank, c), t in cells.items() if c == column]
                mid = statistics.median(times) if times else 0
                value = cells.get((rk["rank"], column))
                row.append(value / mid if value and mid else float("nan"))
            grid.append(row)
        fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(columns) + 3), 0.5 * len(ranks) + 2.5))
        image = ax.imshow(grid, cmap="coolwarm", vmin=0.8, vmax=1.2, aspect="auto")
        ax.set_xticks(range(len(columns)), columns, rotation=60, ha="right", fontsize=7)
        labels = [f"rank {rk['rank']} {rk.get('host', '')} {rk.get('gpu_name', '') or 'CPU'}"
                  + (" (shared GPU)" if rk.get("shares_gpu") else "") for rk in ranks]
        ax.set_yticks(range(len(ranks)), labels, fontsize=8)
        fig.colorbar(image, ax=ax, label="median time / median across ranks")
        agg = doc["aggregate"]
        ax.set_title(f"{agg['mode']}: {agg['ranks']} ranks on {agg['nodes']} node(s)")
        name = "multi-gpu-heatmap" if index == 0 else f"multi-gpu-heatmap-{index + 1}"
        save(fig, out, name, svg, written)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="+", metavar="RESULT.json")
    parser.add_argument("--out", default="plots", help="folder for the figures (created)")
    parser.add_argument("--svg", action="store_true", help="also write SVG next to each PNG")
    args = parser.parse_args(argv)

    results, gpus, peaks, hosts = load(args.files)
    os.makedirs(args.out, exist_ok=True)
    written = []
    plot_vecadd_bandwidth(results, gpus, peaks, hosts, args.out, args.svg, written)
    plot_vecadd_transfers(results, gpus, hosts, args.out, args.svg, written)
    plot_augment(results, gpus, hosts, args.out, args.svg, written)
    plot_pipeline(results, gpus, hosts, args.out, args.svg, written)
    plot_energy_per_op(results, gpus, hosts, args.out, args.svg, written)
    plot_clocks_over_sweep(results, gpus, hosts, args.out, args.svg, written)
    plot_multi_gpu_heatmaps(args.files, args.out, args.svg, written)
    if not written:
        print("plot.py: nothing to plot in these files", file=sys.stderr)
        return 1
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
