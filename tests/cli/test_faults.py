"""Faults inside a sweep: a point that cannot get its memory is skipped with its reason, the sweep
goes on, and the exit code (3) says something did not run."""
import json
import unittest

from gpubench_cli import FAST, run, validate


class AllocationFailureInASweep(unittest.TestCase):
    def test_the_point_is_skipped_and_the_sweep_goes_on(self):
        # 2^36 f32 elements need 824 GB of host memory for a, b and c: no machine here has it.
        r = run("vecadd", "--cpu-only", "--n", "1000,2^36,2000", "--format", "json", *FAST)
        self.assertEqual(r.returncode, 3, r.stderr)
        doc = json.loads(r.stdout)
        validate(doc)
        statuses = [res["status"] for res in doc["results"]]
        self.assertEqual(statuses, ["ok", "skipped", "ok"])
        skipped = doc["results"][1]
        self.assertIn("host memory", skipped["reason"])
        self.assertIn("GB", skipped["reason"])
        self.assertEqual(skipped["measurements"], [])
        self.assertGreater(doc["results"][2]["measurements"][0]["stats"]["count"], 0)
        self.assertIn("skipped", r.stderr)


if __name__ == "__main__":
    unittest.main()
