"""The pieces every gpubench HTML page is built of (html_report.py): escaping, the page and its
style, tables, the environment block, the text of a measurement's cells, SVG compaction."""
import html
import io
import json
import multiprocessing
import os
import re

from gpubench import charts


def esc(text):
    return html.escape(str(text), quote=True)


_DECIMALS = re.compile(r"(-?\d+\.\d)\d+")


_WHOLE = re.compile(r"(-?\d+)\.(\d)\d*")


def whole(m):
    value = int(m.group(1))
    if m.group(2) >= "5":
        value += -1 if m.group(1).startswith("-") else 1
    return str(value)


def compact_path(d):
    """A path's data with a tenth of a point (whole points for a path of over 40 points: a
    trend line across many runs), and no spaces around its commands."""
    d = " ".join((_WHOLE.sub(whole, d) if d.count("L") > 40 else _DECIMALS.sub(r"\1", d)).split())
    return re.sub(r" ?([MLQCZz]) ?", r"\1", d)


def compact_svg(svg):
    """Coordinates to a tenth of a point (a 72 dpi figure: far below a pixel), one line per
    path: a history of 100 runs has hundreds of charts, and the page must stay small."""
    svg = re.sub(r' d="([^"]*)"', lambda m: ' d="' + compact_path(m.group(1)) + '"', svg)
    svg = re.sub(r' (x|y|width|height|x1|x2|y1|y2)="(-?[\d.]+)"',
                 lambda m: " " + m.group(1) + '="' + _DECIMALS.sub(r"\1", m.group(2)) + '"', svg)
    # matplotlib names every font it would try in each text's style: the page's sans-serif
    # stands for them once (the family list alone is 200 bytes a label).
    # (matplotlib 3.6 writes "font: 10px 'DejaVu Sans', ...", later ones "font-family: ...").
    svg = re.sub(r"(font: [\d.]+px |font-family: )'[^;\"]*sans-serif", r"\1sans-serif", svg)
    svg = re.sub(r' transform="rotate\(-0 [^"]*\)"', "", svg)
    # The ids matplotlib gives its groups (figure_1, text_20) repeat in every chart of the page,
    # and nothing refers to them; the ids that are referred to (clip paths, markers) are salted.
    svg = re.sub(r' id="(?:figure|axes|patch|line2d|text|xtick|ytick|matplotlib\.axis|legend|'
                 r'PolyCollection|PathCollection|LineCollection|FillBetweenPolyCollection|'
                 r'errorbar|bar|BarContainer)_\d+"', "", svg)
    return re.sub(r">\s+<", "><", svg)


def svg_of(fig, index):
    """`fig` as SVG text for the page (the glyphs left to the browser's sans-serif: no web font),
    its ids salted with the chart's number `index`: several SVGs share one document. Closes it."""
    plt = charts.plt
    with plt.rc_context({"svg.fonttype": "none", "svg.hashsalt": f"chart{index}"}):
        charts.finalize(fig)
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None})
    plt.close(fig)
    svg = buf.getvalue()
    svg = svg[svg.index("<svg"):]
    svg = re.sub(r"<metadata>.*?</metadata>", "", svg, flags=re.S)
    svg = compact_svg(svg)
    # Scales with the page; the width and height attributes stay as the intrinsic size.
    return svg.replace("<svg ", '<svg class="chart" role="img" ', 1)


def figure_html(svg, caption):
    cap = f"<figcaption>{esc(caption)}</figcaption>" if caption else ""
    return f'<figure class="chart">{svg}{cap}</figure>'


_TASKS = []  # Page.draw_deferred's charts, read by the processes it forks (nothing is pickled)


def draw(i):
    """Deferred chart i (Page.chart): make(*args) drawn as chart number `index`."""
    make, args, index = _TASKS[i]
    return svg_of(make(*args), index)


