"""gpubench stream through the real binary: help, CPU-only results in JSON and every format,
bad input, and (where a GPU is usable) a verified run of every kernel."""
import json
import unittest

from gpubench_cli import FAST, has_gpu, run, validate

KERNELS = ("copy", "mul", "add", "triad", "dot")


class StreamHelp(unittest.TestCase):
    def test_help_shows_options_and_examples(self):
        r = run("stream", "--help")
        self.assertEqual(r.returncode, 0)
        for opt in ("--n", "--dtype", "--block", "--grid", "--warm", "--cpu-only", "Examples:"):
            self.assertIn(opt, r.stdout)

    def test_top_level_help_lists_stream(self):
        self.assertIn("stream", run("--help").stdout)


class StreamCpuOnly(unittest.TestCase):
    def test_json_has_every_kernel_with_its_bytes(self):
        r = run("stream", "--cpu-only", "--n", "1000,4099", "--dtype", "f32,f64", *FAST,
                "--format", "json")
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        validate(doc)
        self.assertEqual(len(doc["results"]), 4)  # 2 sizes x 2 dtypes
        arrays = {"copy": 2, "mul": 2, "add": 3, "triad": 3, "dot": 2}
        for res in doc["results"]:
            self.assertEqual(res["benchmark"], "stream")
            self.assertEqual(res["device"], -1)
            self.assertFalse(res["verification"]["performed"])
            size = 4 if res["params"]["dtype"] == "f32" else 8
            names = [m["name"] for m in res["measurements"]]
            self.assertEqual(names, ["cpu_" + k for k in KERNELS])
            for m in res["measurements"]:
                self.assertEqual(m["clock"], "host")
                self.assertEqual(m["bytes"], arrays[m["name"][4:]] * size * res["params"]["n"])
                self.assertGreater(m["rates"]["bytes_per_s"], 0)

    def test_every_format(self):
        for fmt in ("table", "csv", "md"):
            r = run("stream", "--cpu-only", "--n", "1M", *FAST, "--format", fmt)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("cpu_triad", r.stdout, fmt)

    def test_half_types_and_bad_sizes_are_usage_errors(self):
        for args in (["--dtype", "f16"], ["--n", "0"], ["--n", "2^37"], ["--block", "100"],
                     ["--grid", "0"]):
            r = run("stream", "--cpu-only", *args, *FAST)
            self.assertEqual(r.returncode, 2, args)
            self.assertIn("--" + args[0][2:], r.stderr)


@unittest.skipUnless(has_gpu(), "no usable CUDA device")
class StreamGpu(unittest.TestCase):
    def test_every_kernel_verifies_cold_and_warm(self):
        for extra in ([], ["--warm"]):
            r = run("stream", "--n", "1M,1000003", "--dtype", "f32,f64", *FAST, *extra,
                    "--format", "json")
            self.assertEqual(r.returncode, 0, r.stderr)
            doc = json.loads(r.stdout)
            validate(doc)
            for res in doc["results"]:
                self.assertTrue(res["verification"]["passed"])
                for k in KERNELS:
                    m = next(m for m in res["measurements"] if m["name"] == k)
                    self.assertEqual(m["cold"], not extra)
                    self.assertIn("fraction_of_theoretical_peak", m["rates"])

    def test_batch_timestamp_and_energy_rows(self):
        r = run("stream", "--n", "1Mi", *FAST, "--batch-time", "0.001", "--timestamps",
                "--energy", "--format", "json")
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        validate(doc)
        rows = {m["name"]: m for m in doc["results"][0]["measurements"]}
        for k in KERNELS:
            self.assertEqual(rows[f"{k} (batch)"]["timing"], "batch")
            self.assertEqual(rows[f"{k} (timestamps)"]["timing"], "timestamps")
            self.assertIn("supported", rows[k]["energy"])
            self.assertIn("supported", rows[f"cpu_{k}"]["energy"])


class StreamCpuEnergy(unittest.TestCase):
    def test_cpu_rows_get_energy_or_say_why(self):
        r = run("stream", "--n", "64Ki", "--cpu-only", "--energy", *FAST, "--format", "json")
        self.assertEqual(r.returncode, 0, r.stderr)
        for m in json.loads(r.stdout)["results"][0]["measurements"]:
            energy = m["energy"]
            self.assertTrue(energy.get("j_per_op", 0) > 0 if energy["supported"]
                            else energy["reason"], m["name"])


if __name__ == "__main__":
    unittest.main()
