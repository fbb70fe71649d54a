"""--timestamps: the GPU's own kernel timestamps (CUPTI) as extra rows, as a user sees them.
Where CUPTI cannot be loaded the run still succeeds and says why it has no rows."""
import json
import unittest

from gpubench_cli import FAST, has_gpu, json_output, run, tempdir


def run_file(d, options):
    path = f"{d}/t.json"
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"options": options,
                   "benchmarks": [{"benchmark": "vecadd", "params": {"n": "4Ki"}}]}, f)
    return path


class Options(unittest.TestCase):
    def test_help_offers_it(self):
        for bench in ("vecadd", "augment"):
            proc = run(bench, "--help")
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertIn("--timestamps", proc.stdout)

    def test_run_files_take_it_and_check_its_type(self):
        with tempdir() as d:
            proc = run("run", run_file(d, {"cpu-only": True, "timestamps": True}), "-q",
                       *FAST)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            proc = run("run", run_file(d, {"cpu-only": True, "timestamps": "yes"}), "-q")
            self.assertEqual(proc.returncode, 2, proc.stdout)
            self.assertIn("options.timestamps", proc.stderr)

    def test_cpu_only_runs_have_no_timestamp_rows(self):
        proc = run("vecadd", "--n", "4Ki", "--cpu-only", "--timestamps", "--format", "json",
                   *FAST)
        names = [m["name"] for m in json_output(self, proc)["results"][0]["measurements"]]
        self.assertEqual(names, ["cpu_reference"])


@unittest.skipUnless(has_gpu(), "needs a CUDA device")
class OnTheGpu(unittest.TestCase):
    def test_rows_beside_the_event_timed_ones(self):
        proc = run("vecadd", "--n", "1Mi", "--warm", "--timestamps", "--format", "json", *FAST)
        doc = json_output(self, proc, schema=True)
        rows = {m["name"]: m for m in doc["results"][0]["measurements"]}
        ts = rows["kernel (timestamps)"]
        self.assertEqual(ts["timing"], "timestamps")
        self.assertFalse(ts["cold"])
        self.assertLess(ts["stats"]["median"], rows["kernel"]["stats"]["median"])
        proc = run("augment", "--batch", "4", "--timestamps", "--format", "json", *FAST)
        names = [m["name"] for m in json_output(self, proc)["results"][0]["measurements"]]
        self.assertIn("fused (timestamps)", names)
        self.assertNotIn("h2d (timestamps)", names)

    def test_without_cupti_it_says_why_and_exits_0(self):
        proc = run("vecadd", "--n", "64Ki", "--timestamps", "--format", "json", *FAST,
                   env={"GPUBENCH_CUPTI_LIBRARY": "/nonexistent/libcupti.so"})
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("--timestamps: no '(timestamps)' rows: libcupti.so.", proc.stderr)
        self.assertIn("/nonexistent/libcupti.so", proc.stderr)
        names = [m["name"] for m in json.loads(proc.stdout)["results"][0]["measurements"]]
        self.assertIn("kernel", names)
        self.assertNotIn("kernel (timestamps)", names)

    def test_not_with_concurrent(self):
        proc = run("vecadd", "--n", "64Ki", "--concurrent", "--timestamps", *FAST)
        self.assertEqual(proc.returncode, 2, proc.stdout)
        self.assertIn("--timestamps does not apply with --concurrent", proc.stderr)


if __name__ == "__main__":
    unittest.main()
