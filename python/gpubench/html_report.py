"""One self-contained HTML page of gpubench results: a run, a comparison, or a history of runs.

Run by `gpubench report FILE... --format html` and `gpubench compare ... --format html` (the
executable has already read every file and refused a bad one; it writes the page atomically):

  python3 -m gpubench.html_report --kind run     --out PAGE [--terminal TXT] FILE
  python3 -m gpubench.html_report --kind history --out PAGE --history PLAN.json FILE...
  python3 -m gpubench.html_report --kind compare --out PAGE --comparison CMP.json
                                  [--terminal TXT] --base FILE... --new FILE...

The charts are gpubench.charts' (the PNGs of scripts/plot.py are the same figures), inlined as
SVG: the page makes no network request. A history's groups, their order and the comparison of
each pair of consecutive runs come from the executable (PLAN.json), so its marks are compare's.
Exit status: 0 written; 2 matplotlib missing or a file that is not a result (message on stderr).
"""
import argparse
import json
import sys

from gpubench import charts
from gpubench.html_parts import (esc, Page, table, note, gpu_names, environment, params_text,
                                 varying_params, measurement_table, default_jobs)

LAST_CHANGES = 20  # rows of the history's table of changes


def benchmark_order(collection):
    order = []
    for r in collection.results:
        if r.benchmark not in order:
            order.append(r.benchmark)
    return order


CHART_OF = {"vecadd": [charts.vecadd_bandwidth_figure, charts.vecadd_transfers_figure],
            "stream": [charts.stream_bandwidth_figure],
            "augment": [charts.augment_figure],
            "pipeline": [charts.pipeline_figure],
            "roofline": [charts.roofline_figure]}


def run_page(path, doc, terminal):
    page = Page(f"gpubench run: {path}")
    environment(page, [(path, doc)])
    c = charts.Collection([doc])
    for bench in benchmark_order(c):
        page.add(f"<h2>{esc(bench)}</h2>")
        results = [r for r in c.results if r.benchmark == bench]
        keys = varying_params(results)
        fixed = {k: v for k, v in results[0].params.items() if k not in keys}
        rows = sum(max(1, len(r.measurements)) for r in results)
        page.add(f"<details><summary>Table: {len(results)} points, {rows} rows"
                 + (f"; every point has {esc(params_text(fixed))}" if fixed else "")
                 + "</summary>" + measurement_table(results) + "</details>")
        sub = charts.Collection([doc])
        sub.results = [r for r in c.results if r.benchmark == bench]
        drawn = 0
        for make in CHART_OF.get(bench, []):
            fig = make(sub, require_trend=True)
            if fig is not None:
                page.figure(fig)
                drawn += 1
        if not drawn and bench in CHART_OF:
            note(page, "One point per series: the table above holds it; no chart is drawn.")
        fig = charts.distribution_figure(sub, bench)
        if fig is not None:
            page.figure(fig, "Box: 25th-75th percentile; whiskers: 1.5 x the box; points: "
                        "samples beyond them. 'stop' is why sampling ended.")
    telemetry = [f for f in (charts.clocks_figure(c, True), charts.energy_figure(c, True)) if f]
    if telemetry:
        page.add("<h2>Telemetry and energy</h2>")
        for fig in telemetry:
            page.figure(fig)
    for _, fig in charts.multi_gpu_heatmaps([doc]):
        page.figure(fig)
    if terminal:
        page.add("<h2>As in the terminal</h2>")
        page.add(f"<pre>{esc(terminal)}</pre>")
    return page


def percent(x):
    return "-" if x is None else f"{100 * x:+.1f}%"


def row_name(row):
    return f"{row['benchmark']} {params_text(row.get('params', {}))}: {row['measurement']}"