def default_jobs():
    """The processes a page's charts are drawn in: the CPUs this process may run on, at most 16."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, 16))


class Page:
    """The page being built: its sections, and each inlined chart with a unique id prefix. Charts
    given to chart() are drawn when the page is rendered, in `jobs` processes where there are
    several (forked: they inherit the charts' data and what the page has loaded, and send back
    only the SVG text); the page is the same either way."""

    def __init__(self, title, jobs=1):
        self.title = title
        self.parts = []
        self.charts = 0
        self.jobs = jobs
        self.deferred = []  # (index in parts, make, args, chart number, caption)

    def add(self, text):
        self.parts.append(text)

    def figure(self, fig, caption=""):
        """Inlines `fig` now, and closes it."""
        self.charts += 1
        self.add(figure_html(svg_of(fig, self.charts), caption))

    def chart(self, make, args, caption=""):
        """Inlines the figure `make(*args)` returns, drawn at render()."""
        self.charts += 1
        self.deferred.append((len(self.parts), make, args, self.charts, caption))
        self.parts.append("")

    def draw_deferred(self):
        _TASKS[:] = [(make, args, number) for _, make, args, number, _ in self.deferred]
        workers = min(self.jobs, len(_TASKS))
        if workers > 1 and "fork" in multiprocessing.get_all_start_methods():
            with multiprocessing.get_context("fork").Pool(workers) as pool:
                svgs = pool.map(draw, range(len(_TASKS)))
        else:
            svgs = [draw(i) for i in range(len(_TASKS))]
        _TASKS.clear()
        for (part, _, _, _, caption), svg in zip(self.deferred, svgs):
            self.parts[part] = figure_html(svg, caption)
        self.deferred = []

    def render(self):
        self.draw_deferred()
        return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                f"<title>{esc(self.title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
                f"<h1>{esc(self.title)}</h1>\n" + "\n".join(self.parts) +
                "\n<footer>Written by gpubench; charts by matplotlib. The page makes no network "
                "request.</footer>\n</body>\n</html>\n")


STYLE = """
body{font-family:sans-serif;margin:1.5em auto;max-width:1200px;padding:0 1em;color:#222}
h1{font-size:1.5em}h2{font-size:1.25em;border-bottom:1px solid #ccc;margin-top:2em}
h3{font-size:1.05em}
table{border-collapse:collapse;margin:.5em 0;font-size:.85em}
th,td{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}
td.num{text-align:right;font-variant-numeric:tabular-nums}
th{background:#f3f3f3}
figure.chart{margin:1em 0}svg.chart{max-width:100%;height:auto}
figcaption{font-size:.85em;color:#555}
pre{background:#f7f7f7;padding:.5em;overflow-x:auto;font-size:.8em}
.note{background:#fff8dc;border-left:4px solid #e0b000;padding:.3em .6em;margin:.5em 0}
.slower{color:#b00000;font-weight:bold}.faster{color:#006000;font-weight:bold}
footer{margin-top:3em;font-size:.8em;color:#777}
"""


def table(header, rows, numeric=()):
    """An HTML table; `numeric` holds the indexes of right-aligned columns. Cells are text, or
    (text, css class)."""
    out = ["<table><thead><tr>" + "".join(f"<th>{esc(h)}</th>" for h in header)
           + "</tr></thead><tbody>"]
    for row in rows:
        cells = []
        for i, cell in enumerate(row):
            text, cls = cell if isinstance(cell, tuple) else (cell, "")
            cls = " ".join(c for c in (cls, "num" if i in numeric else "") if c)
            attr = f' class="{cls}"' if cls else ""
            cells.append(f"<td{attr}>{esc(text)}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def note(page, text):
    page.add(f'<p class="note">{esc(text)}</p>')


def gpu_names(doc):
    return sorted({d.get("name", "?") for d in doc.get("devices", [])}) or ["no GPU"]


def environment_rows(path, doc):
    meta = doc.get("meta", {})
    host, cuda = meta.get("host", {}), meta.get("cuda", {})
    driver = cuda.get("driver", "?")
    if meta.get("nvidia_driver") or cuda.get("nvidia_driver"):
        driver = f"{meta.get('nvidia_driver') or cuda.get('nvidia_driver')} (CUDA {driver})"
    cores = f"{host.get('cores', '?')} cores"
    usable = host.get("cores_usable")
    if isinstance(usable, int) and isinstance(host.get("cores"), int) and 0 < usable < host["cores"]:
        cores += f", {usable} usable"  # its CPU affinity: the CPU rows ran on these
    return [path, ", ".join(gpu_names(doc)), driver, cuda.get("runtime", "?"),
            meta.get("git", "?"), meta.get("started_at", "?"),
            f"{host.get('name', '?')} ({host.get('cpu', '?')}, {cores})",
            meta.get("version", "?")]


def environment(page, docs, heading="Environment"):
    page.add(f"<h2>{esc(heading)}</h2>")
    page.add(table(["file", "GPU", "driver", "CUDA runtime", "git", "started (UTC)", "host",
                    "gpubench"], [environment_rows(p, d) for p, d in docs]))
    for path, doc in docs:
        if doc.get("meta", {}).get("incomplete"):
            note(page, f"{path}: incomplete run ({doc['meta'].get('incomplete_reason', '')})")


def params_text(params):
    return " ".join(f"{k}={v}" for k, v in params.items())


def rate_text(m):
    rates = m.get("rates", {})
    if rates.get("bytes_per_s"):
        return f"{rates['bytes_per_s'] / 1e9:.4g} GB/s"
    if rates.get("items_per_s"):
        return f"{rates['items_per_s']:.4g} {m.get('item_unit', 'items')}/s"
    return ""


def telemetry_text(m):
    t = m.get("telemetry") or {}
    if not t:
        return ""
    if not t.get("available"):
        return "not recorded"
    sm = t.get("sm_clock_mhz") or {}
    parts = [f"SM {sm.get('median', '?')} MHz (min {sm.get('min', '?')})"] if sm else []
    throttled = [f"{k} {100 * v:.0f}%" for k, v in (t.get("throttle") or {}).items() if v]
    if throttled:
        parts.append("throttle " + ", ".join(throttled))
    if t.get("flags"):
        parts.append("flags " + ", ".join(t["flags"]))
    return "; ".join(parts)


def energy_text(m):
    e = m.get("energy") or {}
    if not e:
        return ""
    if not e.get("supported"):
        return "not measured: " + str(e.get("reason", ""))
    return f"{e.get('j_per_op', 0):.4g} J/{e.get('op_unit', 'op')}"


def varying_params(results):
    """The parameter names whose values differ between `results` (the others go in a caption)."""
    values = {}
    for r in results:
        for k, v in r.params.items():
            values.setdefault(k, set()).add(json.dumps(v, sort_keys=True))
    return [k for k, v in values.items() if len(v) > 1]


def measurement_table(results):
    rows = []
    keys = varying_params(results)
    for r in results:
        ver = r.raw.get("verification") or {}
        verdict = ("passed" if ver.get("passed") else "FAILED") if ver.get("performed") else "-"
        if r.status not in ("ok", "failed"):
            rows.append([params_text({k: r.params[k] for k in keys if k in r.params}), r.status,
                         "", "", "", "", "", r.raw.get("reason", ""),
                         "", ""])
            continue
        for name, m in r.measurements.items():
            stats = m.get("stats", {})
            rel = stats.get("rel_stddev")
            rows.append([params_text({k: r.params[k] for k in keys if k in r.params}), name,
                         m.get("clock", ""),
                         charts.format_seconds(stats.get("median")),
                         f"{100 * rel:.2f}%" if rel is not None and stats.get("count", 0) > 1
                         else "-",
                         stats.get("count", ""), m.get("stop_reason", ""), rate_text(m),
                         "; ".join(x for x in (telemetry_text(m), energy_text(m)) if x), verdict])
    return table(["point", "measurement", "clock", "median", "rel. sd", "samples", "stop",
                  "rate", "telemetry, energy", "verification"], rows, numeric=(3, 4, 5, 7))
