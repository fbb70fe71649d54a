"""The real binary: help, version, CPU-only output in every format, bad input, no GPU."""
import csv
import io
import json
import os
import re
import shutil
import subprocess
import unittest

from gpubench_cli import FAST, GPUBENCH, has_gpu, run, tempdir, validate


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

    SUBCOMMANDS = ["vecadd", "augment", "pipeline", "stream", "devices", "run", "compare",
                   "report", "doctor", "completions"]

    def test_help_fits_100_columns_and_types_every_option(self):
        for sub in [[]] + [[s] for s in self.SUBCOMMANDS]:
            with self.subTest(sub=sub):
                r = run(*sub, "--help")
                self.assertEqual(r.returncode, 0, r.stderr)
                wide = [l for l in r.stdout.splitlines() if len(l) > 100]
                self.assertEqual(wide, [])
                # TEXT is CLI11's fallback for a string: it says nothing of what the option takes.
                self.assertNotRegex(r.stdout, r"(?m)^\s+(-\w,)?--[\w-]+ TEXT\b")
                self.assertNotIn("(0x)", r.stdout)
        compare = run("compare", "--help").stdout
        for typed in ("--gate {gpu|host|host-bound|all}", "--clock {gpu|host}",
                      "--format {table|md|json|csv|html}", "--threshold PCT", "--junit FILE"):
            self.assertIn(typed, compare)
        self.assertIn("--format {table|md|json|csv|html}", run("report", "--help").stdout)

    def test_no_help_advises_an_option_its_command_refuses(self):
        for sub in self.SUBCOMMANDS:
            text = run(sub, "--help").stdout
            if not re.search(r"^\s+--cpu-only\b", text, re.M):
                with self.subTest(sub=sub):
                    self.assertNotIn("use --cpu-only", text.lower())

    def test_parser_errors_say_error_once_in_the_order_typed(self):
        r = run("vecadd", "--n", "10M", "x", "--size", "y")
        self.assertEqual(r.returncode, 2)
        self.assertTrue(r.stderr.startswith("Error: "), r.stderr)
        self.assertEqual(r.stderr.count("Error"), 1, r.stderr)
        self.assertIn("not expected: x --size y", r.stderr)
        r = run("xyz")
        self.assertTrue(r.stderr.startswith("Error: 'xyz' is not a gpubench command"), r.stderr)
        self.assertNotIn("man", r.stderr.split("the commands are")[1].split("\n")[0])

    def test_commas_in_a_number_are_named(self):
        r = run("vecadd", "--n", "1,000,000", "--dry-run")
        self.assertEqual(r.returncode, 2)
        self.assertIn("commas between groups of digits", r.stderr)
        self.assertNotIn("out of range", r.stderr)


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

    def test_html_output_is_refused_with_the_way_to_a_page(self):
        with tempdir() as d:
            path = os.path.join(d, "out.html")
            r = run(*self.args, "--output", path, "-q")
            self.assertEqual(r.returncode, 2, r.stdout)
            self.assertIn("gpubench report RESULT.json --output " + path, r.stderr)
            self.assertEqual(os.listdir(d), [])  # nothing written
            # An explicit --output-format still names the format of any path.
            r = run(*self.args, "--output", path, "--output-format", "json", "-q")
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(path, encoding="utf-8") as f:
                validate(json.load(f))

    def test_a_process_confined_to_one_cpu_uses_one_thread_and_says_so(self):
        # An MPI launcher's binding (Open MPI binds each of two ranks to one core) or taskset:
        # the CPU rows run on the CPUs the process may use, and the record says how many.
        taskset = shutil.which("taskset")
        allowed = sorted(os.sched_getaffinity(0))
        if taskset is None or len(allowed) < 2:
            self.skipTest("needs taskset and at least 2 usable CPUs")
        r = subprocess.run([taskset, "-c", str(allowed[0]), GPUBENCH, *self.args, "--format",
                            "json"], capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        host = json.loads(r.stdout)["meta"]["host"]
        self.assertEqual(host["cores_usable"], 1)
        self.assertEqual(host["cores"], os.cpu_count())
        self.assertIn(f"may run on 1 of the {os.cpu_count()} CPUs", r.stderr)
        self.assertIn("use 1 thread;", r.stderr)
        # Unconfined, every usable CPU, and no note.
        r = run(*self.args, "--format", "json")
        self.assertEqual(json.loads(r.stdout)["meta"]["host"]["cores_usable"], len(allowed))
        self.assertNotIn("may run on", r.stderr)
        # An explicit --cpu-threads is the user's choice: no note.
        r = subprocess.run([taskset, "-c", str(allowed[0]), GPUBENCH, *self.args,
                            "--cpu-threads", "2"], capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("may run on", r.stderr)

    def test_same_seed_same_inputs_are_recorded(self):
        r = run(*self.args, "--seed", "7", "--format", "json")
        self.assertEqual(json.loads(r.stdout)["meta"]["argv"][-2:], ["--format", "json"])


class OptionsInContext(unittest.TestCase):
    """An option that does nothing where it is given is noted on stderr (the run goes on); the
    measurement options that depend on one another adjust with a note."""
    base = ["vecadd", "--n", "4Ki", "--cpu-only"]
    quick = ["--min-time", "0", "--warmup", "0"]

    def test_max_samples_alone_lowers_the_default_min_samples(self):
        r = run(*self.base, *self.quick, "--max-samples", "3", "--format", "json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("--max-samples 3 lowers --min-samples from its default 10 to 3", r.stderr)
        self.assertLessEqual(json.loads(r.stdout)["results"][0]["measurements"][0]["stats"]
                             ["count"], 3)
        # Given both, the two must agree: that is the user's own contradiction.
        r = run(*self.base, *self.quick, "--max-samples", "3", "--min-samples", "10")
        self.assertEqual(r.returncode, 2, r.stdout)
        self.assertIn("--max-samples: 3 must be at least --min-samples (10)", r.stderr)
        # -q silences the note, not the adjustment.
        r = run(*self.base, *self.quick, "--max-samples", "2", "-q")
        self.assertEqual((r.returncode, r.stderr), (0, ""))

    def test_options_that_do_nothing_here_are_noted(self):
        cases = [(["--device", "7"], "--device has no effect with --cpu-only"),
                 (["--output-format", "csv"], "--output-format has no effect without --output"),
                 (["--energy-window", "2"], "--energy-window has no effect without --energy"),
                 (["--warm"], "--warm has no effect with --cpu-only, which takes no GPU sample"),
                 (["--entropy-max-angle", "1", "--entropy-min-r2", "0.5"],
                  "--entropy-max-angle, --entropy-min-r2 have no effect without --stopping "
                  "entropy"),
                 (["--stopping", "entropy", "--max-noise", "2"],
                  "--max-noise has no effect with --stopping entropy"),
                 (["--block", "128", "--kernel", "seed"],
                  "--kernel, --block have no effect with --cpu-only, which runs no GPU work")]
        # named in the order of vecadd --help
        for extra, note in cases:
            with self.subTest(extra=extra):
                r = run(*self.base, *FAST, *extra)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertIn("gpubench: note: " + note, r.stderr)
                self.assertEqual(run(*self.base, *FAST, *extra, "-q").stderr, "")
        # Where they do something, nothing is said.
        with tempdir() as d:
            r = run(*self.base, *FAST, "--output-format", "csv", "--output",
                    os.path.join(d, "r"))
            self.assertNotIn("note:", r.stderr)

    def test_one_sample_shows_no_spread(self):
        # A timeout shorter than a sample stops at one sample: the row says timeout, n = 1, and
        # shows no rel.sd (0.0% would read as perfect repeatability).
        one = ["vecadd", "--n", "1M", "--cpu-only", *self.quick, "--timeout", "1e-9"]
        r = run(*one, "--max-samples", "5")
        self.assertEqual(r.returncode, 0, r.stderr)
        row = next(l for l in r.stdout.splitlines() if l.strip().startswith("cpu_reference"))
        cells = row.split()
        self.assertIn("timeout", cells)
        self.assertEqual(cells[cells.index("timeout") - 1], "1")  # n
        self.assertIn("-", cells)
        self.assertNotIn("0.0%", row)
        self.assertIn("rel.sd - = one sample", r.stdout)
        md = run(*one, "--format", "md").stdout
        self.assertIn("| - | 1 | timeout (not converged) |", md)
        # The marks travel with a table pasted into a page: the limit that stopped the row.
        self.assertIn("\nMarks: stop `max-n`, `timeout`, `intr`: a limit", md)


class NvidiaDriver(unittest.TestCase):
    def test_the_driver_version_is_recorded_beside_the_cuda_level(self):
        with tempdir() as d:
            version = os.path.join(d, "version")
            with open(version, "w", encoding="utf-8") as f:
                f.write("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  "
                        "Release Build  (dvs-builder@U16-I3-B03-4-3)  Sun Jul 27 06:54:38 UTC 2025"
                        "\nGCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n")
            r = run("vecadd", "--n", "4Ki", "--cpu-only", *FAST, "--format", "json",
                    env={"GPUBENCH_NVIDIA_VERSION_FILE": version})
            doc = json.loads(r.stdout)
            validate(doc)
            self.assertEqual(doc["meta"]["cuda"]["nvidia_driver"], "580.65.06")
            self.assertIn("driver", doc["meta"]["cuda"])  # the CUDA level stays
            # Without a driver the key is absent, as in older files.
            r = run("vecadd", "--n", "4Ki", "--cpu-only", *FAST, "--format", "json",
                    env={"GPUBENCH_NVIDIA_VERSION_FILE": os.path.join(d, "none")})
            self.assertNotIn("nvidia_driver", json.loads(r.stdout)["meta"]["cuda"])


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
