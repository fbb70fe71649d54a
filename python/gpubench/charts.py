"""The charts of gpubench result files (schema gpubench/1), drawn with matplotlib.

One module for every picture gpubench draws: scripts/plot.py saves these figures as PNG (and
SVG), and `gpubench report/compare --format html` inlines the same figures as SVG in one page.
Each `*_figure` function returns a matplotlib Figure, or None when the files hold nothing for it;
the caller saves and closes it.

Each point is the rate of the median sample; its error bar spans the rates of the 25th to the 75th
percentile of the raw samples. A series (a mode, an implementation) has one colour in every
figure and panel, and legends use the names of the docs (cpu-augment, CPU reference).
"""
import os
import statistics

from gpubench.chart_axes import (wrapped, count_text, plain_log_x, plain_log_y, xs_of,
                                  layout_problems)  # noqa: F401
# charts.X stays the name of everything a chart is made of, wherever it is defined.
from gpubench.chart_data import (SCHEMA, NotAResult, Result, read_document, Collection,  # noqa
                                  median, rate, raw_samples, percentile, spread, point,
                                  says_something, format_seconds, size_of, point_label,
                                  roofline_roofs, roofline_points)

MATPLOTLIB_MISSING = (
    "the Python interpreter {exe} (Python {version}) has no module 'matplotlib'. Install it for "
    "this interpreter: {exe} -m pip install matplotlib (Debian/Ubuntu system Python: sudo apt "
    "install python3-matplotlib; the gpubench wheel: pip install 'gpubench[html]')")


def import_pyplot():
    """matplotlib.pyplot on the Agg backend; raises ImportError when matplotlib is missing."""
    # numpy's OpenBLAS, loaded with matplotlib, would start a thread per CPU that spins in
    # sched_yield after each small product; charts need none of them (unless the user asks).
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    import matplotlib  # pylint: disable=import-outside-toplevel
    matplotlib.use("Agg")
    import matplotlib.pyplot  # pylint: disable=import-outside-toplevel
    return matplotlib.pyplot


plt = None  # set by use_matplotlib()


def use_matplotlib():
    """Imports matplotlib once; ImportError when it is missing (the callers name the package)."""
    global plt  # pylint: disable=global-statement
    if plt is None:
        plt = import_pyplot()
    return plt


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


# ---- layout: titles that wrap, legends beside the data, plain tick labels ----------------------


def set_title(ax, text):
    """An axes title folded to the axes' width: never cut at the figure's edge."""
    fig = ax.get_figure()
    size = plt.rcParams["axes.titlesize"]
    points = size if isinstance(size, (int, float)) else 12
    ax.set_title(wrapped(text, ax.get_position().width * fig.get_figwidth(), points))


def set_suptitle(fig, text):
    fig.suptitle(wrapped(text, fig.get_figwidth() * 0.95, 12))


def finalize(fig):
    """Lays `fig` out for saving: tight_layout, then each axes' title and x label folded again to
    the width the layout left the axes (long tick labels narrow it), and laid out once more where
    that changed one. What scripts/plot.py and the HTML page call before saving."""
    import warnings  # noqa: E402 pylint: disable=import-outside-toplevel
    with warnings.catch_warnings():
        # Long labels: tight_layout does what it can; its warning would only alarm the user.
        warnings.simplefilter("ignore", UserWarning)
        fig.tight_layout()
        folded = False
        for ax in fig.axes:
            width = ax.get_position().width * fig.get_figwidth()
            for text, size in ((ax.title, 12), (ax.xaxis.label, 10)):
                flat = " ".join(text.get_text().split())
                if flat and wrapped(flat, width, size) != text.get_text():
                    text.set_text(wrapped(flat, width, size))
                    folded = True
        if folded:
            fig.tight_layout()


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


def finish(ax, xlabel, ylabel, legend=True):
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, which="both", alpha=0.3)
    if legend:
        # Beside the axes, never over a line; the figure's layout makes room for it.
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0),
                  borderaxespad=0.0)


def vecadd_bandwidth_series(c):
    series = {}
    for r in c.of("vecadd"):
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
    return series


