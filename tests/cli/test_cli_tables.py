"""The command line generated from the parameter tables: each subcommand offers only the options
that do something there, help shows types and ranges, typos get a suggestion, --dry-run lists the
points with their device memory, run files spell options as the command line does, and the table
ends with a legend. None of this needs a GPU."""
import json
import re
import os
import subprocess
import tempfile
import unittest

GPUBENCH = os.environ.get("GPUBENCH", "gpubench")
QUICK = ["--min-samples", "2", "--max-samples", "2", "--min-time", "0", "--timeout", "10"]


def gpubench(*args, cwd=None):
    return subprocess.run([GPUBENCH, *args], capture_output=True, text=True, timeout=300,
                          check=False, cwd=cwd)


def help_of(subcommand):
    """The options part of a subcommand's --help (the footer's prose is left out)."""
    proc = gpubench(subcommand, "--help")
    assert proc.returncode == 0, proc.stderr
    options = proc.stdout.split("Options:")[1].split("\n\n")[0]
    # Descriptions wrap at 100 columns onto lines indented to the description column: joined
    # back, each option is one line again.
    return re.sub(r"\n {30,}", " ", options)


class OnlyOptionsThatDoSomething(unittest.TestCase):
    def test_devices_offers_no_measurement_or_cpu_option(self):
        text = help_of("devices")
        for option in ("--cpu-only", "--no-verify", "--seed", "--cpu-threads", "--min-samples",
                       "--verbose"):
            self.assertNotIn(option, text)
        for option in ("--device", "--format", "--output", "--measure"):
            self.assertIn(option, text)

    def test_pipeline_offers_no_cpu_only_and_says_why_when_given(self):
        self.assertNotIn("--cpu-only", help_of("pipeline"))
        proc = gpubench("pipeline", "--cpu-only")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--cpu-only: pipeline has no CPU-only mode; it needs a GPU", proc.stderr)

    def test_measuring_subcommands_offer_dry_run_and_cpu_only_where_it_works(self):
        for sub in ("vecadd", "augment", "pipeline", "run"):
            with self.subTest(sub=sub):
                self.assertIn("--dry-run", help_of(sub))
        for sub in ("vecadd", "augment", "run"):
            with self.subTest(sub=sub):
                self.assertIn("--cpu-only", help_of(sub))


class HelpShowsTypesAndRanges(unittest.TestCase):
    def test_no_parameter_is_plain_text(self):
        for sub in ("vecadd", "augment", "pipeline"):
            with self.subTest(sub=sub):
                self.assertNotIn(" TEXT ", help_of(sub))

    def test_types_ranges_and_choices(self):
        vecadd = help_of("vecadd")
        self.assertIn("SIZE-LIST", vecadd)
        self.assertIn("(1 to 2^36 elements)", vecadd)
        self.assertIn("{f32|f64|f16|bf16}", vecadd)
        self.assertIn("multiple of 32", vecadd)
        augment = help_of("augment")
        self.assertIn("{nearest|bilinear}", augment)
        self.assertIn("LO:HI", augment)
        self.assertIn("(0 to 180)", augment)
        self.assertIn("(above 0, at most 10)", help_of("pipeline"))


class Suggestions(unittest.TestCase):
    def test_a_mistyped_option(self):
        proc = gpubench("vecadd", "--dtpe", "f16")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("'--dtpe': did you mean '--dtype'?", proc.stderr)

    def test_a_mistyped_subcommand(self):
        proc = gpubench("vecad", "--n", "1K")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("did you mean 'vecadd'?", proc.stderr)

    def test_a_mistyped_word(self):
        proc = gpubench("vecadd", "--cpu-only", "--kernel", "vectorised")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--kernel", proc.stderr)
        proc = gpubench("augment", "--cpu-only", "--interp", "bilinaer")
        self.assertIn("did you mean 'bilinear'?", proc.stderr)

    def test_nothing_is_suggested_for_a_far_word(self):
        proc = gpubench("vecadd", "--bogus")
        self.assertEqual(proc.returncode, 2)
        self.assertNotIn("did you mean", proc.stderr)


