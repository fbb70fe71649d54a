"""One set of writers: --output first and stdout second, the file's format
from --format or --output-format, `-` for stdout, every write checked, CSV safe for spreadsheets,
parameters without float noise, tables that fit a terminal."""
import copy
import json
import os
import subprocess
import unittest

from gpubench_cli import FAST, GPUBENCH, SYNTHETIC_H200, run, tempdir, validate

CPU = ["vecadd", "--cpu-only", "--n", "1K", *FAST, "-q"]


def synthetic():
    with open(SYNTHETIC_H200, encoding="utf-8") as f:
        return json.load(f)


class OutputFormat(unittest.TestCase):
    def setUp(self):
        self.tmp = tempdir()
        self.addCleanup(self.tmp.cleanup)
        self.dir = self.tmp.name

    def path(self, name):
        return os.path.join(self.dir, name)

    def read(self, name):
        with open(self.path(name), encoding="utf-8") as f:
            return f.read()

    def test_the_file_is_json_unless_a_format_is_asked_for(self):
        r = run(*CPU, "--output", self.path("r.json"))
        self.assertEqual(r.returncode, 0, r.stderr)
        validate(json.loads(self.read("r.json")))
        self.assertTrue(r.stdout.startswith("vecadd |"), r.stdout[:80])  # the table on stdout

    def test_the_file_follows_format(self):
        r = run(*CPU, "--format", "csv", "--output", self.path("r.csv"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(self.read("r.csv").startswith("benchmark,device,status,"))
        self.assertEqual(r.stdout, self.read("r.csv"))

    def test_an_extension_that_names_a_format_wins_over_format(self):
        # `--format md --output r.json`: a table to read and the record to keep (ci-regression.sh)
        r = run(*CPU, "--format", "md", "--output", self.path("r.json"))
        self.assertEqual(r.returncode, 0, r.stderr)
        validate(json.loads(self.read("r.json")))
        self.assertTrue(r.stdout.startswith("| benchmark |"))
        r = run(*CPU, "--format", "csv", "--output", self.path("r.out"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(self.read("r.out").startswith("benchmark,device,status,"))

    def test_output_format_overrides(self):
        r = run(*CPU, "--output-format", "md", "--output", self.path("r.md"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(self.read("r.md").startswith("| benchmark |"))
        self.assertTrue(r.stdout.startswith("vecadd |"))

    def test_a_bad_output_format_is_a_usage_error(self):
        r = run(*CPU, "--output-format", "xml", "--output", self.path("r"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("--output-format: 'xml' is not one of table, json, csv, md", r.stderr)

    def test_dash_means_stdout_and_creates_no_file(self):
        r = subprocess.run([GPUBENCH, *CPU, "--output", "-"], capture_output=True, text=True,
                           cwd=self.dir, timeout=120, check=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        validate(json.loads(r.stdout))  # the JSON record, once, and nothing else
        self.assertEqual(os.listdir(self.dir), [])

    def test_an_empty_output_is_an_error_in_every_subcommand(self):
        with open(self.path("h200.json"), "w", encoding="utf-8") as f:
            json.dump(synthetic(), f)
        h200 = self.path("h200.json")
        with open(self.path("cpu.json"), "w", encoding="utf-8") as f:
            json.dump({"benchmarks": [{"benchmark": "vecadd", "params": {"n": "1K"}}]}, f)
        for args in (CPU, ["report", h200], ["compare", h200, h200],
                     ["run", self.path("cpu.json"), "--cpu-only"]):
            with self.subTest(command=args[0]):
                r = run(*args, "--output", "")
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn("--output: the path is empty", r.stderr)

    def test_report_and_compare_write_the_file_in_their_format(self):
        with open(self.path("h200.json"), "w", encoding="utf-8") as f:
            json.dump(synthetic(), f)
        h200 = self.path("h200.json")
        r = run("report", h200, "--format", "csv", "--output", self.path("r.csv"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(self.read("r.csv").startswith("benchmark,device,status,"))
        r = run("compare", h200, h200, "--output-format", "md", "--output", self.path("c.md"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(self.read("c.md").startswith("### gpubench compare:"))
        self.assertIn("| benchmark | params |", self.read("c.md"))
        r = run("compare", h200, h200, "--output", self.path("c.json"))
        self.assertEqual(json.loads(self.read("c.json"))["schema"], "gpubench-compare/1")


class StdoutErrors(unittest.TestCase):
    """A closed or full stdout is exit 2 with the reason, after --output was written."""

    def setUp(self):
        self.tmp = tempdir()
        self.addCleanup(self.tmp.cleanup)
        self.h200 = os.path.join(self.tmp.name, "h200.json")
        with open(self.h200, "w", encoding="utf-8") as f:
            json.dump(synthetic(), f)
        self.out = os.path.join(self.tmp.name, "out.json")

    def run_into(self, stdout, *args):
        return subprocess.run([GPUBENCH, *args, "--output", self.out], stdout=stdout,
                              stderr=subprocess.PIPE, text=True, timeout=120, check=False)

    def test_a_closed_pipe_is_exit_2_and_the_file_is_written_first(self):
        for args in (["report", self.h200], ["compare", self.h200, self.h200], CPU):
            with self.subTest(command=args[0]):
                if os.path.exists(self.out):
                    os.remove(self.out)
                read_end, write_end = os.pipe()
                os.close(read_end)  # as `| head` does once it has its lines
                try:
                    r = self.run_into(write_end, *args)
                finally:
                    os.close(write_end)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn("cannot write to stdout: Broken pipe", r.stderr)
                self.assertTrue(os.path.exists(self.out), "--output must be written before stdout")

    @unittest.skipUnless(os.path.exists("/dev/full"), "no /dev/full")
    def test_a_full_device_is_exit_2(self):
        with open("/dev/full", "w", encoding="utf-8") as full:
            r = self.run_into(full, "report", self.h200)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("cannot write to stdout: No space left on device", r.stderr)
        self.assertTrue(os.path.exists(self.out))


class Cells(unittest.TestCase):
    def setUp(self):
        self.tmp = tempdir()
        self.addCleanup(self.tmp.cleanup)

    def report_of(self, doc, *args):
        path = os.path.join(self.tmp.name, "r.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        r = run("report", path, *args)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def test_csv_neutralises_formulas_from_result_files(self):
        doc = synthetic()
        doc["results"][0]["params"]["dtype"] = '=HYPERLINK("http://evil","x")'
        doc["results"][0]["params"]["note"] = "@SUM(A1)"
        csv = self.report_of(doc, "--format", "csv")
        self.assertIn("\"'=HYPERLINK(\"\"http://evil\"\",\"\"x\"\")\"", csv)
        self.assertIn(",'@SUM(A1),", csv)
        self.assertNotIn(",=HYPERLINK", csv)

    def test_parameters_print_without_float_noise(self):
        doc = synthetic()
        doc["results"][0]["params"]["degrees"] = 123.69999694824219  # 123.7f as a double
        for fmt in ("table", "md", "csv"):
            with self.subTest(format=fmt):
                text = self.report_of(doc, "--format", fmt)
                self.assertIn("123.7", text)
                self.assertNotIn("123.69999", text)

    def test_the_compare_table_fits_a_terminal(self):
        doc = synthetic()
        for res in doc["results"]:
            res["params"].update({f"long_parameter_{i}": "a-long-value" for i in range(8)})
        path = os.path.join(self.tmp.name, "wide.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        r = run("compare", path, path)
        self.assertEqual(r.returncode, 0, r.stderr)
        table = r.stdout.split("\n\n")[0]
        self.assertLessEqual(max(len(line) for line in table.splitlines()), 120, table)
        r = run("compare", path, path, "--format", "json")
        self.assertIn("long_parameter_7", json.loads(r.stdout)["rows"][0]["params"])

    def test_long_parameter_lists_wrap_in_the_report_table(self):
        from gpubench_cli import recorded_results
        path = os.path.join(recorded_results("h200-2026-11-29/first-run"), "augment.json")
        r = run("report", path)
        self.assertEqual(r.returncode, 0, r.stderr)
        heads = [i for i, line in enumerate(r.stdout.splitlines()) if line.startswith("augment |")]
        self.assertTrue(heads)
        lines = r.stdout.splitlines()
        for i in heads:
            self.assertLessEqual(len(lines[i]), 120, lines[i])
            self.assertTrue(lines[i + 1].startswith("    "), lines[i + 1])  # the continuation

    def test_json_never_says_failed_for_a_check_not_performed(self):
        r = run(*CPU, "--format", "json")
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        validate(doc)
        v = doc["results"][0]["verification"]
        self.assertFalse(v["performed"])
        self.assertIsNone(v["passed"])

    def test_old_files_with_passed_false_still_load(self):
        doc = synthetic()
        doc["results"][0]["verification"]["performed"] = False
        doc["results"][0]["verification"]["passed"] = False
        self.report_of(copy.deepcopy(doc))


if __name__ == "__main__":
    unittest.main()