def bandwidth_figure(c, series, title, xlabel):
    """Bandwidth vs size on a linear axis from 0, with the theoretical and measured copy peaks."""
    fig, ax = plt.subplots(figsize=(9, 5.5))
    series_plot(ax, series)
    for name, peak in c.peaks.items():
        if peak.get("theoretical"):
            ax.axhline(peak["theoretical"] / 1e9, color="black", linestyle="--",
                       label=f"theoretical peak ({name})")
        if peak.get("measured"):
            ax.axhline(peak["measured"] / 1e9, color="grey", linestyle=":",
                       label=f"measured D2D copy peak ({name})")
    plain_log_x(ax, xs_of(series))
    ax.set_ylim(bottom=0)
    set_title(ax, title)
    finish(ax, xlabel, "bandwidth (GB/s), median, bars 25th-75th percentile")
    return fig


def vecadd_bandwidth_figure(c, require_trend=False):
    series = vecadd_bandwidth_series(c)
    if not series or (require_trend and not says_something(series)):
        return None
    return bandwidth_figure(c, series, "vecadd kernel bandwidth (c = a + b) vs vector length, "
                            f"{c.machine()}", "elements per vector (log scale)")


def stream_bandwidth_figure(c, require_trend=False):
    series = {}
    for r in c.of("stream"):
        n = r.params.get("n")
        for name, m in r.measurements.items():
            if m.get("clock") != "gpu" or "(" in name:
                continue
            p = point(m, "bytes_per_s", 1e9)
            if p:
                series.setdefault(f"{name} {r.params.get('dtype', '')}".strip(), {})[n] = p
    if not series or (require_trend and not says_something(series)):
        return None
    return bandwidth_figure(c, series, f"stream kernels' bandwidth vs array length, {c.machine()}",
                            "elements per array (log scale)")


def vecadd_transfers_figure(c, require_trend=False):
    series, memories = {}, set()
    for r in c.of("vecadd"):
        for direction in ("h2d", "d2h"):
            m = r.measurements.get(direction)
            if m is None:
                continue
            memory = r.params.get("memory", "?")
            memories.add(memory)
            # Transfers do not depend on the kernel: keep the first measurement of each size.
            p = point(m, "bytes_per_s", 1e9)
            if p:
                series.setdefault(f"{direction.upper()} {memory}", {}).setdefault(
                    r.params.get("n"), p)
    if not series or (require_trend and not says_something(series)):
        return None
    fig, ax = plt.subplots(figsize=(9, 5.5))
    series_plot(ax, series)
    plain_log_x(ax, xs_of(series))
    ax.set_ylim(bottom=0)
    what = ("pinned vs pageable host memory" if len(memories) > 1
            else f"{next(iter(memories))} host memory")
    set_title(ax, f"host-device transfer bandwidth (H2D, D2H), {what}, {c.machine()}")
    finish(ax, "elements per vector (log scale)",
           "bandwidth (GB/s), median, bars 25th-75th percentile")
    return fig


def augment_label(r, name):
    if name in DISPLAY_NAMES:
        return DISPLAY_NAMES[name]
    impl = r.params.get("impl")
    if name in ("staged", "fused") or impl in (None, "all"):
        return name
    return impl if name in ("gpu", "kernel", "augment", impl) else f"{impl} {name}"


def augment_figure(c, require_trend=False):
    series = {}
    for r in c.of("augment"):
        batch = r.params.get("batch")
        for name, m in r.measurements.items():
            p = point(m, "items_per_s")
            if p:
                series.setdefault(augment_label(r, name), {}).setdefault(batch, p)
    if not series or (require_trend and not says_something(series)):
        return None
    fig, ax = plt.subplots(figsize=(9, 5.5))
    series_plot(ax, series)
    plain_log_x(ax, xs_of(series))
    plain_log_y(ax)
    gpu = any(r.device is not None for r in c.of("augment"))
    what = "GPU implementations and CPU baselines" if gpu else "CPU baselines"
    set_title(ax, f"augment (crop, resize, rotate, blur, normalize): images/s vs batch, {what}, "
                  f"{c.machine()}")
    finish(ax, "batch size (images, log scale)", "throughput (images/s, log scale)")
    return fig


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


def pipeline_figure(c, require_trend=False):
    panels = {}  # scenario -> label -> batch -> steps/s
    for r in c.of("pipeline"):
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
    return log_panels_figure(
        panels, require_trend, lambda scenario: f"scenario {scenario}",
        lambda scenario: ("batch size (log scale)", "steps/s (log scale)"),
        f"pipeline: steps/s per mode (serial, streams, graph) vs batch, with the ideal overlap, "
        f"{c.machine()}")


