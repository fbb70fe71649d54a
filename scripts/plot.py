#!/usr/bin/python3
"""Draw the figures of gpubench result files (schema gpubench/1) as PNG (and SVG).

usage: plot.py RESULT.json [RESULT.json ...] --out DIR [--svg]

Writes, for whatever the files contain:
  vecadd-bandwidth.png  kernel bandwidth vs elements per kernel and dtype, with the theoretical
                        and the measured (D2D copy) peak as lines, and the CPU reference
  vecadd-transfers.png  H2D and D2H bandwidth vs elements (pinned and/or pageable host memory)
  stream-bandwidth.png  stream's kernels' bandwidth vs elements, with the same peaks
  augment-throughput.png images/s vs batch for the CPU baselines and each GPU implementation
  pipeline-steps.png    steps/s vs batch per mode, with the ideal overlap, one panel per scenario
  roofline.png          the measured (solid) and theoretical (dashed) roofs of roofline results,
                        every GPU row that declares its FLOPs as a point (docs/roofline.md)
  energy-per-op.png     J per element/image/step vs size, gross and net of idle (--energy)
  clocks-over-sweep.png SM clock (min, median) of every GPU measurement in order, flags circled
  multi-gpu-heatmap.png for a merged multi-GPU file (--concurrent or MPI, docs/multi-gpu.md): rank
                        x measurement, each rank's median time over the median across ranks
                        (the other figures show rank 0 of such a file)
Bandwidth axes start at 0. The figures are those of `gpubench report --format html`: both draw
them with the module gpubench.charts (python/gpubench/charts.py).
Only matplotlib (Debian's python3-matplotlib) is needed; without it, or for a file that is not a
gpubench/1 result, the script says why and exits 2.
"""
import argparse
import os
import sys

# The chart module: python/ of the source tree (or /usr/share/gpubench/python, as the .deb installs
# it, when the script is copied there).
_HERE = os.path.dirname(os.path.abspath(__file__))
for _candidate in (os.path.join(_HERE, "..", "python"), os.path.join(_HERE, "python")):
    if os.path.isfile(os.path.join(_candidate, "gpubench", "charts.py")):
        sys.path.insert(0, os.path.abspath(_candidate))
        break
from gpubench import charts  # noqa: E402


def save(fig, path, **options):
    """Saves `fig` at `path` as gpubench writes every file (docs/reliability.md, "Files that
    cannot be turned"): into a new temporary file beside it, renamed over it, and an existing
    `path` replaced only if it is a regular file of this user with one link (a symlink or a hard
    link planted there is refused: ValueError naming it)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    if st is not None:
        import stat  # pylint: disable=import-outside-toplevel
        why = ("is a symlink" if stat.S_ISLNK(st.st_mode)
               else "is not a regular file" if not stat.S_ISREG(st.st_mode)
               else f"has {st.st_nlink} hard links" if st.st_nlink != 1
               else f"belongs to another user (uid {st.st_uid})" if st.st_uid != os.geteuid()
               else "")
        if why:
            raise ValueError(f"{path}: {why}; remove it or give another --out")
    import tempfile  # pylint: disable=import-outside-toplevel
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".",
                               dir=os.path.dirname(path) or ".")
    try:
        with os.fdopen(fd, "wb") as f:
            fig.savefig(f, format=os.path.splitext(path)[1][1:], **options)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("files", nargs="+", metavar="RESULT.json")
    parser.add_argument("--out", default="plots", help="folder for the figures (created)")
    parser.add_argument("--svg", action="store_true", help="also write SVG next to each PNG")
    args = parser.parse_args(argv)
    try:
        plt = charts.use_matplotlib()
    except ImportError:
        sys.stderr.write("plot.py: " + charts.MATPLOTLIB_MISSING.format(
            exe=sys.executable, version=sys.version.split()[0]) + "\n")
        return 2
    try:
        docs = [charts.read_document(p) for p in args.files]
    except charts.NotAResult as e:
        print(f"plot.py: {e}", file=sys.stderr)
        return 2
    collection = charts.Collection(docs)
    os.makedirs(args.out, exist_ok=True)
    written = []
    for name, fig in charts.figures(collection) + charts.multi_gpu_heatmaps(docs):
        charts.finalize(fig)
        try:
            path = os.path.join(args.out, name + ".png")
            save(fig, path, dpi=120)
            written.append(path)
            if args.svg:
                path = os.path.join(args.out, name + ".svg")
                save(fig, path)
                written.append(path)
        except ValueError as e:
            print(f"plot.py: {e}", file=sys.stderr)
            return 2
        plt.close(fig)
    if not written:
        print("plot.py: nothing to plot in these files", file=sys.stderr)
        return 1
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
