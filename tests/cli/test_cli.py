"""The real binary: help, version, CPU-only output in every format, bad input, no GPU."""
import csv
import io
import json
import os
import unittest

from gpubench_cli import FAST, has_gpu, run, tempdir, validate


class HelpAndVersion(unittest.TestCase):
    def test_version(self):
        r = run("--version")
        self.assertEqual(r.returncode, 0)
        self.assertRegex(r.stdout, r"gpubench \d+\.\d+\.\d+")

    def test_help_lists_subcommands_and_exit_codes(self):
        r = run("--help")
        self.assertEqual(r.returncode, 0)
        for sub in ("vecadd", "devices", "run", "compare", "report"):
            self.assertIn(sub, r.stdout)
        self.assertIn("77 no usable CUDA device", r.stdout)

    def test_vecadd_help_shows_options_and_examples(self):
        r = run("vecadd", "--help")
        self.assertEqual(r.returncode, 0)
        for opt in ("--n", "--dtype", "--kernel", "--memory", "--block", "--chunks", "--streams",
                    "--warm", "--max-noise", "--cpu-only", "--seed", "Examples:"):
            self.assertIn(opt, r.stdout)

    def test_no_subcommand_is_a_usage_error(self):
        self.assertEqual(run().returncode, 2)


class CpuOnly(unittest.TestCase):
    args = ["vecadd", "--n", "1000,4097", "--cpu-only", "--dtype", "f32,f16", *FAST]

    def test_table(self):
        r = run(*self.args)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("cpu_reference", r.stdout)
        self.assertIn("CPU only", r.stdout)
        self.assertEqual(r.stdout.count("vecadd |"), 4)  # 2 sizes x 2 dtypes

    def test_json_is_valid_against_the_schema(self):
        r = run(*self.args, "--format", "json")
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        validate(doc)
        self.assertEqual(doc["schema"], "gpubench/1")
        self.assertEqual(len(doc["results"]), 4)
        res = doc["results"][0]
        self.assertEqual(res["device"], -1)
        self.assertFalse(res["verification"]["performed"])
        m = res["measurements"][0]
        self.assertEqual(m["name"], "cpu_reference")
        self.assertEqual(m["clock"], "host")
        self.assertGreaterEqual(m["stats"]["count"], 2)
        self.assertEqual(len(m["samples"]), m["stats"]["count"])
        self.assertEqual(doc["meta"]["argv"][1], "vecadd")

    def test_csv_has_a_row_per_measurement(self):
        r = run(*self.args, "--format", "csv")
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = list(csv.DictReader(io.StringIO(r.stdout)))
        self.assertEqual(len(rows), 4)
        self.assertEqual({row["dtype"] for row in rows}, {"f32", "f16"})
        self.assertTrue(all(float(row["median_s"]) > 0 for row in rows))

    def test_markdown(self):
        r = run(*self.args, "--format", "md")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(r.stdout.startswith("| benchmark |"))
        self.assertEqual(r.stdout.count("cpu_reference"), 4)

    def test_output_file_is_written_and_valid(self):
        with tempdir() as d:
            path = os.path.join(d, "out.json")
            r = run(*self.args, "--output", path, "-q")
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(path, encoding="utf-8") as f:
                validate(json.load(f))
            self.assertEqual(os.listdir(d), ["out.json"])  # no temporary left behind

    def test_same_seed_same_inputs_are_recorded(self):
        r = run(*self.args, "--seed", "7", "--format", "json")
        self.assertEqual(json.loads(r.stdout)["meta"]["argv"][-2:], ["--format", "json"])


class BadInput(unittest.TestCase):
    cases = [
        (["--n", "0"], "--n"),
        (["--n", "-5"], "--n"),
        (["--n", "abc"], "--n"),
        (["--n", "2^70"], "--n"),
        (["--n", "10:1:1"], "reversed"),
        (["--n", "1:10:0"], "zero step"),
        (["--n", "1:10000000:1"], "more than"),
        (["--dtype", "f8"], "--dtype"),
        (["--kernel", "fast"], "--kernel"),
        (["--memory", "shared"], "--memory"),
        (["--block", "100"], "--block"),
        (["--block", "2048"], "--block"),
        (["--chunks", "0"], "--chunks"),
        (["--streams", "0"], "--streams"),
        (["--format", "xml"], "--format"),
        (["--max-noise", "abc"], "--max-noise"),
        (["--max-noise", "0"], "--max-noise"),
        (["--min-samples", "0"], "--min-samples"),
        (["--max-samples", "1"], "--max-samples"),  # below FAST's --min-samples 2
        (["--timeout", "0"], "--timeout"),
        (["--min-time", "nan"], "--min-time"),
        (["--cpu-threads", "-1"], "--cpu-threads"),
        (["--device", "x"], "--device"),
        (["--output", "/no/such/dir/r.json"], "does not exist"),
    ]

    def test_each_bad_input_exits_2_and_names_the_problem(self):
        for extra, needle in self.cases:
            with self.subTest(args=extra):
                r = run("vecadd", "--cpu-only", *FAST, *extra)
                self.assertEqual(r.returncode, 2, (extra, r.stdout, r.stderr))
                self.assertIn(needle, r.stderr)

    def test_unknown_option_exits_2(self):
        r = run("vecadd", "--frobnicate")
        self.assertEqual(r.returncode, 2)


@unittest.skipIf(has_gpu(), "this machine has a usable GPU")
class NoGpu(unittest.TestCase):
    def test_vecadd_exits_77_with_a_reason_and_a_hint(self):
        r = run("vecadd", "--n", "1000", *FAST)
        self.assertEqual(r.returncode, 77)
        self.assertIn("no usable CUDA device", r.stderr)
        self.assertIn("--cpu-only", r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1)

    def test_devices_exits_77(self):
        self.assertEqual(run("devices").returncode, 77)


if __name__ == "__main__":
    unittest.main()