def log_panels_figure(panels, require_trend, title_of, labels_of, suptitle):
    """One panel per key of `panels` (key -> series -> x -> y), log-log, side by side; None when
    nothing is left to draw (with require_trend, a panel of single points is left out)."""
    if require_trend:
        panels = {k: v for k, v in panels.items() if says_something(v)}
    if not panels:
        return None
    fig, axes = plt.subplots(1, len(panels), figsize=(7 * len(panels), 5.5), squeeze=False)
    for ax, key in zip(axes[0], sorted(panels)):
        series_plot(ax, panels[key])
        plain_log_x(ax, xs_of(panels[key]))
        plain_log_y(ax)
        set_title(ax, title_of(key))
        finish(ax, *labels_of(key))
    set_suptitle(fig, suptitle)
    return fig


def energy_figure(c, require_trend=False):
    """J per element/image/step vs size, gross and net of idle (--energy)."""
    panels, units = {}, {}  # benchmark -> label -> size -> J/op
    for r in c.results:
        x = size_of(r)
        for name, m in r.measurements.items():
            e = m.get("energy") or {}
            if not e.get("supported") or x is None:
                continue
            series = panels.setdefault(r.benchmark, {})
            units[r.benchmark] = e.get("op_unit", "op")
            label = name if r.benchmark != "pipeline" else \
                f"{r.params.get('scenario', '')} {r.params.get('mode', '')} {name}"
            series.setdefault(label, {})[x] = e["j_per_op"]
            if e.get("j_per_op_net", 0) > 0:
                series.setdefault(f"{label} (net of idle)", {})[x] = e["j_per_op_net"]
    return log_panels_figure(
        panels, require_trend, lambda bench: bench,
        lambda bench: (("elements" if bench in ("vecadd", "stream") else "batch size")
                       + " (log scale)", f"energy (J per {units[bench]}, log scale)"),
        f"energy per operation (NVML counter; RAPL for the CPU), {c.machine()}")


def clocks_figure(c, require_trend=False):
    """SM clock (min and median) and the throttle flags of every GPU measurement, in the order
    measured, one labelled row each, so a sweep shows where the clocks fell."""
    points = []  # (label, median, min, flagged)
    for r in c.results:
        for name, m in r.measurements.items():
            t = m.get("telemetry") or {}
            sm = t.get("sm_clock_mhz")
            if not t.get("available") or not sm:
                continue
            flagged = any(f in ("thermal", "hw_slowdown", "contention") for f in t.get("flags", []))
            points.append((point_label(r, name), sm["median"], sm["min"], flagged))
    if not points or (require_trend and len(points) < 2):
        return None
    # Horizontal rows: one readable label per measurement, however many the sweep has.
    fig, ax = plt.subplots(figsize=(9, 1.6 + 0.24 * len(points)))
    ys = list(range(len(points)))
    ax.plot([p[1] for p in points], ys, marker="o", label="SM clock, median")
    ax.plot([p[2] for p in points], ys, marker="v", linestyle=":", label="SM clock, min")
    flagged = [(p[2], y) for y, p in zip(ys, points) if p[3]]
    if flagged:
        ax.scatter([f[0] for f in flagged], [f[1] for f in flagged], s=120, facecolors="none",
                   edgecolors="red", label="flagged (thermal, hw slowdown, contention)")
    ax.set_yticks(ys)
    ax.set_yticklabels([p[0] for p in points], fontsize="small")
    ax.invert_yaxis()
    ax.set_xlim(left=0)
    set_title(ax, f"SM clock of each GPU measurement, in the order measured, {c.machine()}")
    finish(ax, "SM clock (MHz, axis from 0)", "")
    return fig


