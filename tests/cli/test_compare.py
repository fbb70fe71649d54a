"""gpubench compare BASE NEW: the regression gate on saved results."""
import copy
import json
import re
import os
import subprocess
import tempfile
import unittest

from gpubench_cli import GPUBENCH, SOURCE_DIR, SYNTHETIC_H200, recorded_results, run as gpubench


def pinned(doc):
    """`doc` with the samples of every measurement replaced by fixed, tightly spread ones.

    Real CPU timings on a busy CI machine can spread by more than the slowdowns the tests apply,
    which made the verdicts random; the tests compare crafted scalings of these fixed samples."""
    for res in doc["results"]:
        for m in res["measurements"]:
            m["samples"] = [1e-3 * (1 + 0.001 * i) for i in range(len(m["samples"]))]
    return doc


class CompareCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        run_file = os.path.join(cls.tmp.name, "run.json")
        with open(run_file, "w", encoding="utf-8") as f:
            json.dump({"options": {"cpu_only": True, "min_samples": 12, "max_samples": 12,
                                   "min_time": 0, "timeout": 10},
                       "benchmarks": [{"benchmark": "vecadd",
                                       "params": {"n": ["16Ki", "64Ki"], "dtype": "f32"}}]}, f)
        cls.measured = os.path.join(cls.tmp.name, "a.json")
        proc = gpubench("run", run_file, "--output", cls.measured, "-q")
        assert proc.returncode == 0, proc.stderr
        with open(cls.measured, encoding="utf-8") as f:
            cls.report = pinned(json.load(f))
        with open(cls.measured, "w", encoding="utf-8") as f:
            json.dump(cls.report, f)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def save(self, doc, name):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        return path

    def scaled(self, doc, factor, result_index=0, measurement="cpu_reference"):
        """A copy of `doc` with every sample of one measurement multiplied by `factor`."""
        out = copy.deepcopy(doc)
        for m in out["results"][result_index]["measurements"]:
            if m["name"] == measurement:
                m["samples"] = [s * factor for s in m["samples"]]
        return out


class Gate(CompareCase):
    def test_a_file_against_itself_is_the_same_everywhere(self):
        # One run a side: between-run noise is unknown, so nothing can be shown "same" ...
        proc = gpubench("compare", self.measured, self.measured, "--format", "json")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        c = json.loads(proc.stdout)
        self.assertEqual({r["verdict"] for r in c["rows"]}, {"inconclusive"})
        self.assertIn("cannot be shown", c["rows"][0]["note"])
        # ... until the user states that runs do not move.
        proc = gpubench("compare", self.measured, self.measured, "--format", "json",
                        "--run-noise", "0")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        c = json.loads(proc.stdout)
        self.assertEqual(len(c["rows"]), 2)
        self.assertEqual({r["verdict"] for r in c["rows"]}, {"same"})
        self.assertEqual(c["summary"]["regressions"], 0)
        self.assertEqual(c["only_in_base"] + c["only_in_new"], [])

    def test_host_clock_rows_are_not_gated_by_default(self):
        # CPU-only results are host-timed: judged and shown, but nothing can fail the gate ...
        slow = self.save(self.scaled(self.report, 1.5, result_index=1), "slow-default.json")
        proc = gpubench("compare", self.measured, slow)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("slower (not gated)", proc.stdout)
        self.assertIn("Gated: no row, so nothing compared here can fail the gate", proc.stdout)
        self.assertIn("Not gated: 2 host-clock rows", proc.stdout)
        # ... unless asked for: at the host threshold (25%, + 10% run noise with one run a side).
        proc = gpubench("compare", self.measured, slow, "--gate", "host")
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        self.assertIn("Gated: 2 host-clock rows at 25.0%", proc.stdout)

    def test_twenty_percent_slower_fails_and_is_named(self):
        slow = self.save(self.scaled(self.report, 1.2, result_index=1), "slow.json")
        proc = gpubench("compare", self.measured, slow, "--gate", "host", "--host-threshold", "5%")
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        self.assertIn("Regressions:", proc.stdout)
        regression_lines = proc.stdout.split("Regressions:")[1].strip().splitlines()
        self.assertIn("vecadd cpu_reference [dtype=f32 n=65536]: +20.0%", regression_lines[0])
        self.assertIn("1 slower", proc.stdout)
        # The unchanged row, one run a side: inconclusive (never "same"), and the summary says why.
        self.assertIn("1 inconclusive", proc.stdout)
        self.assertIn("threshold 5.0% + run noise 10.0%", proc.stdout)
        self.assertIn("never same with one run a side", proc.stdout)

    def test_a_larger_threshold_lets_the_same_slowdown_pass(self):
        slow = self.save(self.scaled(self.report, 1.2), "slow-threshold.json")
        proc = gpubench("compare", self.measured, slow, "--threshold", "25%", "--format", "json")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        # Not beyond 25% (+10% run noise), not within the 12.5% equivalence margin either.
        self.assertEqual(json.loads(proc.stdout)["rows"][0]["verdict"], "inconclusive")

    def test_a_speedup_never_fails(self):
        fast = self.save(self.scaled(self.report, 0.5), "fast.json")
        proc = gpubench("compare", self.measured, fast, "--format", "json")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        rows = json.loads(proc.stdout)["rows"]
        self.assertEqual(rows[0]["verdict"], "faster")
        self.assertAlmostEqual(rows[0]["change"], -0.5, places=9)

    def test_one_sample_is_inconclusive_and_does_not_fail(self):
        one = copy.deepcopy(self.report)
        for r in one["results"]:
            for m in r["measurements"]:
                m["samples"] = [m["samples"][0] * 2]
        proc = gpubench("compare", self.measured, self.save(one, "one.json"), "--format", "json")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual({r["verdict"] for r in json.loads(proc.stdout)["rows"]},
                         {"inconclusive"})

    def test_results_in_only_one_file_are_listed(self):
        fewer = copy.deepcopy(self.report)
        del fewer["results"][0]
        proc = gpubench("compare", self.measured, self.save(fewer, "fewer.json"))
        # Half of BASE compared: below the 90% --min-compared, so the gate cannot pass.
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("NOT ENOUGH COMPARED", proc.stdout)
        only = proc.stdout.split("Only in BASE:")[1].strip().splitlines()[0]
        self.assertIn("vecadd [cpu] dtype=f32 n=16384", only)