class DryRun(unittest.TestCase):
    def test_vecadd_lists_points_and_device_memory(self):
        proc = gpubench("vecadd", "--n", "1M,2M", "--dtype", "f32,f16", "--dry-run")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        lines = proc.stdout.splitlines()
        self.assertEqual(lines[0], "vecadd: 4 points would run")
        # A point one line, or wrapped under its parameters where it is longer than the width.
        self.assertTrue(lines[1].startswith("1  vecadd    block=256"), lines[1])
        self.assertTrue(lines[2].startswith("             "), lines[2])
        self.assertIn("(needs 12 MB on the device)", lines[1] + " " + lines[2].strip())
        self.assertTrue(lines[-1].startswith("Device memory:"), lines[-1])
        listed = json.loads(gpubench("vecadd", "--n", "1M,2M", "--dtype", "f32,f16",
                                     "--dry-run", "--format", "json").stdout)
        need = {(p["params"]["n"], p["params"]["dtype"]): p["device_bytes"]
                for p in listed["points"]}
        self.assertEqual(need[(1000000, "f32")], 3 * 1000000 * 4)
        self.assertEqual(need[(2000000, "f16")], 3 * 2000000 * 2)

    def test_every_measuring_subcommand_dry_runs_without_a_gpu(self):
        for args in (["augment", "--batch", "8,16"], ["pipeline", "--batch", "8"],
                     ["vecadd", "--cpu-only"]):
            with self.subTest(args=args):
                proc = gpubench(*args, "--dry-run", "--format", "json")
                self.assertEqual(proc.returncode, 0, proc.stderr)
                points = json.loads(proc.stdout)["points"]
                self.assertGreater(len(points), 0)
                for p in points:
                    if p["params"]["device"] >= 0:
                        self.assertGreater(p["device_bytes"], 0)
                    else:
                        self.assertNotIn("device_bytes", p)

    def test_a_dry_run_writes_nothing(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "never.json")
            proc = gpubench("augment", "--dry-run", "--output", out)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertFalse(os.path.exists(out))


class RunFileSpelling(unittest.TestCase):
    def run_file(self, options):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "r.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump({"options": options,
                           "benchmarks": [{"benchmark": "vecadd", "params": {"n": "1K"}}]}, f)
            return gpubench("run", path, "--dry-run", "--format", "json")

    def test_the_command_line_spelling_is_read_without_a_note(self):
        proc = self.run_file({"cpu-only": True, "min-samples": 3, "no-verify": True})
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stderr, "")
        self.assertEqual(json.loads(proc.stdout)["points"][0]["params"]["device"], -1)

    def test_the_old_spelling_still_works_with_a_note(self):
        proc = self.run_file({"cpu_only": True, "min_samples": 3})
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("options.cpu_only: the snake_case spelling is deprecated; write "
                      "\"cpu-only\"", proc.stderr)
        self.assertIn("options.min_samples", proc.stderr)
        self.assertEqual(json.loads(proc.stdout)["points"][0]["params"]["device"], -1)


class TableOutput(unittest.TestCase):
    def test_ends_with_a_legend(self):
        proc = gpubench("vecadd", "--cpu-only", "--n", "1K", *QUICK)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        lines = proc.stdout.rstrip("\n").splitlines()
        start = next(i for i, line in enumerate(lines) if line.startswith("Legend:"))
        legend = " ".join(line.strip() for line in lines[start:])
        self.assertTrue(all(len(line) <= 120 for line in lines[start:]), lines[start:])
        self.assertIn("host = the host's steady clock", legend)  # the CPU reference's clock
        self.assertNotIn("gpu = CUDA events", legend)  # no GPU row in a --cpu-only table
        self.assertIn("rel.sd = relative standard deviation", legend)

    def test_verbose_says_how_each_point_ended(self):
        proc = gpubench("vecadd", "--cpu-only", "--n", "1K,2K", "-v", *QUICK)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("point 1/2: vecadd", proc.stderr)
        self.assertIn("point 2/2: vecadd", proc.stderr)
        self.assertIn(": ok after", proc.stderr)


if __name__ == "__main__":
    unittest.main()
