"""--energy, telemetry and the stop column, as a user sees them. This machine has no
NVML: energy must be reported unsupported with its reason, never as a silent 0, and exit 0."""
import json
import unittest

from gpubench_cli import FAST, has_gpu, json_output, run, tempdir

NO_NVML = {"GPUBENCH_NVML_LIBRARY": "/nonexistent/libnvidia-ml.so.1"}


class CpuEnergy(unittest.TestCase):
    def test_energy_without_a_counter_is_unsupported_and_exit_0(self):
        proc = run("vecadd", "--n", "64Ki", "--cpu-only", "--energy", "--format", "json", *FAST)
        doc = json_output(self, proc, schema=True)
        cpu = doc["results"][0]["measurements"][0]
        self.assertEqual(cpu["name"], "cpu_reference")
        energy = cpu["energy"]
        if energy["supported"]:  # a host that lets us read RAPL
            self.assertGreater(energy["j_per_op"], 0)
        else:
            self.assertTrue(energy["reason"])
        self.assertIn("threads", cpu["description"])

    def test_table_says_unsupported_and_why(self):
        proc = run("vecadd", "--n", "64Ki", "--cpu-only", "--energy", *FAST)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertRegex(proc.stdout, r"energy: (unsupported \(.+\)|[0-9.]+ [pnum]?J/element)")
        self.assertIn("rel.sd = relative standard deviation", proc.stdout)

    def test_run_files_take_energy(self):
        with tempdir() as d:
            path = f"{d}/e.json"
            with open(path, "w", encoding="utf-8") as f:
                json.dump({"options": {"cpu_only": True, "energy": True, "min_samples": 2,
                                       "max_samples": 2, "min_time": 0, "timeout": 1},
                           "benchmarks": [{"benchmark": "vecadd", "params": {"n": "4Ki"}}]}, f)
            proc = run("run", path, "--format", "json", "-q")
            cpu = json_output(self, proc)["results"][0]["measurements"][0]
            self.assertIn("energy", cpu)

    def test_every_measurement_says_why_it_stopped(self):
        proc = run("vecadd", "--n", "4Ki", "--cpu-only", "--format", "json", *FAST)
        m = json_output(self, proc)["results"][0]["measurements"][0]
        self.assertIn(m["stop_reason"], ["noise", "stable", "max_samples", "timeout"])

    def test_energy_windows_are_validated_on_the_command_line_and_in_run_files(self):
        # Windows can only be made longer or more numerous than the method's minimum.
        for args, name in ((("--energy-window", "0.5"), "--energy-window"),
                           (("--energy-window", "61"), "--energy-window"),
                           (("--energy-windows", "4"), "--energy-windows"),
                           (("--energy-windows", "101"), "--energy-windows")):
            proc = run("vecadd", "--n", "4Ki", "--cpu-only", "--energy", *args, *FAST)
            self.assertEqual(proc.returncode, 2, args)
            self.assertIn(name, proc.stderr)
        proc = run("vecadd", "--n", "4Ki", "--cpu-only", "--energy", "--energy-window", "2",
                   "--energy-windows", "6", "--dry-run")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with tempdir() as d:
            path = f"{d}/w.json"
            with open(path, "w", encoding="utf-8") as f:
                json.dump({"options": {"cpu-only": True, "energy-windows": 3},
                           "benchmarks": [{"benchmark": "vecadd", "params": {"n": "4Ki"}}]}, f)
            proc = run("run", path, "-q")
            self.assertEqual(proc.returncode, 2, proc.stdout)
            self.assertIn("options.energy-windows: 3", proc.stderr)
            self.assertIn("expected an integer from 5 to 100", proc.stderr)

    def test_batch_time_is_validated(self):
        proc = run("vecadd", "--n", "4Ki", "--cpu-only", "--batch-time", "-1", *FAST)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--batch-time", proc.stderr)


@unittest.skipUnless(has_gpu(), "needs a CUDA device")
class GpuWithoutNvml(unittest.TestCase):
    def test_energy_and_telemetry_unavailable_without_nvml(self):
        proc = run("vecadd", "--n", "1Mi", "--energy", "--format", "json", *FAST, env=NO_NVML)
        doc = json_output(self, proc, schema=True)
        kernel = next(m for m in doc["results"][0]["measurements"] if m["name"] == "kernel")
        self.assertFalse(kernel["energy"]["supported"])
        self.assertIn("/nonexistent/libnvidia-ml.so.1", kernel["energy"]["reason"])
        self.assertFalse(kernel["telemetry"]["available"])
        table = run("vecadd", "--n", "1Mi", "--energy", *FAST, env=NO_NVML)
        self.assertEqual(table.returncode, 0, table.stderr)
        self.assertIn("telemetry: unavailable (", table.stdout)
        self.assertIn("energy: unsupported (", table.stdout)


if __name__ == "__main__":
    unittest.main()