def compare_chart(rows, title):
    """Each row's change with its interval, against its threshold band (+-limit)."""
    plt = charts.plt
    fig, ax = plt.subplots(figsize=(10, 1.6 + 0.3 * len(rows)))
    colours = {"slower": "tab:red", "faster": "tab:green", "same": "tab:blue",
               "inconclusive": "tab:gray"}
    for y, row in enumerate(rows):
        limit = 100 * row.get("limit", 0)
        ax.barh(y, 2 * limit, left=-limit, height=0.8, color="#eeeeee",
                label="threshold band (+-limit)" if y == 0 else None)
        lo, hi = row["interval"].get("lo"), row["interval"].get("hi")
        change = 100 * row["change"]
        lo = change if lo is None else 100 * lo
        hi = change if hi is None else 100 * hi
        ax.errorbar([change], [y], xerr=[[change - min(lo, change)], [max(hi, change) - change]],
                    fmt="o", color=colours.get(row["verdict"], "black"), capsize=3)
    for verdict, colour in colours.items():
        if any(r["verdict"] == verdict for r in rows):
            ax.plot([], [], "o", color=colour, label=verdict)
    ax.axvline(0, color="black", linewidth=0.8)
    # The parameters that tell the rows apart, not those every row shares: labels stay short.
    values = {}
    for r in rows:
        for k, v in r.get("params", {}).items():
            values.setdefault(k, set()).add(json.dumps(v, sort_keys=True))
    keys = [k for k, v in values.items() if len(v) > 1]
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([f"{r['benchmark']} "
                        f"{params_text({k: r['params'][k] for k in keys if k in r['params']})}: "
                        f"{r['measurement']}" for r in rows], fontsize="small")
    ax.invert_yaxis()
    charts.set_title(ax, title)
    charts.finish(ax, "change of the median time, NEW vs BASE (%), with its interval "
                  "(positive = slower)", "")
    return fig


def compare_page(cmp, base, new, terminal):
    page = Page("gpubench compare: " + ", ".join(p for p, _ in base) + " vs "
                + ", ".join(p for p, _ in new))
    environment(page, base, "BASE")
    environment(page, new, "NEW")
    s = cmp.get("summary", {})
    page.add("<h2>Verdicts</h2>")
    page.add(f"<p>{s.get('regressions', 0)} regression(s) among {s.get('gated', 0)} gated rows; "
             f"{s.get('slower', 0)} slower, {s.get('faster', 0)} faster, {s.get('same', 0)} same, "
             f"{s.get('inconclusive', 0)} inconclusive; {s.get('compared', 0)} of "
             f"{s.get('base_measurements', 0)} BASE measurements compared. Threshold "
             f"{100 * cmp.get('threshold', 0):.1f}%, {100 * (1 - cmp.get('alpha', 0.1)):.0f}% "
             f"intervals. {esc(cmp.get('test', ''))}.</p>")
    for text in cmp.get("warnings", []) + cmp.get("notes", []):
        note(page, text)
    rows = cmp.get("rows", [])
    page.add(table(["benchmark", "point", "measurement", "clock", "BASE median", "NEW median",
                    "change", "interval", "limit", "verdict", "gated"],
                   [[r["benchmark"], params_text(r.get("params", {})), r["measurement"],
                     r.get("clock", ""), charts.format_seconds(r["base"]["median"]),
                     charts.format_seconds(r["new"]["median"]), percent(r["change"]),
                     f"[{percent(r['interval'].get('lo'))}, {percent(r['interval'].get('hi'))}]",
                     f"{100 * r.get('limit', 0):.1f}%",
                     (r["verdict"] + (" (regression)" if r.get("regression") else ""),
                      r["verdict"] if r["verdict"] in ("slower", "faster") else ""),
                     "gated" if r.get("gated") else "not gated: " + r.get("gate_reason", "")]
                    for r in rows], numeric=(4, 5, 6, 8)))
    gated = [r for r in rows if r.get("gated")]
    if gated:
        page.figure(compare_chart(gated, "Gated rows: change with its interval against the "
                                  "threshold band"),
                    "A row is slower when its whole interval lies right of the band, faster when "
                    "left of it, the same when inside the +-same margin.")
    else:
        note(page, "No gated row: no chart.")
    for side, names in (("Only in BASE", cmp.get("only_in_base", [])),
                        ("Only in NEW", cmp.get("only_in_new", []))):
        if names:
            page.add(f"<h3>{esc(side)}</h3><ul>" + "".join(f"<li>{esc(n)}</li>" for n in names)
                     + "</ul>")
    if terminal:
        page.add("<h2>As in the terminal</h2>")
        page.add(f"<pre>{esc(terminal)}</pre>")
    return page


# ---- history ----

def group_key(doc):
    """Files are one line only when schema, GPUs and benchmarks agree."""
    return (doc.get("schema"), tuple(gpu_names(doc)),
            tuple(sorted({r.get("benchmark", "?") for r in doc.get("results", [])})))