class Devices(CompareCase):
    def test_different_gpu_models_are_refused_unless_allowed(self):
        with open(SYNTHETIC_H200, encoding="utf-8") as f:
            h200 = json.load(f)
        other = copy.deepcopy(h200)
        other["devices"][0]["name"] = "NVIDIA A100-SXM4-80GB"
        other_path = self.save(other, "a100.json")
        proc = gpubench("compare", SYNTHETIC_H200, other_path)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("NVIDIA H200", proc.stderr)
        self.assertIn("NVIDIA A100-SXM4-80GB", proc.stderr)
        self.assertIn("--allow-device-mismatch", proc.stderr)
        allowed = gpubench("compare", SYNTHETIC_H200, other_path, "--allow-device-mismatch",
                           "--run-noise", "0", "--format", "json")
        self.assertEqual(allowed.returncode, 0, allowed.stderr)
        rows = json.loads(allowed.stdout)["rows"]
        self.assertEqual(len(rows), sum(len(r["measurements"]) for r in h200["results"]))
        self.assertEqual({r["verdict"] for r in rows}, {"same"})
        # The warning names the option that allowed it, not another one.
        table = gpubench("compare", SYNTHETIC_H200, other_path, "--allow-device-mismatch")
        self.assertIn("(compared anyway: --allow-device-mismatch)", table.stdout)
        table = gpubench("compare", SYNTHETIC_H200, other_path, "--force")
        self.assertIn("(compared anyway: --force)", table.stdout)


