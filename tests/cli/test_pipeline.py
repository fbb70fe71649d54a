"""gpubench pipeline through the real binary: help, bad input (exit 2 before any GPU is touched),
--cpu-only refused, and on a GPU machine a short run of both scenarios in every mode."""
import json
import unittest

from gpubench_cli import FAST, has_gpu, run, validate

SHORT = ["--steps", "4", "--warmup-steps", "1", "--hidden", "128", "--enc-width", "128",
         "--dec-width", "64"]


class Help(unittest.TestCase):
    def test_help_shows_options_examples_and_exit_codes(self):
        r = run("pipeline", "--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        for opt in ("--scenario", "--mode", "--batch", "--depth", "--steps", "--warmup-steps",
                    "--lr", "--pool", "--overlap-strip", "--hidden", "--layers", "--outputs", "--in-features",
                    "--enc-width", "--enc-layers", "--dec-width", "--dec-layers", "Examples:",
                    "augment-train", "encoder-decoder", "cpu-augment", "77 no usable CUDA device"):
            self.assertIn(opt, r.stdout)

    def test_listed_in_the_top_level_help(self):
        r = run("--help")
        self.assertEqual(r.returncode, 0)
        self.assertIn("pipeline", r.stdout)


class BadInput(unittest.TestCase):
    def check(self, args, option):
        r = run("pipeline", *args)
        self.assertEqual(r.returncode, 2, f"{args}: {r.stdout}{r.stderr}")
        self.assertIn(option, r.stderr)

    def test_depth_0(self):
        self.check(["--depth", "0"], "--depth")

    def test_batch_0(self):
        self.check(["--batch", "0"], "--batch")

    def test_batch_list_with_0(self):
        self.check(["--batch", "8,0"], "--batch")

    def test_steps_below_warmup(self):
        self.check(["--steps", "2", "--warmup-steps", "5"], "--steps")

    def test_unknown_scenario(self):
        self.check(["--scenario", "resnet"], "--scenario")

    def test_unknown_mode(self):
        self.check(["--mode", "overlapped"], "--mode")

    def test_cpu_augment_needs_augment_train(self):
        self.check(["--scenario", "encoder-decoder", "--mode", "cpu-augment"], "--mode")

    def test_pool_must_divide_the_image(self):
        self.check(["--pool", "7"], "--pool")

    def test_overlap_strip_not_a_power_of_two(self):
        self.check(["--overlap-strip", "3"], "--overlap-strip")

    def test_not_a_number(self):
        self.check(["--steps", "many"], "--steps")

    def test_cpu_only_is_refused_with_a_reason(self):
        r = run("pipeline", "--cpu-only")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("--cpu-only", r.stderr)
        self.assertIn("pipeline", r.stderr)
        self.assertIn("needs a GPU", r.stderr)


@unittest.skipIf(has_gpu(), "this machine has a usable GPU")
class NoGpu(unittest.TestCase):
    def test_exits_77_with_a_hint(self):
        r = run("pipeline", *FAST, *SHORT)
        self.assertEqual(r.returncode, 77, r.stdout + r.stderr)


@unittest.skipUnless(has_gpu(), "needs a usable CUDA device")
class OnGpu(unittest.TestCase):
    def test_both_scenarios_every_mode_json(self):
        r = run("pipeline", "--batch", "8", "--depth", "2,3", "--format", "json", *FAST, *SHORT,
                timeout=600)
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        validate(doc)
        results = doc["results"]
        self.assertEqual(len(results), 4)  # 2 scenarios x 2 depths
        for res in results:
            self.assertEqual(res["status"], "ok", res.get("reason"))
            self.assertTrue(res["verification"]["passed"])
            names = {m["name"] for m in res["measurements"]}
            self.assertTrue({"stage_a", "stage_b", "serial", "streams", "graph"} <= names)
            if res["params"]["scenario"] == "augment-train":
                self.assertIn("cpu_augment", names)
                self.assertIn("stage_a_cpu", names)
            for key in ("ideal_speedup", "streams_speedup_vs_serial", "graph_speedup_vs_serial",
                        "serial_steps_per_s", "graph_images_per_s"):
                self.assertIn(key, res["derived"])

    def test_table_has_the_batch_summary(self):
        r = run("pipeline", "--scenario", "encoder-decoder", "--batch", "8,16", *FAST, *SHORT,
                timeout=600)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("pipeline summary", r.stdout)
        self.assertIn("passed", r.stdout)

    def test_batch_and_timestamps_are_noted_not_measured(self):
        r = run("pipeline", "--scenario", "encoder-decoder", "--mode", "serial", "--batch", "8",
                "--batch-time", "0.01", "--timestamps", "--format", "json", *FAST, *SHORT,
                timeout=600)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr.count("pipeline has no '(batch)' or '(timestamps)' rows"), 1)
        names = [m["name"] for m in json.loads(r.stdout)["results"][0]["measurements"]]
        self.assertFalse([n for n in names if n.endswith(")")], names)


if __name__ == "__main__":
    unittest.main()
