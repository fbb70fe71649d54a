"""report/compare --format html: one self-contained page of a run, a comparison or a history."""
import html.parser
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from gpubench_cli import GPUBENCH, PLOT_PYTHON, SOURCE_DIR, SYNTHETIC_H200, run

MAKE_HISTORY = os.path.join(SOURCE_DIR, "tests", "data", "make_history.py")
PAGE_LIMIT = 3 * 1024 * 1024  # docs/usage.md: a 100-file history stays under 3 MB
# The interpreter Debian's python3-matplotlib serves (the binary's default, stated here so that a
# test run under another Python does not change which one the page uses).
PYTHON = PLOT_PYTHON
ENV = {"GPUBENCH_PYTHON": PYTHON}


class PageParser(html.parser.HTMLParser):
    """Collects what the tests check: the doctype, svg charts, every src/href, tag balance."""

    VOID = {"meta", "br", "img", "input", "link", "hr", "col", "area", "base", "source", "wbr"}

    def __init__(self):
        super().__init__()
        self.doctype = None
        self.svgs = 0
        self.links = []
        self.stack = []
        self.errors = []
        self.titles = []
        self._in_title = False

    def handle_decl(self, decl):
        self.doctype = decl

    def handle_starttag(self, tag, attrs):
        if tag == "svg":
            self.svgs += 1
        for name, value in attrs:
            if name in ("src", "href") or name.endswith(":href"):
                self.links.append(value or "")
        if tag == "title":
            self._in_title = True
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        if tag == "svg":
            self.svgs += 1
        for name, value in attrs:
            if name in ("src", "href") or name.endswith(":href"):
                self.links.append(value or "")

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1] if self.stack else 'nothing'}")
            return
        self.stack.pop()
        if tag == "title":
            self._in_title = False

    def handle_data(self, data):
        if self._in_title:
            self.titles.append(data)


def history(folder, n, slow=None):
    args = [PYTHON, MAKE_HISTORY, folder, str(n)] + ([] if slow is None else ["--slow", str(slow)])
    subprocess.run(args, check=True)
    return sorted(os.path.join(folder, f) for f in os.listdir(folder))


