"""--stopping chooses the rule that ends sampling (stable, the default, or nvbench's entropy),
--reject-throttled drops GPU samples the SM clock fell during; both are measurement options,
recorded in meta.options and repeated by rerun, and bad values exit 2 naming the option
(docs/methodology.md, "Stopping" and "The SM clock of each sample")."""
import json
import os
import unittest

from gpubench_cli import run, tempdir, validate

BASE = ["vecadd", "--cpu-only", "--n", "1K", "--cpu-threads", "1", "--warmup", "0",
        "--min-time", "0", "--timeout", "2"]


class Stopping(unittest.TestCase):
    def setUp(self):
        self.tmp = tempdir()
        self.addCleanup(self.tmp.cleanup)

    def result(self, *args):
        out = os.path.join(self.tmp.name, "r.json")
        p = run(*args, "--output", out, "-q")
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out, encoding="utf-8") as f:
            doc = json.load(f)
        validate(doc)
        return doc

    def test_entropy_runs_and_is_recorded(self):
        doc = self.result(*BASE, "--max-samples", "3000", "--stopping", "entropy",
                          "--entropy-max-angle", "0.1",
                          "--entropy-min-r2", "0.3")
        options = doc["meta"]["options"]
        self.assertEqual(options["stopping"], "entropy")
        self.assertEqual(options["entropy-max-angle"], 0.1)
        self.assertEqual(options["entropy-min-r2"], 0.3)
        measurements = [m for r in doc["results"] for m in r["measurements"]]
        self.assertTrue(measurements)
        for m in measurements:
            self.assertEqual(m["stopping"]["rule"], "entropy")
            self.assertEqual(m["stopping"]["max_angle_deg"], 0.1)
            self.assertEqual(m["stopping"]["min_r2"], 0.3)
            self.assertIn(m["stop_reason"], ["entropy", "max_samples", "timeout"])
            if m["stop_reason"] == "entropy":
                self.assertLessEqual(m["stopping"]["angle_deg"], 0.1)
                self.assertGreaterEqual(m["stopping"]["r2"], 0.3)
                self.assertTrue(m["converged"])

    def test_the_default_rule_is_stable(self):
        doc = self.result(*BASE, "--max-samples", "20")
        self.assertEqual(doc["meta"]["options"]["stopping"], "stable")
        for r in doc["results"]:
            for m in r["measurements"]:
                self.assertEqual(m["stopping"], {"rule": "stable"})
                self.assertIn(m["stop_reason"], ["noise", "stable", "max_samples", "timeout"])

    def test_a_rerun_repeats_the_rule(self):
        first = self.result(*BASE, "--max-samples", "50", "--stopping", "entropy",
                            "--reject-throttled", "0.9")
        second = self.result("rerun", os.path.join(self.tmp.name, "r.json"))
        self.assertEqual(second["meta"]["options"], first["meta"]["options"])
        self.assertEqual(second["meta"]["options"]["reject-throttled"], 0.9)
        for r in second["results"]:
            for m in r["measurements"]:
                self.assertEqual(m["stopping"]["rule"], "entropy")
                # Host rows are never rejected: throttling is a GPU clock's.
                self.assertNotIn("throttled_samples", m)

    def test_bad_values_exit_2_naming_the_option(self):
        for args, says in [(["--stopping", "foo"], "--stopping: 'foo' is not one of stable, "
                                                    "entropy"),
                           (["--reject-throttled", "1.5"], "--reject-throttled: 1.5"),
                           (["--entropy-max-angle", "-1"], "--entropy-max-angle: -1"),
                           (["--entropy-min-r2", "2"], "--entropy-min-r2: 2")]:
            with self.subTest(args=args):
                p = run(*BASE, *args)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn(says, p.stderr)
                self.assertEqual(p.stdout, "")

    def test_bad_values_in_a_run_file_exit_2(self):
        plan = os.path.join(self.tmp.name, "plan.json")
        for key, value in [("stopping", "foo"), ("reject-throttled", 1.5),
                           ("entropy-max-angle", -1)]:
            with self.subTest(key=key):
                with open(plan, "w", encoding="utf-8") as f:
                    json.dump({"options": {"cpu-only": True, key: value},
                               "benchmarks": [{"benchmark": "vecadd", "params": {"n": "1K"}}]}, f)
                p = run("run", plan)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn(f"options.{key}", p.stderr)


if __name__ == "__main__":
    unittest.main()
