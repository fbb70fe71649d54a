"""scripts/plot.py: the figures are written, non-empty, as PNG (and SVG with --svg)."""
import json
import os
import subprocess
import tempfile
import unittest

from gpubench_cli import FAST, PLOT_PYTHON, SYNTHETIC_H200, recorded_results, run

SOURCE_DIR = os.environ.get("GPUBENCH_SOURCE_DIR",
                            os.path.join(os.path.dirname(__file__), "..", ".."))
PLOT = os.path.join(SOURCE_DIR, "scripts", "plot.py")
# Real results measured on an NVIDIA H200, read where docs/results keeps them.
H200_DIR = recorded_results("h200-2026-11-29/first-run")
H200_FILES = [os.path.join(H200_DIR, f)
              for f in ("augment.json", "pipeline-sweep.json", "vecadd-2p28.json")]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
FIGURES = ["vecadd-bandwidth", "vecadd-transfers", "augment-throughput", "pipeline-steps"]


def plot(*args):
    return subprocess.run([PLOT_PYTHON, PLOT, *args], capture_output=True, text=True, timeout=300,
                          check=False)


LAYOUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "chart_layout.py")


class Layout(unittest.TestCase):
    """Charts that read: no title, label or legend cut at the figure's edge, no legend over the
    data, plain tick labels, the batch axis at the batches measured, box plots zoomed to the
    bulk, titles that say what the chart holds (tests/cli/chart_layout.py draws them)."""

    def layout(self, *files):
        proc = subprocess.run([PLOT_PYTHON, LAYOUT, *files], capture_output=True, text=True,
                              timeout=300, check=False)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertNotIn("PROBLEM", proc.stdout)
        self.assertIn("CHECKED", proc.stdout)
        return proc.stdout

    def test_h200_results_and_the_synthetic_file(self):
        out = self.layout(*H200_FILES)
        self.assertIn("GPU implementations and CPU baselines", out)
        self.assertNotRegex(out, r"TICKS .*(\^|e\+|\$)")
        self.layout(SYNTHETIC_H200)

    def test_a_cpu_only_augment_sweep_says_so_and_labels_its_batches(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "aug.json")
            proc = run("augment", "--cpu-only", "--batch", "2,8", "--size", "48", "--crop", "32",
                       "--resize", "40", *FAST, "-q", "--output", path)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            out = self.layout(path)
        title = next(l for l in out.splitlines() if l.startswith("AUGMENT TITLE"))
        self.assertIn("CPU baselines", title)
        self.assertNotIn("GPU", title)
        self.assertIn("AUGMENT XTICKS 2 8\n", out)
        yticks = next(l for l in out.splitlines() if l.startswith("AUGMENT YTICKS"))
        self.assertGreaterEqual(len(yticks.split()), 4, "a narrow range still has labels")

    def test_the_roofline_chart_draws_roofs_and_every_row_with_flops(self):
        with open(SYNTHETIC_H200, encoding="utf-8") as f:
            doc = json.load(f)
        device = doc["devices"][0]["id"]

        def kernel(bytes_, flops, median):
            return {"name": "kernel", "clock": "gpu", "unit": "s", "cold": True,
                    "converged": True, "stats": {"count": 3, "min": median, "median": median,
                                                 "mean": median, "max": median, "stddev": 0,
                                                 "rel_stddev": 0},
                    "samples": [median] * 3, "bytes": bytes_, "items": flops, "flops": flops,
                    "item_unit": "FLOP",
                    "rates": {"bytes_per_s": bytes_ / median, "flops_per_s": flops / median,
                              "arithmetic_intensity": flops / bytes_}}
        for dtype, peak in (("f32", 66.9e12), ("f16", 133.8e12)):
            for intensity in (0.25, 4, 64):
                flops = 1e9 * intensity
                median = max(1e9 / 4.4e12, flops / (0.9 * peak))
                doc["results"].append({
                    "benchmark": "roofline", "device": device, "status": "ok",
                    "params": {"n": 2 ** 27, "dtype": dtype, "intensity": intensity},
                    "measurements": [kernel(1e9, flops, median)],
                    "derived": {"theoretical_bytes_per_s": 4.8e12,
                                "theoretical_flops_per_s": peak},
                    "verification": {"performed": True, "passed": True}, "converged": True})
        gemm = kernel(3 * 2 * 8192 ** 2, 2 * 8192 ** 3, 1.6e-3)
        doc["results"].append({"benchmark": "gemm", "device": device, "status": "ok",
                               "params": {"m": 8192, "n": 8192, "k": 8192, "dtype": "bf16"},
                               "measurements": [gemm], "derived": {},
                               "verification": {"performed": True, "passed": True},
                               "converged": True})
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "roofs.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(doc, f)
            out = self.layout(path)
        legend = next(l for l in out.splitlines() if l.startswith("ROOFLINE LEGEND"))
        for text in ("f32 measured (ridge", "f32 theoretical", "f16 measured", "f16 theoretical",
                     "gemm 8192 8192 8192 bf16: kernel"):
            self.assertIn(text, legend)

    def test_one_outlier_does_not_stretch_a_box_plot(self):
        with open(SYNTHETIC_H200, encoding="utf-8") as f:
            doc = json.load(f)
        doc["results"] = doc["results"][:1]
        doc["results"][0]["measurements"] = doc["results"][0]["measurements"][:1]
        m = doc["results"][0]["measurements"][0]
        m["samples"] = [1e-3 * (1 + 0.01 * (i % 7)) for i in range(150)] + [12e-3]
        m["stats"]["median"] = 1.03e-3
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "outlier.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(doc, f)
            out = self.layout(path)
        xlim = float(next(l for l in out.splitlines()
                          if l.startswith("DISTRIBUTION vecadd")).split()[-1])
        self.assertLess(xlim, 2.0, "the axis stops at the bulk, not at the 12x outlier")