class Formats(CompareCase):
    def test_markdown_table(self):
        slow = self.save(self.scaled(self.report, 1.3), "slow-md.json")
        # CPU-only results are host-timed: gated only when asked for.
        proc = gpubench("compare", self.measured, slow, "--format", "md", "--gate", "host",
                        "--host-threshold", "5%")
        self.assertEqual(proc.returncode, 1)
        lines = proc.stdout.splitlines()
        self.assertEqual(lines[0], "### gpubench compare: 1 regression")
        # One device on every row: its column is left out (the environment block names it).
        header = lines.index("| benchmark | params | measurement | base | new | "
                             "change | interval | runs | verdict |")
        self.assertTrue(lines[header + 1].startswith("|---|"))
        self.assertIn("**REGRESSION**", proc.stdout)

    def test_the_table_fits_120_columns(self):
        # Deep paths and five runs a side: the environment block shows file names, first and
        # last, and the summary is three short lines.
        deep = os.path.join(self.tmp.name, *(["a-rather-long-folder-name"] * 6))
        os.makedirs(deep)
        runs = []
        for k in range(5):
            path = os.path.join(deep, f"run-{k}.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(self.report, f)
            runs.append(path)
        proc = gpubench("compare", "--base", *runs, "--new", *runs)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        widest = max(proc.stdout.splitlines(), key=len)
        self.assertLessEqual(len(widest), 120, widest)
        self.assertIn("run-0.json ... run-4.json (5 runs)", proc.stdout)
        self.assertIn("Judged 5 runs vs 5: threshold 5.0%, same within +-2.5%", proc.stdout)

    def test_the_table_fits_120_columns_on_real_h200_files(self):
        # Recorded H200 runs of different sizes, forced past the coverage check: the longest
        # measurement names, a host-bound row that is not gated, a regression (the CPU reference,
        # gated) and seven parameters. The rows table (from its header to the first blank line)
        # fits 120 columns; the notes below it stay one line each, so that they can be searched.
        results = recorded_results("h200-2026-12-01/batch")
        proc = gpubench("compare", "--force", os.path.join(results, "warm-old-1.json"),
                        os.path.join(results, "verify-vecadd.json"), "--gate", "host",
                        "--host-threshold", "5%")
        lines = proc.stdout.splitlines()
        start = next(i for i, l in enumerate(lines) if l.startswith("  measurement "))
        end = lines.index("", start)
        table = lines[start:end]
        self.assertIn("slower (not gated)", proc.stdout)
        self.assertIn("REGRESSION", proc.stdout)
        widest = max(table, key=len)
        self.assertLessEqual(len(widest), 120, widest)
        # Grouped by point: each point's parameters once, as a heading, its measurements indented
        # below it, one line each.
        headings = [l for l in table if l.startswith("vecadd | ")]
        self.assertGreaterEqual(len(headings), 1, table)
        self.assertEqual(len(headings), len(set(headings)), table)
        rows = [l for l in table[1:] if l.startswith("  ") and not l.startswith("    ")]
        compared = re.search(r"(\d+) of \d+ BASE measurements compared", proc.stdout)
        self.assertEqual(len(rows), int(compared.group(1)), table)
        self.assertTrue(all(l.startswith(("vecadd | ", "    ", "  ")) for l in table), table)

    def test_a_sweep_is_grouped_by_point(self):
        # 60 points of four benchmarks: one heading per point (benchmark and parameters), its
        # measurements below it, and nothing wider than 120 columns.
        with open(SYNTHETIC_H200, encoding="utf-8") as f:
            doc = json.load(f)
        proc = gpubench("compare", SYNTHETIC_H200, SYNTHETIC_H200)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        lines = proc.stdout.splitlines()
        start = next(i for i, l in enumerate(lines) if l.startswith("  measurement "))
        table = lines[start:lines.index("", start)]
        headings = [l for l in table if not l.startswith(" ")]
        points = {(r["benchmark"], json.dumps(r["params"], sort_keys=True)) for r in doc["results"]}
        self.assertEqual(len(headings), len(points))
        self.assertEqual(sorted({h.split(" | ")[0] for h in headings}),
                         sorted({b for b, _ in points}))
        self.assertLessEqual(max(len(l) for l in proc.stdout.splitlines()), 120)

    def test_json_written_with_output(self):
        out = os.path.join(self.tmp.name, "cmp.json")
        proc = gpubench("compare", self.measured, self.measured, "--output", out)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(out, encoding="utf-8") as f:
            c = json.load(f)
        self.assertEqual(c["schema"], "gpubench-compare/1")
        self.assertIn("Hodges-Lehmann", c["test"])


class RegressionScript(CompareCase):
    """scripts/ci-regression.sh with a CPU-only config standing in for ci-smoke.json.

    The script really runs the config, but the gate's verdict must not hang on CPU timings of a
    busy machine: GPUBENCH points at a wrapper that runs the real binary and then replaces the
    samples in the run's --output with the fixed ones of self.report (PINNED), so each baseline
    below is a crafted scaling of exactly the samples the script compares against."""

    WRAPPER = """#!/usr/bin/env python3
import json, os, subprocess, sys
args = sys.argv[1:]
status = subprocess.run([os.environ["REAL_GPUBENCH"], *args], check=False).returncode
if args and args[0] == "run" and "--output" in args and status in (0, 1):
    out = args[args.index("--output") + 1]
    with open(os.environ["PINNED"], encoding="utf-8") as f:
        pinned = json.load(f)
    with open(out, encoding="utf-8") as f:
        doc = json.load(f)
    for res, fixed in zip(doc["results"], pinned["results"]):
        samples = {m["name"]: m["samples"] for m in fixed["measurements"]}
        for m in res["measurements"]:
            m["samples"] = samples[m["name"]]
    with open(out, "w", encoding="utf-8") as f:
        json.dump(doc, f)
sys.exit(status)
"""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.wrapper = os.path.join(cls.tmp.name, "gpubench-pinned")
        with open(cls.wrapper, "w", encoding="utf-8") as f:
            f.write(cls.WRAPPER)
        os.chmod(cls.wrapper, 0o755)

    def script(self, baseline, out_dir):
        env = dict(os.environ, GPUBENCH=self.wrapper, REAL_GPUBENCH=GPUBENCH,
                   PINNED=self.measured, CONFIG=os.path.join(self.tmp.name, "run.json"),
                   CLOCK="all",  # the CPU-only stand-in has host-clock measurements only
                   GATE="host", HOST_THRESHOLD="5%",
                   RUNS="1")  # pinned samples: every run would be the same
        return subprocess.run(["bash", os.path.join(SOURCE_DIR, "scripts", "ci-regression.sh"),
                               baseline, out_dir], capture_output=True, text=True, timeout=300,
                              env=env, check=False)

    def test_passes_against_a_slower_baseline_and_fails_against_a_much_faster_one(self):
        slow_base = self.save(self.scaled(self.scaled(self.report, 3.0), 3.0, 1), "slow-base.json")
        ok = self.script(slow_base, os.path.join(self.tmp.name, "ci-ok"))
        self.assertEqual(ok.returncode, 0, ok.stdout + ok.stderr)
        for name in ("run-1.json", "compare.md", "compare.json", "run.md", "junit.xml"):
            self.assertTrue(os.path.exists(os.path.join(self.tmp.name, "ci-ok", name)), name)
        with open(os.path.join(self.tmp.name, "ci-ok", "compare.json"), encoding="utf-8") as f:
            self.assertEqual({r["verdict"] for r in json.load(f)["rows"]}, {"faster"})

        fast_base = self.save(self.scaled(self.report, 1 / 3.0, 1), "fast-base.json")
        bad = self.script(fast_base, os.path.join(self.tmp.name, "ci-bad"))
        self.assertEqual(bad.returncode, 1, bad.stdout + bad.stderr)
        self.assertIn("REGRESSION", bad.stdout)
        self.assertIn("vecadd cpu_reference [dtype=f32 n=65536]: +200.0%", bad.stdout)

    def test_missing_baseline_is_a_usage_error(self):
        proc = self.script(os.path.join(self.tmp.name, "none.json"), self.tmp.name)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("cannot read the baseline", proc.stderr)


class Errors(CompareCase):
    def test_bad_inputs_are_usage_errors_naming_the_file(self):
        not_json = os.path.join(self.tmp.name, "broken.json")
        with open(not_json, "w", encoding="utf-8") as f:
            f.write("{")
        cases = [((self.measured, not_json), "broken.json:1:2: not valid JSON"),
                 ((self.measured, os.path.join(self.tmp.name, "missing.json")),
                  "missing.json: cannot open"),
                 ((self.measured, self.save({"schema": "other/2"}, "other.json")),
                  "other.json: result file: schema"),
                 ((self.measured, self.measured, "--threshold", "lots"),
                  "--threshold: 'lots' is not a percentage"),
                 ((self.measured, self.measured, "--format", "xml"), "--format: 'xml'")]
        for args, message in cases:
            with self.subTest(args=args):
                proc = gpubench("compare", *args)
                self.assertEqual(proc.returncode, 2, proc.stderr)
                self.assertIn(message, proc.stderr)


if __name__ == "__main__":
    unittest.main()
