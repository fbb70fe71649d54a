"""SIGINT (docs/errors.md, "Interruption"): the run stops after the current sample, exits 130 and
still writes --output, atomically, with what was measured so far, marked incomplete."""
import json
import math
import os
import signal
import subprocess
import tempfile
import time
import unittest

from gpubench_cli import GPUBENCH, has_gpu, validate, wait_for_signal_handlers


class Interrupt(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.out = os.path.join(self.tmp.name, "out.json")

    def interrupted(self, *args, after=1.0):
        """Runs gpubench with `args`, sends SIGINT after `after` seconds, returns the exit code."""
        proc = subprocess.Popen([GPUBENCH, *args, "--output", self.out], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        wait_for_signal_handlers(proc)
        time.sleep(after)
        self.assertIsNone(proc.poll(), "the run ended before SIGINT was sent")
        proc.send_signal(signal.SIGINT)
        try:
            _, self.stderr = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            self.fail("gpubench did not stop within 120 s of SIGINT")
        return proc.returncode

    def written(self):
        # The journal stays beside an incomplete file when it holds a point (--resume continues).
        self.assertEqual(sorted(set(os.listdir(self.tmp.name)) - {"out.json.journal"}),
                         ["out.json"], "a temporary file was left")
        with open(self.out, encoding="utf-8") as f:
            doc = json.load(f)
        self.assertEqual(doc["schema"], "gpubench/1")
        self.assertTrue(doc["meta"]["incomplete"])
        self.assertIn("SIGINT", doc["meta"]["incomplete_reason"])
        return doc

    def test_a_long_measurement_stops_with_130_and_an_incomplete_result(self):
        code = self.interrupted("vecadd", "--cpu-only", "--n", "100M", "--timeout", "5")
        self.assertEqual(code, 130, self.stderr)
        doc = self.written()
        self.assertEqual(len(doc["results"]), 1)
        self.assertEqual(doc["results"][0]["params"]["n"], 100_000_000)

    def test_points_finished_before_the_signal_keep_their_samples(self):
        # At least 1000 samples per point: the 1K point is done in milliseconds on any machine, the
        # 100M points run until their 5 s timeout, so the signal lands in the second point however
        # fast the machine is (20 samples of 100M once took under a second on a 16-core host).
        code = self.interrupted("vecadd", "--cpu-only", "--n", "1K,100M,100M", "--timeout", "5",
                                "--min-time", "0", "--min-samples", "1000")
        self.assertEqual(code, 130, self.stderr)
        doc = self.written()
        first = doc["results"][0]
        self.assertEqual(first["params"]["n"], 1000)
        self.assertEqual(first["status"], "ok")
        self.assertGreater(len(first["measurements"][0]["samples"]), 0)
        self.assertLess(len(doc["results"]), 3, "the points after the interrupted one must not run")

    def test_a_measurement_interrupted_in_its_warm_up_leaves_the_point_skipped(self):
        # A measurement interrupted before its first sample has no data, so the point is not
        # reported ok with empty statistics (docs/reliability.md, "SIGINT"). A million warm-up
        # samples of 4M elements: the signal lands in the warm-up.
        code = self.interrupted("vecadd", "--cpu-only", "--n", "4M", "--warmup", "1000000",
                                "--timeout", "86400", after=1.5)
        self.assertEqual(code, 130, self.stderr)
        doc = self.written()
        validate(doc)
        [point] = doc["results"]
        self.assertEqual(point["status"], "skipped")
        self.assertEqual(point["reason"],
                         "interrupted (SIGINT) before the first sample of cpu_reference")
        self.assertEqual(point["measurements"], [])
        self.assertEqual(point["derived"], {})

    def test_a_gpu_point_interrupted_while_being_set_up_is_not_reported_failed(self):
        """Needs a GPU: skipped (not passed) where gpubench finds no usable CUDA device.

        Wherever the signal lands (before the point, while its inputs are made, in the device's
        copy-peak measurement, in the CPU reference's warm-up), the GPU results are checked
        against a reference computed from the inputs, so the point is never `failed`, and a peak
        measurement left without a sample leaves the peak unknown rather than infinite (JSON has
        no infinity: the schema would reject the null written for it). Which stage each delay
        reaches depends on the machine, so several delays are tried; none is guaranteed to land
        before the reference's first timed run."""
        if not has_gpu():
            self.skipTest("needs a GPU")
        for after in (0.5, 1.0, 2.0, 4.0):
            with self.subTest(after=after):
                code = self.interrupted("vecadd", "--n", "256M", "--warmup", "1000000",
                                        "--timeout", "86400", after=after)
                self.assertEqual(code, 130, self.stderr)
                doc = self.written()
                validate(doc)
                for device in doc["devices"]:
                    for key, value in device["measured"].items():
                        self.assertTrue(math.isfinite(value) and value > 0, (key, value))
                for point in doc["results"]:
                    self.assertNotEqual(point["status"], "failed", point)
                    if point["verification"]["performed"]:
                        self.assertTrue(point["verification"]["passed"], point["verification"])
                    for m in point["measurements"]:
                        self.assertNotEqual(m["rates"].get("fraction_of_measured_peak"), 0, m)


if __name__ == "__main__":
    unittest.main()