def distribution_figure(c, benchmark):
    """The samples of every measurement of `benchmark`, each over its own median (1.0), as box
    plots: box 25th-75th percentile, whiskers to 1.5 IQR, outliers as points; each row names the
    median and why sampling stopped."""
    rows = []
    for r in c.of(benchmark):
        for name, m in r.measurements.items():
            times, mid = raw_samples(m), median(m)
            if len(times) < 2 or mid <= 0:
                continue
            stop = m.get("stop_reason") or ("converged" if m.get("converged") else "not converged")
            rows.append((f"{point_label(r, name)} ({format_seconds(mid)}, {len(times)} samples, "
                         f"stop: {stop})", [t / mid for t in times]))
    if not rows:
        return None
    # Zoomed to the bulk (each row's 1st to 99th percentile, at least 0.9 to 1.1): one outlier
    # must not squeeze every box into a line. Samples outside are counted on their row.
    low = min(min(0.9, percentile(r[1], 0.01)) for r in rows)
    high = max(max(1.1, percentile(r[1], 0.99)) for r in rows)
    pad = 0.03 * (high - low)
    low, high = low - pad, high + pad
    labels = []
    for label, values in rows:
        outside = sum(1 for v in values if v < low or v > high)
        labels.append(label if not outside else f"{label}, {outside} outside the axis")
    fig, ax = plt.subplots(figsize=(10, 1.4 + 0.26 * len(rows)))
    ax.boxplot([r[1] for r in rows], vert=False, widths=0.6, flierprops={"markersize": 3})
    ax.set_xlim(low, high)
    ax.set_yticks(range(1, len(rows) + 1))
    ax.set_yticklabels(labels, fontsize="small")
    ax.invert_yaxis()
    ax.axvline(1.0, color="tab:red", linewidth=1, label="median")
    set_title(ax, f"{benchmark}: sample distribution of each measurement, time over its median")
    finish(ax, "sample time / median (1.0 = median; zoomed to the 1st-99th percentiles)", "")
    return fig


def roofline_figure(c, require_trend=False):
    """Log-log FLOP/s against FLOPs per byte: the measured roofs of each type as solid lines, the
    theoretical ones dashed, and every row that declares its FLOPs as a labelled point."""
    roofs = roofline_roofs(c)
    points = roofline_points(c)
    if not roofs and not points:
        return None
    if require_trend and not roofs and len(points) < 2:
        return None
    fig, ax = plt.subplots(figsize=(9, 6))
    xs = [1 / 32, 4096]
    for dtype, x in sorted(roofs.items()):
        colour = colour_of(f"roofline {dtype}")
        if x["memory"] and x["compute"]:
            ridge = x["compute"] / x["memory"]
            ax.plot([xs[0], ridge, xs[1]], [x["memory"] * xs[0] / 1e12, x["compute"] / 1e12,
                                              x["compute"] / 1e12],
                    color=colour, label=f"{dtype} measured (ridge {ridge:.3g} FLOP/B)")
        if x["peak_bytes"] and x["peak_flops"]:
            ridge = x["peak_flops"] / x["peak_bytes"]
            ax.plot([xs[0], ridge, xs[1]], [x["peak_bytes"] * xs[0] / 1e12, x["peak_flops"] / 1e12,
                                              x["peak_flops"] / 1e12],
                    color=colour, linestyle="--", label=f"{dtype} theoretical")
    for label, intensity, flops in points:
        ax.plot([intensity], [flops / 1e12], marker="o", linestyle="none",
                color=colour_of(label), label=label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    set_title(ax, f"roofline: measured roofs (solid), theoretical (dashed), rows as points, "
                  f"{c.machine()}")
    finish(ax, "arithmetic intensity (FLOPs per byte, log scale)",
           "TFLOP/s (median sample, log scale)")
    return fig


def figures(c, require_trend=False):
    """(name, figure) of every chart the collection has, in the order plot.py names them;
    `require_trend` leaves out a chart whose series have one point each."""
    out = []
    for name, make in (("vecadd-bandwidth", vecadd_bandwidth_figure),
                       ("vecadd-transfers", vecadd_transfers_figure),
                       ("stream-bandwidth", stream_bandwidth_figure),
                       ("augment-throughput", augment_figure),
                       ("pipeline-steps", pipeline_figure),
                       ("roofline", roofline_figure),
                       ("energy-per-op", energy_figure),
                       ("clocks-over-sweep", clocks_figure)):
        fig = make(c, require_trend)
        if fig is not None:
            out.append((name, fig))
    return out


def multi_gpu_heatmaps(docs):
    """Multi-GPU: one heat map per merged file, rank x (point, measurement), each cell the rank's
    median time over the median across ranks: 1.0 is typical, the straggler is red."""
    out = []
    merged = [d for d in docs if d.get("aggregate") and d.get("ranks")]
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
                times = [t for (rank, col), t in cells.items() if col == column]
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
        set_title(ax, f"{agg['mode']}: each rank's median time over the median across ranks, "
                      f"{agg['ranks']} ranks on {agg['nodes']} node(s)")
        out.append(("multi-gpu-heatmap" if index == 0 else f"multi-gpu-heatmap-{index + 1}", fig))
    return out