def measurement_key(raw, m):
    return (raw.get("benchmark"), json.dumps(raw.get("params", {}), sort_keys=True), m["name"])


def run_label(doc, index):
    meta = doc.get("meta", {})
    git = str(meta.get("git", "") or "")[:12] or "?"
    date = str(meta.get("started_at", "") or "")[:16].replace("T", " ")
    return f"{index + 1}: {git} {date}".strip()


def listed(paths, limit=5):
    """The first `limit` paths, then how many more."""
    more = f" and {len(paths) - limit} more" if len(paths) > limit else ""
    return ", ".join(paths[:limit]) + more


def group_notes(page, members, dated):
    """What a group's files lack: a date (runs kept in the order given), a git revision."""
    if not dated:
        missing = [m[1] for m in members if not m[2].get("meta", {}).get("started_at")]
        note(page, "No date in the meta of " + listed(missing)
             + ": the runs of this group are in the order the files were given.")
    no_git = [m[1] for m in members if not m[2].get("meta", {}).get("git")]
    if no_git:
        note(page, "No git revision in the meta of " + listed(no_git) + ".")


def group_marks(page, group, members, labels, changes):
    """compare's rows for each pair of consecutive runs, by measurement key and run index; the
    slower and faster ones appended to `changes`."""
    marks = {}
    for i, cmp in enumerate(group.get("comparisons", []), 1):
        if "error" in cmp:
            note(page, f"{labels[i - 1]} -> {labels[i]}: not compared ({cmp['error']})")
            continue
        for row in cmp.get("rows", []):
            key = (row["benchmark"], json.dumps(row.get("params", {}), sort_keys=True),
                   row["measurement"])
            marks.setdefault(key, {})[i] = row
            if row["verdict"] in ("slower", "faster"):
                changes.append((members[i][2].get("meta", {}).get("started_at", ""), i,
                                labels[i - 1], labels[i], row))
    return marks


def group_series(members):
    """measurement key -> run index -> measurement, rank 0's results that ran."""
    series = {}
    for i, (_, _, doc) in enumerate(members):
        for raw in doc.get("results", []):
            if raw.get("rank", 0) > 0 or raw.get("status", "ok") not in ("ok", "failed"):
                continue
            for m in raw.get("measurements", []):
                series.setdefault(measurement_key(raw, m), {})[i] = m
    return series


def history_group(page, gi, group, files, changes):
    """One group of the history: its heading, notes, runs and a trend chart per measurement."""
    members = [(index, files[index][0], files[index][1]) for index in group["files"]]
    schema, gpus, benches = group_key(members[0][2])
    page.add(f"<h2>Group {gi + 1}: {esc(', '.join(gpus))}; {esc(', '.join(benches))} "
             f"({esc(schema)}, {len(members)} files)</h2>")
    group_notes(page, members, group.get("dated", False))
    environment(page, [(m[1], m[2]) for m in members], "Runs, in order")
    labels = [run_label(m[2], i) for i, m in enumerate(members)]
    marks = group_marks(page, group, members, labels, changes)
    series = group_series(members)
    for k, points in series.items():
        if len(points) >= 2:
            page.chart(trend_chart, (k, points, labels, marks.get(k, {})))
    flat = [k for k, v in series.items() if len(v) < 2]
    if flat:
        note(page, f"{len(flat)} measurement(s) appear in one run only: no trend.")


def history_page(files, plan, jobs=1):
    """The runs of `files` in the groups and order `plan` gives (gpubench's history_comparisons:
    one group per schema, GPUs and benchmarks; runs by start time), with compare's verdict on each
    pair of consecutive runs as gpubench computed it."""
    page = Page(f"gpubench history: {len(files)} result files", jobs)
    groups = plan.get("groups", [])
    if len(groups) > 1:
        note(page, f"The files are of {len(groups)} configurations (schema, GPU, benchmarks): "
             "each is a group of its own below, never averaged with another.")
    changes = []
    for gi, group in enumerate(groups):
        history_group(page, gi, group, files, changes)
    page.add(f"<h2>Last {LAST_CHANGES} changes</h2>")
    changes.sort(key=lambda c: (c[0], c[1]), reverse=True)
    if changes:
        page.add(table(["from", "to", "measurement", "change", "interval", "verdict", "gated"],
                       [[a, b, row_name(r), percent(r["change"]),
                         f"[{percent(r['interval'].get('lo'))}, "
                         f"{percent(r['interval'].get('hi'))}]",
                         (r["verdict"], r["verdict"]), "yes" if r.get("gated") else "no"]
                        for _, _, a, b, r in changes[:LAST_CHANGES]], numeric=(3,)))
    else:
        page.add("<p>No consecutive runs differ by compare's rule.</p>")
    return page


