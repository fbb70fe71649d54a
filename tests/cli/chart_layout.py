"""Draws every chart gpubench draws for the result files given (as scripts/plot.py and the HTML
page do: tight_layout, then saved) and prints what a reader would find cut or covered
(charts.layout_problems), one line each, then the augment chart's title and x tick labels.
Run by test_plot.py with the interpreter that has matplotlib: chart_layout.py FILE..."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
from gpubench import charts  # noqa: E402

charts.use_matplotlib()
docs = [charts.read_document(f) for f in sys.argv[1:]]
c = charts.Collection(docs)
figures = charts.figures(c) + charts.multi_gpu_heatmaps(docs)
for benchmark in sorted({r.benchmark for r in c.results}):
    fig = charts.distribution_figure(c, benchmark)
    if fig is not None:
        figures.append((f"{benchmark}-distribution", fig))
for name, fig in figures:
    charts.finalize(fig)
    for problem in charts.layout_problems(fig):
        print(f"PROBLEM {name}: {problem}")
    if name == "augment-throughput":
        ax = fig.axes[0]
        print("AUGMENT TITLE " + ax.get_title().replace("\n", " "))
        print("AUGMENT XTICKS " + " ".join(t.get_text() for t in ax.get_xticklabels()))
        print("AUGMENT YTICKS " + " ".join(t.get_text() for t in ax.get_yticklabels()))
    if name == "roofline":
        texts = fig.axes[0].get_legend().get_texts()
        print("ROOFLINE LEGEND " + " | ".join(t.get_text() for t in texts))
    if name.endswith("-distribution"):
        print(f"DISTRIBUTION {name} XLIM {fig.axes[0].get_xlim()[1]:.3f}")
    charts.plt.close(fig)
print(f"CHECKED {len(figures)}")
