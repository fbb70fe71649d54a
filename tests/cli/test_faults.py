"""Faults inside a sweep (docs/reliability.md, "Faults"): a point that cannot get its memory is
skipped with its reason and the sweep goes on; a sticky CUDA error, provoked on the device through
the test-only hook GPUBENCH_INJECT_FAULT, stops the run with exit 3, names the kernel and the CUDA
error, and leaves the results measured so far in --output, marked incomplete."""
import json
import os
import unittest

from gpubench_cli import FAST, run, tempdir, validate

INJECT = "GPUBENCH_INJECT_FAULT"


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


class StickyCudaError(unittest.TestCase):
    """Needs a GPU: skipped (not passed) where gpubench finds no usable CUDA device."""

    def test_an_illegal_address_stops_the_run_with_3_and_keeps_what_was_measured(self):
        with tempdir() as tmp:
            out = os.path.join(tmp, "X.json")
            r = run("vecadd", "--n", "1M,2M,4M", "--output", out, *FAST, env={INJECT: "vecadd:2"})
            if r.returncode == 77:
                self.skipTest(f"needs a GPU: {r.stderr.strip()}")
            self.assertEqual(r.returncode, 3, r.stderr)
            # The error line itself names the CUDA error and the kernel (the hook's own log line
            # names the kernel too, so the two are looked for on the same line). The fault
            # surfaces at a later call: "CALL (cudaErrorIllegalAddress: ...) at FILE:LINE (sticky
            # error; most recent kernel launched: fault_injection)".
            errors = [line for line in r.stderr.splitlines()
                      if "cudaErrorIllegalAddress" in line and "fault_injection" in line]
            self.assertTrue(errors, r.stderr)
            # X.json.journal keeps point 1 for --resume (docs/reliability.md).
            self.assertEqual(sorted(os.listdir(tmp)), ["X.json", "X.json.journal"],
                             "a temporary file was left, or the journal was not")
            with open(out, encoding="utf-8") as f:
                doc = json.load(f)
        validate(doc)
        meta = doc["meta"]
        self.assertTrue(meta["incomplete"])
        self.assertIn("CUDA error", meta["incomplete_reason"])
        self.assertIn("cudaErrorIllegalAddress", meta["incomplete_reason"])
        self.assertIn("fault_injection", meta["incomplete_reason"])
        results = doc["results"]
        self.assertEqual([res["status"] for res in results], ["ok", "error"],
                         "the point after the fault must not run")
        first, second = results
        self.assertEqual(first["params"]["n"], 1_000_000)
        self.assertTrue(first["verification"]["passed"])
        self.assertGreater(len(first["measurements"]), 0)
        for m in first["measurements"]:
            self.assertGreater(m["stats"]["count"], 0, m["name"])
        self.assertEqual(second["params"]["n"], 2_000_000)
        self.assertIn("cudaErrorIllegalAddress", second["reason"])
        self.assertIn("fault_injection", second["reason"])
        self.assertEqual(second["measurements"], [])


class FaultInjectionHook(unittest.TestCase):
    """The hook's value is checked like an option: a bad one is a usage error (exit 2) before
    anything is measured or written. No GPU needed."""

    def test_a_malformed_value_is_rejected_before_any_device_check(self):
        # Without --cpu-only: the form is checked before gpubench looks for a device (77).
        for value, message in (
                ("vecadd", "'vecadd' is not BENCHMARK:POINT"),
                ("vecadd:", "'vecadd:' is not BENCHMARK:POINT"),
                (":2", "':2' is not BENCHMARK:POINT"),
                ("vecadd:0", "'vecadd:0' is not BENCHMARK:POINT"),
                ("vecadd:two", "'vecadd:two' is not BENCHMARK:POINT"),
                ("vecadd:-1", "'vecadd:-1' is not BENCHMARK:POINT"),
                ("nbody:1", "'nbody' is not a benchmark of this run; expected one of vecadd")):
            with self.subTest(value=value):
                r = run("vecadd", "--n", "1K", *FAST, env={INJECT: value})
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn(f"Error: {INJECT}: {message}", r.stderr)
                self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)

    def test_a_point_outside_the_plan_or_without_a_gpu_is_rejected(self):
        for value, message in (
                ("vecadd:3", "point 3 is beyond the plan, which has 2 points"),
                ("augment:1", "'augment' is not a benchmark of this run; expected one of vecadd"),
                ("vecadd:2", "point 2 runs on the CPU only (--cpu-only); a device fault needs a "
                             "GPU")):
            with self.subTest(value=value), tempdir() as tmp:
                r = run("vecadd", "--cpu-only", "--n", "1K,2K", "--output",
                        os.path.join(tmp, "x.json"), *FAST, env={INJECT: value})
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn(f"Error: {INJECT}: {message}", r.stderr)
                self.assertEqual(r.stdout, "")
                self.assertEqual(os.listdir(tmp), [], "nothing is written for a usage error")

    def test_an_empty_value_injects_nothing(self):
        r = run("vecadd", "--cpu-only", "--n", "1K", *FAST, env={INJECT: ""})
        self.assertEqual(r.returncode, 0, r.stderr)


if __name__ == "__main__":
    unittest.main()
