"""What the tool tells a newcomer fits what it does: a no-GPU hint that names what --cpu-only can
and cannot run, a journal of measured points never dropped unasked, the thresholds a comparison was
judged at, the legend's tokens explained, derived rates written as the table writes them."""
import json
import os
import unittest

from gpubench_cli import FAST, SYNTHETIC_H200, has_gpu, run, tempdir


class Hints(unittest.TestCase):
    def setUp(self):
        self.tmp = tempdir()
        self.addCleanup(self.tmp.cleanup)
        self.dir = self.tmp.name

    def path(self, name):
        return os.path.join(self.dir, name)

    def cpu_result(self, name, scale=1.0):
        path = self.path(name)
        if not os.path.exists(self.path("a.json")):
            proc = run("vecadd", "--cpu-only", "--n", "64K", *FAST, "-q", "--output",
                       self.path("a.json"))
            self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(self.path("a.json"), encoding="utf-8") as f:
            doc = json.load(f)
        for r in doc["results"]:
            for m in r["measurements"]:  # a steady row: the verdict depends on the shift alone
                m["samples"] = [1e-3 * scale * (1 + 0.002 * (i % 5)) for i in range(20)]
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        return path

    @unittest.skipIf(has_gpu(), "a GPU is usable here: no no-GPU hint to check")
    def test_the_no_gpu_hint_never_suggests_what_fails_next(self):
        plan = self.path("mixed.json")
        with open(plan, "w", encoding="utf-8") as f:
            json.dump({"benchmarks": [{"benchmark": "vecadd", "params": {"n": "1K"}},
                                      {"benchmark": "pipeline"}]}, f)
        proc = run("run", plan)
        self.assertEqual(proc.returncode, 77)
        self.assertNotIn("Use --cpu-only", proc.stderr)
        self.assertIn("pipeline has none (a GPU only)", proc.stderr)
        proc = run("vecadd", "--n", "1K")
        self.assertIn("Use --cpu-only", proc.stderr)
        proc = run("pipeline")
        self.assertEqual(proc.returncode, 77)
        self.assertNotIn("--cpu-only", proc.stderr)

    def test_host_rows_gated_at_their_own_threshold_are_not_summarized_at_the_gpus(self):
        base = self.cpu_result("base.json")
        slower = self.cpu_result("slower.json", 1.5)
        proc = run("compare", base, slower, "--gate", "host")
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        self.assertIn("Judged 1 run vs 1: thresholds as gated + run noise 10.0%", proc.stdout)
        self.assertIn("Gated: 1 host-clock row at 25.0%", proc.stdout)
        self.assertNotIn("threshold 5.0%", proc.stdout)
        self.assertIn("Never same: one run a side adds 10.0% run noise", proc.stdout)
        # At the GPU rows' threshold, the line names it as before.
        proc = run("compare", base, slower, "--gate", "host", "--host-threshold", "5")
        self.assertIn("Judged 1 run vs 1: threshold 5.0% + run noise 10.0%", proc.stdout)

    def test_the_legend_explains_stop_yes_and_what_helps_a_row_converge(self):
        with open(SYNTHETIC_H200, encoding="utf-8") as f:
            doc = json.load(f)
        for r in doc["results"]:
            for m in r["measurements"]:
                m.pop("stop_reason", None)
        old = self.path("old.json")
        with open(old, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        out = run("report", old).stdout.replace("\n  ", " ")
        self.assertIn("stop yes = converged (an older file, which names no stop reason)", out)
        # A row that a limit ended (a live run cannot promise one: two equal host samples
        # meet any --max-noise), read back by report as a saved file.
        doc["results"][0]["measurements"][0]["stop_reason"] = "max_samples"
        limited = self.path("limited.json")
        with open(limited, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        legend = run("report", limited).stdout.replace("\n  ", " ")
        self.assertIn("max-n = a limit ended sampling (not converged: more --max-samples or "
                      "--timeout", legend)

    def test_the_f16_reference_describes_the_path_it_takes(self):
        # docs/usage.md: f16 converted with F16C eight at a time where the CPU has it.
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            f16c = " f16c" in f.read()
        proc = run("vecadd", "--cpu-only", "--n", "1K", "--dtype", "f16", *FAST)
        note = proc.stdout.replace("\n    ", " ")
        self.assertIn("f16 widened to f32 with F16C eight at a time" if f16c
                      else "portable bit arithmetic (no F16C on this CPU)", note)
        self.assertNotIn("one at a time", note)

    def test_derived_rates_read_as_the_table_reads(self):
        proc = run("augment", "--cpu-only", "--batch", "2", "--size", "48", "--crop", "32",
                   "--resize", "40", *FAST)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        line = next(l for l in proc.stdout.splitlines() if "cpu_reference_images_per_s:" in l)
        self.assertRegex(line, r"cpu_reference_images_per_s: [0-9.]+ [kMG]? ?images/s$")
        self.assertNotIn("e+", line)


if __name__ == "__main__":
    unittest.main()