class Plot(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def assert_png(self, path):
        self.assertTrue(os.path.exists(path), path)
        with open(path, "rb") as f:
            head = f.read(8)
        self.assertEqual(head, PNG_SIGNATURE, path)
        self.assertGreater(os.path.getsize(path), 10_000, path)  # a drawn figure, not a stub

    def test_every_figure_from_h200_results(self):
        self.assertTrue(H200_FILES)
        out = os.path.join(self.tmp.name, "plots")
        proc = plot(*H200_FILES, "--out", out, "--svg")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        for name in FIGURES:
            with self.subTest(figure=name):
                self.assert_png(os.path.join(out, name + ".png"))
                svg = os.path.join(out, name + ".svg")
                with open(svg, encoding="utf-8") as f:
                    text = f.read()
                self.assertIn("<svg", text)
                self.assertIn("NVIDIA H200", text)  # the title names the GPU
        self.assertEqual(sorted(proc.stdout.split()),
                         sorted(os.path.join(out, n + e) for n in FIGURES for e in (".png", ".svg")))

    def test_a_planted_link_in_place_of_a_figure_is_refused(self):
        out = os.path.join(self.tmp.name, "plots")
        os.mkdir(out)
        victim = os.path.join(self.tmp.name, "victim")
        with open(victim, "w", encoding="utf-8") as f:
            f.write("precious")
        os.symlink(victim, os.path.join(out, "vecadd-bandwidth.png"))
        proc = plot(*H200_FILES, "--out", out)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("vecadd-bandwidth.png: is a symlink", proc.stderr)
        with open(victim, encoding="utf-8") as f:
            self.assertEqual(f.read(), "precious")
        self.assertFalse([n for n in os.listdir(out) if n.startswith(".")], "no temporary left")

    def test_png_only_without_svg(self):
        proc = plot(*H200_FILES, "--out", self.tmp.name)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(sorted(os.listdir(self.tmp.name)), sorted(n + ".png" for n in FIGURES))

    def test_only_what_the_file_holds_is_drawn(self):
        with open(next(f for f in H200_FILES if "augment" in f), encoding="utf-8") as f:
            doc = json.load(f)
        doc["results"] = [r for r in doc["results"] if r["benchmark"] == "augment"]
        path = os.path.join(self.tmp.name, "augment.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        out = os.path.join(self.tmp.name, "out")
        proc = plot(path, "--out", out)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(os.listdir(out), ["augment-throughput.png"])
        self.assert_png(os.path.join(out, "augment-throughput.png"))

    def test_a_file_that_is_not_a_result_is_refused(self):
        path = os.path.join(self.tmp.name, "other.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"schema": "something-else"}, f)
        proc = plot(path, "--out", self.tmp.name)
        self.assertEqual(proc.returncode, 2)  # bad input, as docs/errors.md numbers it
        self.assertIn("not a gpubench/1 result file", proc.stderr)

    def test_a_file_that_is_not_json_is_refused(self):
        path = os.path.join(self.tmp.name, "notes.json")
        with open(path, "w", encoding="utf-8") as f:
            f.write("not json")
        proc = plot(path, "--out", self.tmp.name)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("not a JSON file", proc.stderr)

    def test_titles_say_what_is_plotted_and_bandwidth_starts_at_zero(self):
        with open(SYNTHETIC_H200, encoding="utf-8") as f:
            doc = json.load(f)
        doc["results"] = [r for r in doc["results"] if r["params"].get("memory") != "pageable"]
        path = os.path.join(self.tmp.name, "pinned.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        out = os.path.join(self.tmp.name, "plots")
        proc = plot(path, "--out", out, "--svg")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(os.path.join(out, "vecadd-transfers.svg"), encoding="utf-8") as f:
            text = f.read()
        # Pinned memory only: the title must not promise pageable.
        self.assertIn("pinned host memory", text)
        self.assertNotIn("pinned vs pageable", text)
        for name in ("vecadd-bandwidth", "vecadd-transfers"):
            with open(os.path.join(out, name + ".svg"), encoding="utf-8") as f:
                self.assertIn("bandwidth (GB/s)", f.read())
        with open(os.path.join(out, "pipeline-steps.svg"), encoding="utf-8") as f:
            self.assertIn("scenario ", f.read())


if __name__ == "__main__":
    unittest.main()
