"""gpubench report FILE...: saved results re-rendered without re-running; several merged."""
import copy
import json
import math
import os
import tempfile
import unittest

from gpubench_cli import FAST, SYNTHETIC_H200, recorded_results, run as gpubench


def row_tables(text):
    """The per-result row tables of a report: each header line ("measurement ...") and the rows
    under it (cells two spaces apart), up to the first note line."""
    tables = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.lstrip().startswith("measurement "):
            block = [line]
            for row in lines[i + 1:]:
                if "  " not in row.strip():
                    break
                block.append(row)
            tables.append(block)
    return tables


def differences(a, b, path="", rel=1e-12):
    """Paths where a and b differ; floats equal up to `rel` (statistics are recomputed from the
    raw samples on reading, which may change the last bit of a sum)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(set(a) | set(b))
                for d in differences(a.get(k, "<missing>"), b.get(k, "<missing>"),
                                     f"{path}.{k}", rel)]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, f"{path}[{i}]",
                                                                            rel)]
    if isinstance(a, float) and isinstance(b, (int, float)) and not isinstance(b, bool):
        return [] if math.isclose(a, b, rel_tol=rel, abs_tol=0.0) else [f"{path}: {a} != {b}"]
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]


class Report(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        run_file = os.path.join(cls.tmp.name, "run.json")
        with open(run_file, "w", encoding="utf-8") as f:
            json.dump({"options": {"cpu_only": True, "min_samples": 3, "max_samples": 3,
                                   "min_time": 0, "timeout": 10},
                       "benchmarks": [{"benchmark": "vecadd",
                                       "params": {"n": ["1Ki", "2Ki"], "dtype": ["f32", "f16"]}}]},
                      f)
        cls.measured = os.path.join(cls.tmp.name, "a.json")
        proc = gpubench("run", run_file, "--output", cls.measured, "-q")
        assert proc.returncode == 0, proc.stderr
        with open(cls.measured, encoding="utf-8") as f:
            cls.report = json.load(f)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_json_round_trip_is_exact_for_a_file_gpubench_wrote(self):
        proc = gpubench("report", self.measured, "--format", "json")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(json.loads(proc.stdout), self.report)

    def test_json_round_trip_keeps_every_field_of_a_gpu_result(self):
        with open(SYNTHETIC_H200, encoding="utf-8") as f:
            original = json.load(f)
        proc = gpubench("report", SYNTHETIC_H200, "--format", "json")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(differences(original, json.loads(proc.stdout)), [])

    def test_text_formats_show_every_result(self):
        for fmt in ("table", "md", "csv"):
            with self.subTest(format=fmt):
                proc = gpubench("report", self.measured, "--format", fmt)
                self.assertEqual(proc.returncode, 0, proc.stderr)
                self.assertIn("cpu_reference", proc.stdout)
                for n in ("1024", "2048"):
                    self.assertIn(n, proc.stdout)
        csv_rows = gpubench("report", self.measured, "--format", "csv").stdout.strip().splitlines()
        self.assertEqual(len(csv_rows), 1 + 4)  # header + one row per (result, measurement)

    def test_summary_tables_fit_120_columns(self):
        # The augment and pipeline summaries go through the shared table writer (columns as wide
        # as their cells, a constant depth said once above the table, a mode no row ran left out).
        proc = gpubench("report", SYNTHETIC_H200)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        for title in ("augment summary", "pipeline summary"):
            block = proc.stdout.split(title, 1)[1].split("\n\n", 1)[0].splitlines()
            self.assertGreater(len(block), 2, title)
            for line in block:
                self.assertLessEqual(len(line), 120, line)
        self.assertIn("depth 2 for every row", " ".join(proc.stdout.split()))  # a wrapped caption

    def test_pipeline_summary_with_mixed_verdicts_fits_120_columns(self):
        # One failed row keeps the verification column (a short "ok": yes / NO / -).
        with open(SYNTHETIC_H200, encoding="utf-8") as f:
            doc = json.load(f)
        checked = next(r for r in doc["results"] if r["benchmark"] == "vecadd")["verification"]
        rows = [r for r in doc["results"] if r["benchmark"] == "pipeline"]
        for r in rows:
            r["verification"] = dict(checked)
        rows[0]["verification"] = dict(checked, passed=False, mismatches=1)
        rows[0]["status"] = "failed"
        path = os.path.join(self.tmp.name, "mixed.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        proc = gpubench("report", path)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        block = proc.stdout.split("pipeline summary", 1)[1].split("\n\n", 1)[0].splitlines()
        self.assertTrue(any(line.rstrip().endswith(" NO") for line in block), block)
        self.assertTrue(any(line.rstrip().endswith(" yes") for line in block), block)
        for line in block:
            self.assertLessEqual(len(line), 120, line)

    def test_result_tables_fit_120_columns(self):
        # vecadd's 10 columns: a short "n" header, the item unit once in the header,
        # D2D's share in parentheses, and clock, n and stop said once above the rows when every
        # row says the same. Real H200 files: peaks, "kernel (batch)", gpu/w, timeout, stream.
        batch = recorded_results("h200-2026-12-01/batch")
        first = recorded_results("h200-2026-11-29/first-run")
        files = [SYNTHETIC_H200, self.measured,
                 os.path.join(batch, "warm-old-1.json"),
                 os.path.join(batch, "verify-stream.json"),
                 os.path.join(first, "augment.json"),
                 os.path.join(first, "pipeline-sweep.json")]
        for path in files:
            with self.subTest(file=os.path.basename(path)):
                proc = gpubench("report", path)
                self.assertEqual(proc.returncode, 0, proc.stderr)
                tables = row_tables(proc.stdout)
                self.assertTrue(tables)
                for table in tables:
                    self.assertGreater(len(table), 1, table)
                    for line in table:
                        self.assertLessEqual(len(line), 120, line)
        wide = row_tables(gpubench("report", files[2]).stdout)
        self.assertIn("kernel (batch)", "\n".join(wide[0]))
        self.assertIn("elements/s", wide[0][0])
        self.assertRegex("\n".join(wide[0]), r"\d+\.\d% \(\d+\.\d%\)")  # of peak (D2D)
        for bench in (["vecadd", "--n", "1M"], ["stream", "--n", "1M"],
                      ["augment", "--batch", "2", "--size", "48", "--crop", "32", "--resize", "40"]):
            with self.subTest(run=bench[0]):
                proc = gpubench(*bench, "--cpu-only", *FAST, "-q")
                self.assertEqual(proc.returncode, 0, proc.stderr)
                self.assertTrue(row_tables(proc.stdout))
                for table in row_tables(proc.stdout):
                    for line in table:
                        self.assertLessEqual(len(line), 120, line)

    def test_a_column_every_row_shares_is_said_once_above_the_rows(self):
        proc = gpubench("report", SYNTHETIC_H200)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        lines = proc.stdout.splitlines()
        header = next(i for i, line in enumerate(lines) if line.lstrip().startswith("measurement"))
        self.assertEqual(lines[header - 1].strip(), "every row: n 12, stop yes")
        self.assertNotIn(" stop ", lines[header])
        self.assertIn(" clock ", lines[header])  # gpu and host rows: not constant
        self.assertIn("n = samples", proc.stdout)  # the legend

    def test_several_files_are_merged_in_order(self):
        second = copy.deepcopy(self.report)
        for r in second["results"]:
            r["params"]["n"] *= 100
        second_path = os.path.join(self.tmp.name, "b.json")
        with open(second_path, "w", encoding="utf-8") as f:
            json.dump(second, f)
        merged_path = os.path.join(self.tmp.name, "merged.json")
        proc = gpubench("report", self.measured, second_path, "--format", "json",
                        "--output", merged_path)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        merged = json.loads(proc.stdout)
        self.assertEqual([r["params"]["n"] for r in merged["results"]],
                         [r["params"]["n"] for r in self.report["results"] + second["results"]])
        with open(merged_path, encoding="utf-8") as f:
            self.assertEqual(json.load(f), merged)

    def test_gpu_and_cpu_files_merge_with_their_devices(self):
        proc = gpubench("report", SYNTHETIC_H200, self.measured, "--format", "json")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        merged = json.loads(proc.stdout)
        self.assertEqual([d["name"] for d in merged["devices"]], ["NVIDIA H200"])
        self.assertEqual(sum(r["device"] == -1 for r in merged["results"]),
                         len(self.report["results"]))

    def test_bad_files_are_usage_errors(self):
        broken = os.path.join(self.tmp.name, "broken.json")
        with open(broken, "w", encoding="utf-8") as f:
            json.dump({"schema": "gpubench/1", "meta": {}}, f)
        proc = gpubench("report", self.measured, broken)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("broken.json: result file: meta.version", proc.stderr)
        self.assertEqual(proc.stdout, "")  # nothing printed before every file is read

    def test_a_file_that_is_not_an_object_is_named_with_what_it_holds(self):
        for content, found in (("[1, 2]", "an array"), ("null", "null"), ('"text"', "a string"),
                               ("42", "a number")):
            with self.subTest(content=content):
                path = os.path.join(self.tmp.name, "not-an-object.json")
                with open(path, "w", encoding="utf-8") as f:
                    f.write(content)
                proc = gpubench("report", path)
                self.assertEqual(proc.returncode, 2, proc.stderr)
                self.assertEqual(proc.stderr.strip(),
                                 f"Error: {path}: result file: the top level must be an object "
                                 f"(found {found})")
                self.assertEqual(proc.stdout, "")


if __name__ == "__main__":
    unittest.main()
