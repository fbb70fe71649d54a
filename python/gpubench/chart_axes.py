"""Axes and layout helpers of gpubench's charts (charts.py): wrapped titles, plain tick labels on
log axes, and the layout check that no text leaves a figure or overlaps another."""
import math
import textwrap


def wrapped(text, width_inches, fontsize):
    """`text` folded at spaces into lines that fit `width_inches` at `fontsize` points (a glyph of
    DejaVu Sans is at most about 0.6 of the size wide)."""
    chars = max(20, int(width_inches * 72 / (0.6 * fontsize)))
    return "\n".join(textwrap.wrap(text, chars)) or text


def count_text(v):
    """A tick label as people write sizes: 8, 512, 64Ki, 16Mi for powers of two, else 1.5k, 3M."""
    if v <= 0:
        return "0"
    for unit, scale in (("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
        if v >= scale and v % scale == 0:
            return f"{int(v // scale)}{unit}"
    if float(v).is_integer() and v < 10000:
        return str(int(v))
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if v >= scale:
            return f"{v / scale:.3g}{unit}"
    return f"{v:.3g}"


def plain_log_x(ax, xs):
    """A log-2 x axis whose ticks are the sizes measured, written plainly (8, not 2^3); at most
    about ten labels, the ends always among them."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator  # noqa: E402
    ax.set_xscale("log", base=2)
    values = sorted({x for x in xs if x and x > 0})
    if not values:
        return
    step = max(1, math.ceil(len(values) / 10))
    ticks = values[::step]
    if ticks[-1] != values[-1]:
        ticks.append(values[-1])
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: count_text(v)))
    ax.xaxis.set_minor_locator(NullLocator())


def plain_log_y(ax):
    """A log y axis labelled 300, 1k, 30k (no 3 x 10^3): at 1, 2 and 5 of each decade when the
    data span two decades or less (so that a narrow range still has labels), else at each
    decade."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter  # noqa: E402
    ax.set_yscale("log")
    low, high = ax.get_ylim()
    narrow = low > 0 and high / low <= 100
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0) if narrow else (1.0,)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: count_text(v)))
    ax.yaxis.set_minor_formatter(NullFormatter())


def xs_of(series):
    return [x for points in series.values() for x in points]


def layout_problems(fig):
    """What a reader would see cut or covered in `fig`, as text: a text (title, label, tick label,
    legend) reaching beyond the figure, or a legend over an axes' data area. Empty when none."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    box = fig.bbox
    problems = []
    texts = list(fig.texts)
    if getattr(fig, "_suptitle", None) is not None:
        texts.append(fig._suptitle)  # pylint: disable=protected-access
    for ax in fig.axes:
        texts += [ax.title, ax._left_title, ax._right_title,  # pylint: disable=protected-access
                  ax.xaxis.label, ax.yaxis.label]
        for axis, (lo, hi) in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
            lo, hi = min(lo, hi), max(lo, hi)
            # Ticks outside the view limits are not drawn: only the drawn labels count.
            texts += [t.label1 for t in axis.get_major_ticks()
                      if lo <= t.get_loc() <= hi and t.label1.get_visible()]
        legend = ax.get_legend()
        if legend is not None:
            lb = legend.get_window_extent(renderer)
            if lb.overlaps(ax.get_window_extent(renderer)):
                problems.append("a legend covers the data of the axes titled "
                                f"{ax.get_title()[:60]!r}")
            texts += list(legend.get_texts())
    for t in texts:
        if t is None or not t.get_text() or not t.get_visible():
            continue
        b = t.get_window_extent(renderer)
        if b.x0 < box.x0 - 1 or b.y0 < box.y0 - 1 or b.x1 > box.x1 + 1 or b.y1 > box.y1 + 1:
            problems.append(f"text cut at the figure's edge: {t.get_text()[:60]!r}")
    return problems
