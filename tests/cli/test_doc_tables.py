"""scripts/doc_tables.py: every table in README.md and docs/ that declares its source JSON is
rendered again from it and compared. The repository's own tables pass; a planted wrong figure, a
planted missing mark and a broken declaration each fail, naming the file and line."""
import json
import os
import subprocess
import sys
import tarfile
import unittest

from gpubench_cli import SOURCE_DIR, tempdir

SCRIPT = os.path.join(SOURCE_DIR, "scripts", "doc_tables.py")


def measurement(name, median, host_bound=False, flags=(), stop="noise", count=20):
    return {"name": name, "host_bound": host_bound, "telemetry": {"flags": list(flags)},
            "stop_reason": stop, "stats": {"median": median, "min": median * 0.98,
                                           "rel_stddev": 0.004, "count": count}}


def result_doc(scale=1.0):
    return {"schema": "gpubench/1", "results": [
        {"benchmark": "pipeline", "params": {"batch": 32},
         "measurements": [measurement("graph", 105.4e-6 * scale),
                          measurement("streams", 115.1e-6 * scale, host_bound=True),
                          measurement("serial", 146.9e-6 * scale, flags=["contention"],
                                      stop="max_samples")]}]}


def doc_tables(*args, cwd=None):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True,
                          cwd=cwd, check=False)


class DocTables(unittest.TestCase):
    def setUp(self):
        self._dir = tempdir()
        self.d = self._dir.__enter__()
        # A result file, a before/after archive of two rounds, and a page declaring both.
        with open(os.path.join(self.d, "run.json"), "w", encoding="utf-8") as f:
            json.dump(result_doc(), f)
        ab = os.path.join(self.d, "ab")
        os.mkdir(ab)
        for side, scale in (("old", 1.0), ("new", 1.01)):
            for r in (1, 2):
                with open(os.path.join(ab, f"pipeline-{side}-{r}.json"), "w",
                          encoding="utf-8") as f:
                    json.dump(result_doc(scale), f)
        with tarfile.open(os.path.join(self.d, "json.tar.xz"), "w:xz") as tar:
            tar.add(ab, arcname="ab")
        self.page = os.path.join(self.d, "page.md")
        with open(self.page, "w", encoding="utf-8") as f:
            f.write("# Page\n\n<!-- table: rows run.json --columns median,n,stop -->\n| x |\n\n"
                    "Text.\n\n<!-- table: ab json.tar.xz -->\n| y |\n")
        fixed = doc_tables("fix", self.page)
        self.assertEqual(fixed.returncode, 0, fixed.stderr)
        with open(self.page, encoding="utf-8") as f:
            self.text = f.read()

    def tearDown(self):
        self._dir.__exit__(None, None, None)

    def check_with(self, old, new):
        self.assertIn(old, self.text)
        with open(self.page, "w", encoding="utf-8") as f:
            f.write(self.text.replace(old, new, 1))
        return doc_tables("check", self.page)

    def test_rendered_tables_carry_figures_and_marks(self):
        self.assertIn("| pipeline graph | 105.40 us | 20 | noise |", self.text)
        self.assertIn("| pipeline streams ^ | 115.10 us | 20 | noise |", self.text)
        self.assertIn("| pipeline serial * | 146.90 us | 20 | max-n (not converged) |", self.text)
        self.assertIn("| pipeline: pipeline batch=32 streams ^ | 115.10 | 116.25 | +1.00% | 2/2 |",
                      self.text)
        self.assertIn("| pipeline: pipeline batch=32 serial * [max-n in 4 of 4] |", self.text)
        self.assertIn("Marks: `*` telemetry flagged", self.text)
        ok = doc_tables("check", self.page)
        self.assertEqual(ok.returncode, 0, ok.stderr)
        self.assertIn("2 declared", ok.stdout)

    def test_a_planted_wrong_figure_fails(self):
        r = self.check_with("| pipeline graph | 105.40 us |", "| pipeline graph | 105.30 us |")
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("page.md:3: the table differs from its data at line 6", r.stderr)
        self.assertIn("doc:  | pipeline graph | 105.30 us", r.stderr)
        self.assertIn("data: | pipeline graph | 105.40 us", r.stderr)

    def test_a_planted_missing_mark_fails(self):
        r = self.check_with("| pipeline streams ^ | 115.10 us", "| pipeline streams | 115.10 us")
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("the table differs from its data", r.stderr)
        r = self.check_with("| pipeline: pipeline batch=32 serial * [max-n in 4 of 4] |",
                            "| pipeline: pipeline batch=32 serial * |")
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("page.md:", r.stderr)

    def test_a_broken_declaration_exits_2(self):
        r = self.check_with("<!-- table: rows run.json", "<!-- table: rows missing.json")
        self.assertEqual(r.returncode, 2)
        self.assertIn("missing.json: no such file", r.stderr)
        r = self.check_with("--columns median,n,stop", "--columns median,volume")
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown column 'volume'", r.stderr)
        r = self.check_with("<!-- table: ab", "<!-- table: shell")
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown table kind", r.stderr)

    def test_ab_rows_of_points_at_one_shape_stay_apart(self):
        # Two gemm dtypes at one shape: the usual keys (n, batch, ...) tell them apart no more, so
        # the label names the parameter that differs; without it their medians would be merged.
        ab = os.path.join(self.d, "ab2")
        os.mkdir(ab)
        for side, scale in (("old", 1.0), ("new", 1.02)):
            doc = {"schema": "gpubench/1", "results": [
                {"benchmark": "gemm", "params": {"n": 4096, "dtype": dtype, "layout": "nn"},
                 "measurements": [measurement("kernel", median * scale)]}
                for dtype, median in (("f32", 2.6e-3), ("bf16", 1.8e-4))]}
            with open(os.path.join(ab, f"gemm-{side}-1.json"), "w", encoding="utf-8") as f:
                json.dump(doc, f)
        with tarfile.open(os.path.join(self.d, "ab2.tar.xz"), "w:xz") as tar:
            tar.add(ab, arcname="ab")
        r = doc_tables("render", "ab ab2.tar.xz", cwd=self.d)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("| gemm: gemm n=4096,dtype=f32 kernel | 2600.00 | 2652.00 | +2.00% | 1/1 |",
                      r.stdout)
        self.assertIn("| gemm: gemm n=4096,dtype=bf16 kernel | 180.00 | 183.60 | +2.00% | 1/1 |",
                      r.stdout)
        self.assertNotIn("layout", r.stdout)  # the same in both: not named

    def test_the_repository_tables_match_their_data(self):
        r = doc_tables("check", cwd=SOURCE_DIR)
        if r.returncode != 0 and "not a git repository" in r.stderr:
            self.skipTest("the source tree is not a git checkout")
        self.assertEqual(r.returncode, 0, r.stderr)


if __name__ == "__main__":
    unittest.main()