def trend_chart(key, points, labels, marks):
    """Median time per run in commit order, 25th-75th percentile band, compare's verdicts."""
    plt = charts.plt
    bench, params, name = key
    xs = sorted(points)
    med = [charts.median(points[i]) for i in xs]
    lo, hi = [], []
    for i, y in zip(xs, med):
        s = charts.raw_samples(points[i])
        lo.append(charts.percentile(s, 0.25) if s else y)
        hi.append(charts.percentile(s, 0.75) if s else y)
    scale, unit = next(((f, u) for f, u in ((1.0, "s"), (1e-3, "ms"), (1e-6, "us"))
                        if max(med) >= f), (1e-9, "ns"))
    fig, ax = plt.subplots(figsize=(9, 3.2))
    ax.fill_between(xs, [v / scale for v in lo], [v / scale for v in hi], alpha=0.25,
                    color="tab:blue", label="25th-75th percentile")
    ax.plot(xs, [v / scale for v in med], marker="o" if len(xs) <= 30 else None, markersize=3,
            color="tab:blue", label="median")
    for verdict, marker, colour in (("slower", "^", "tab:red"), ("faster", "v", "tab:green")):
        hit = [i for i in xs if marks.get(i, {}).get("verdict") == verdict]
        if hit:
            ax.scatter(hit, [charts.median(points[i]) / scale for i in hit], marker=marker, s=90,
                       color=colour, zorder=3, label=f"{verdict} than the run before (compare)")
    step = max(1, len(labels) // 12)
    ticks = list(range(0, len(labels), step))
    ax.set_xticks(ticks)
    ax.set_xticklabels([labels[i] for i in ticks], rotation=30, ha="right", fontsize="x-small")
    ax.set_ylim(bottom=0)
    params_obj = json.loads(params)
    charts.set_title(ax, f"{bench} {params_text(params_obj)}: {name}, median time per run")
    # No grid: a history has hundreds of these charts, and the page must stay small.
    charts.finish(ax, "run (commit order: git, date)", f"time ({unit}, axis from 0)")
    ax.grid(False)
    return fig


def main(argv=None):
    parser = argparse.ArgumentParser(description="gpubench's HTML report")
    parser.add_argument("--kind", choices=("run", "history", "compare"), required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--terminal", help="the terminal rendering to include")
    parser.add_argument("--history", help="the history's groups and comparisons (history)")
    parser.add_argument("--comparison", help="compare's JSON (compare)")
    parser.add_argument("--base", nargs="*", default=[])
    parser.add_argument("--new", nargs="*", default=[])
    parser.add_argument("--jobs", type=int, default=0,
                        help="processes that draw a history's charts (default: the CPUs this "
                             "process may use, at most 16)")
    parser.add_argument("files", nargs="*")
    args = parser.parse_args(argv)
    try:
        charts.use_matplotlib()
    except ImportError:
        sys.stderr.write("gpubench: --format html draws its charts with matplotlib, and "
                         + charts.MATPLOTLIB_MISSING.format(
            exe=sys.executable, version=sys.version.split()[0]) + "\n")
        return 2
    terminal = None
    if args.terminal:
        with open(args.terminal, encoding="utf-8") as f:
            terminal = f.read()
    try:
        if args.kind == "compare":
            with open(args.comparison, encoding="utf-8") as f:
                cmp = json.load(f)
            page = compare_page(cmp, [(p, charts.read_document(p)) for p in args.base],
                                [(p, charts.read_document(p)) for p in args.new], terminal)
        elif args.kind == "run" and len(args.files) == 1:
            page = run_page(args.files[0], charts.read_document(args.files[0]), terminal)
        else:
            with open(args.history, encoding="utf-8") as f:
                plan = json.load(f)
            page = history_page([(p, charts.read_document(p)) for p in args.files], plan,
                                args.jobs if args.jobs > 0 else default_jobs())
    except charts.NotAResult as e:
        print(f"gpubench: {e}", file=sys.stderr)
        return 2
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(page.render())
    return 0


if __name__ == "__main__":
    sys.exit(main())
