"""SIGINT (docs/errors.md, "Interruption"): the run stops after the current sample, exits 130 and
still writes --output, atomically, with what was measured so far, marked incomplete."""
import json
import os
import signal
import subprocess
import tempfile
import time
import unittest

GPUBENCH = os.environ.get("GPUBENCH", "gpubench")


class Interrupt(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.out = os.path.join(self.tmp.name, "out.json")

    def interrupted(self, *args, after=1.0):
        """Runs gpubench with `args`, sends SIGINT after `after` seconds, returns the exit code."""
        proc = subprocess.Popen([GPUBENCH, *args, "--output", self.out], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
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
        self.assertEqual(os.listdir(self.tmp.name), ["out.json"], "a temporary file was left")
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
        code = self.interrupted("vecadd", "--cpu-only", "--n", "1K,100M,100M", "--timeout", "5",
                                "--min-time", "0", "--max-samples", "20")
        self.assertEqual(code, 130, self.stderr)
        doc = self.written()
        first = doc["results"][0]
        self.assertEqual(first["params"]["n"], 1000)
        self.assertEqual(first["status"], "ok")
        self.assertGreater(len(first["measurements"][0]["samples"]), 0)
        self.assertLess(len(doc["results"]), 3, "the points after the interrupted one must not run")


if __name__ == "__main__":
    unittest.main()