class HtmlReport(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="gpubench-html-test-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def page(self, *args, name="page.html", env=None):
        out = os.path.join(self.tmp, name)
        proc = run(*args, "--format", "html", "--output", out, env={**ENV, **(env or {})})
        return proc, out

    def check_page(self, path, min_charts):
        """Valid HTML5 as html.parser reads it, self-contained, with its charts, within size."""
        with open(path, encoding="utf-8") as f:
            text = f.read()
        parser = PageParser()
        parser.feed(text)
        parser.close()
        self.assertEqual((parser.doctype or "").lower(), "doctype html")
        self.assertEqual(parser.errors, [])
        self.assertEqual(parser.stack, [])
        self.assertTrue("".join(parser.titles).strip())
        for link in parser.links:
            self.assertFalse(link.startswith(("http://", "https://", "//")), link)
        self.assertGreaterEqual(parser.svgs, min_charts)
        self.assertLess(os.path.getsize(path), PAGE_LIMIT)
        return text, parser

    def test_a_run(self):
        proc, out = self.page("report", SYNTHETIC_H200)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout, "")  # --format html: the page only, to --output
        text, parser = self.check_page(out, 4)
        for what in ("vecadd kernel bandwidth", "theoretical peak", "augment (crop",
                     "ideal overlap", "sample distribution", "NVIDIA H200", "synthetic CPU"):
            self.assertIn(what, text)
        # The synthetic file has sweeps: each benchmark's chart, and one distribution each.
        self.assertGreaterEqual(parser.svgs, 3 + 3)
        self.assertLess(os.path.getsize(out), 1024 * 1024)

    def test_a_one_point_series_is_a_table_row_not_a_chart(self):
        with open(SYNTHETIC_H200, encoding="utf-8") as f:
            doc = json.load(f)
        doc["results"] = [r for r in doc["results"] if r["benchmark"] == "augment"
                          and r["params"]["batch"] == 32]
        path = os.path.join(self.tmp, "one.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        proc, out = self.page("report", path)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        text, parser = self.check_page(out, 1)
        self.assertNotIn("images/s vs batch", text)
        self.assertIn("One point per series", text)
        self.assertEqual(parser.svgs, 1)  # the sample distribution alone

    def test_a_table_file_beside_the_page(self):
        out = os.path.join(self.tmp, "run.html")
        proc = run("report", SYNTHETIC_H200, "--output", out, env=ENV)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("vecadd", proc.stdout)  # the table on stdout, the page by its extension
        self.check_page(out, 4)

    def test_a_comparison(self):
        files = history(os.path.join(self.tmp, "h"), 2, slow=1)
        proc, out = self.page("compare", files[0], files[1])
        self.assertEqual(proc.returncode, 1, proc.stderr)  # the regression still sets the exit
        text, parser = self.check_page(out, 1)
        self.assertIn("threshold band", text)
        self.assertIn("slower", text)
        self.assertIn("(regression)", text)

    def test_a_history(self):
        files = history(os.path.join(self.tmp, "h"), 6, slow=3)
        proc, out = self.page("report", *reversed(files))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        text, parser = self.check_page(out, 50)
        # Ordered by date, whatever the order given: the labels run 1..6 in commit order.
        self.assertLess(text.index("1: synthetic-00 2026-11-01"),
                        text.index("6: synthetic-00 2026-11-06"))
        self.assertIn("slower than the run before (compare)", text)
        self.assertIn("synthetic-002", text)
        self.assertIn("Last 20 changes", text)
        self.assertNotIn("No date in the meta", text)

    def test_a_history_without_dates_keeps_file_order_and_says_so(self):
        files = history(os.path.join(self.tmp, "h"), 3, slow=0)
        for path in files:
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
            # Both keys are required by the loader; an empty value is what a run without git or
            # clock writes.
            doc["meta"]["started_at"] = ""
            doc["meta"]["git"] = ""
            with open(path, "w", encoding="utf-8") as f:
                json.dump(doc, f)
        proc, out = self.page("report", files[2], files[0], files[1])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        text, _ = self.check_page(out, 10)
        self.assertIn("in the order the files were given", text)
        self.assertIn("No git revision in the meta", text)
        order = [text.index(os.path.basename(files[i])) for i in (2, 0, 1)]
        self.assertEqual(order, sorted(order))

    def test_other_gpus_are_grouped_apart(self):
        files = history(os.path.join(self.tmp, "h"), 4, slow=0)
        with open(files[1], encoding="utf-8") as f:
            doc = json.load(f)
        doc["devices"][0]["name"] = "NVIDIA A100-SXM4-80GB"
        with open(files[1], "w", encoding="utf-8") as f:
            json.dump(doc, f)
        proc, out = self.page("report", *files)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        text, _ = self.check_page(out, 10)
        self.assertIn("each is a group of its own", text)
        self.assertIn("Group 1: NVIDIA H200", text)
        self.assertIn("Group 2: NVIDIA A100-SXM4-80GB", text)

    def test_a_history_drawn_by_several_processes_is_the_page_drawn_by_one(self):
        """A history's charts are drawn by one forked process per CPU (html_parts.Page); on one
        CPU the page draws them itself. Both pages must be the same, byte for byte."""
        cpus = sorted(os.sched_getaffinity(0))
        if len(cpus) < 2:
            self.skipTest("one CPU: the charts are drawn in one process only")
        files = history(os.path.join(self.tmp, "h"), 4, slow=2)
        for path in files:  # eight points, a few dozen charts: enough to share out
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
            doc["results"] = doc["results"][:8]
            with open(path, "w", encoding="utf-8") as f:
                json.dump(doc, f)
        pages = []
        for name, allowed in (("many.html", cpus), ("one.html", cpus[:1])):
            out = os.path.join(self.tmp, name)
            proc = subprocess.run([GPUBENCH, "report", *files, "--format", "html", "--output", out],
                                  capture_output=True, text=True, timeout=300,
                                  env={**os.environ, **ENV},
                                  preexec_fn=lambda a=allowed: os.sched_setaffinity(0, a))
            self.assertEqual(proc.returncode, 0, proc.stderr)
            pages.append(self.check_page(out, 10)[0])
        self.assertTrue(pages[0] == pages[1], "the page drawn on one CPU differs")

    def test_a_100_file_history_stays_under_the_limit(self):
        files = history(os.path.join(self.tmp, "h"), 100, slow=60)
        proc, out = self.page("report", *files)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.check_page(out, 50)
        print(f"100-file history: {os.path.getsize(out)} bytes", file=sys.stderr)

    def test_a_corrupt_file_among_many_writes_nothing(self):
        files = history(os.path.join(self.tmp, "h"), 5, slow=0)
        with open(files[3], "w", encoding="utf-8") as f:
            f.write('{"schema": "gpubench/1", "results": [')
        proc, out = self.page("report", *files)
        self.assertEqual(proc.returncode, 2)
        self.assertIn(os.path.basename(files[3]), proc.stderr)
        self.assertFalse(os.path.exists(out))
        self.assertEqual(os.listdir(self.tmp), ["h"])  # no temporary file left either

    def test_matplotlib_missing_names_the_package_and_writes_nothing(self):
        fake = os.path.join(self.tmp, "fake")
        os.makedirs(os.path.join(fake, "matplotlib"))
        with open(os.path.join(fake, "matplotlib", "__init__.py"), "w", encoding="utf-8") as f:
            f.write("raise ImportError('No module named matplotlib (simulated)')\n")
        proc, out = self.page("report", SYNTHETIC_H200, env={"PYTHONPATH": fake})
        self.assertEqual(proc.returncode, 2)
        self.assertIn("python3-matplotlib", proc.stderr)
        self.assertIn("the page was not written", proc.stderr)
        self.assertFalse(os.path.exists(out))

    def test_python_missing_names_the_packages(self):
        proc, out = self.page("report", SYNTHETIC_H200,
                              env={"GPUBENCH_PYTHON": os.path.join(self.tmp, "no-python3")})
        self.assertEqual(proc.returncode, 2)
        self.assertIn("python3-matplotlib", proc.stderr)
        self.assertFalse(os.path.exists(out))

    def test_the_module_missing_is_named(self):
        proc, out = self.page("report", SYNTHETIC_H200, env={"GPUBENCH_PYTHON_DIR": self.tmp})
        self.assertEqual(proc.returncode, 2)
        self.assertIn("gpubench/html_report.py", proc.stderr)
        self.assertFalse(os.path.exists(out))

    def test_format_html_needs_an_output_file(self):
        proc = run("report", SYNTHETIC_H200, "--format", "html", env=ENV)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--output", proc.stderr)

    def test_an_unwritable_output_is_refused_before_anything_runs(self):
        proc = run("report", SYNTHETIC_H200, "--format", "html", "--output",
                   os.path.join(self.tmp, "missing", "page.html"), env=ENV)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("page.html", proc.stderr)

    def test_the_page_to_stdout(self):
        proc = run("report", SYNTHETIC_H200, "--format", "html", "--output", "-", env=ENV)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertTrue(proc.stdout.startswith("<!DOCTYPE html>"))


class CompactSvg(unittest.TestCase):
    """The page's size does not depend on the matplotlib version: 3.6 (Debian 12) writes a text's
    font as `font: 10px 'DejaVu Sans', ...`, later versions as `font-family: 'DejaVu Sans', ...`;
    both lists of fallback fonts shrink to the page's sans-serif."""

    def test_the_font_lists_of_both_styles_shrink(self):
        sys.path.insert(0, os.path.join(SOURCE_DIR, "python"))
        try:
            from gpubench.html_parts import compact_svg
        finally:
            sys.path.pop(0)
        fonts = "'DejaVu Sans', 'Bitstream Vera Sans', 'Lucida Grande', 'Arial', sans-serif"
        old = f'<text style="font: 10px {fonts}; text-anchor: end" x="1">a</text>'
        new = f'<text style="font-size: 10px; font-family: {fonts}; text-anchor: end">a</text>'
        self.assertIn('style="font: 10px sans-serif; text-anchor: end"', compact_svg(old))
        self.assertIn('style="font-size: 10px; font-family: sans-serif; text-anchor: end"',
                      compact_svg(new))


class EnvironmentRow(unittest.TestCase):
    def test_the_host_says_how_many_cpus_the_run_could_use(self):
        sys.path.insert(0, os.path.join(SOURCE_DIR, "python"))
        try:
            from gpubench.html_parts import environment_rows
        finally:
            sys.path.pop(0)

        def host(**h):
            return environment_rows("r.json", {"meta": {"host": {"name": "n", "cpu": "c", **h}}})[6]
        self.assertEqual(host(cores=16, cores_usable=1), "n (c, 16 cores, 1 usable)")
        self.assertEqual(host(cores=16, cores_usable=16), "n (c, 16 cores)")
        self.assertEqual(host(cores=16), "n (c, 16 cores)")  # a file from before it was recorded


if __name__ == "__main__":
    unittest.main()
