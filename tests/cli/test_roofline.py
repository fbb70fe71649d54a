"""gpubench roofline through the real binary: help, the plan it makes, bad input, no GPU, and
(where a GPU is usable) a verified sweep with its roofs and summary."""
import json
import unittest

from gpubench_cli import FAST, has_gpu, run, validate


class RooflineHelp(unittest.TestCase):
    def test_help_shows_options_and_examples(self):
        r = run("roofline", "--help")
        self.assertEqual(r.returncode, 0)
        for opt in ("--n", "--dtype", "--intensity", "--block", "--grid", "Examples:"):
            self.assertIn(opt, r.stdout)

    def test_top_level_help_lists_roofline(self):
        self.assertIn("roofline", run("--help").stdout)

    def test_the_default_sweep_is_sixteenth_to_1024_flops_a_byte(self):
        r = run("roofline", "--dry-run")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("15 points would run", r.stdout)
        for value in ("intensity=0.0625", "intensity=1 ", "intensity=1024"):
            self.assertIn(value, r.stdout + " ")


class RooflineBadInput(unittest.TestCase):
    def test_the_grid_is_one_vector_a_thread_unless_asked(self):
        r = run("roofline", "--dry-run", "--intensity", "1")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("grid=vectors", r.stdout)
        r = run("roofline", "--dry-run", "--intensity", "1", "--grid", "device")
        self.assertIn("grid=device", r.stdout)


    def test_bad_values_exit_2_naming_the_option(self):
        for args, says in ((["--n", "12"], "--n"), (["--intensity", "0"], "--intensity"),
                           (["--intensity", "5000"], "--intensity"),
                           (["--dtype", "f8"], "--dtype"), (["--block", "100"], "--block"),
                           (["--grid", "0"], "--grid"), (["--grid", "wave"], "--grid"),
                           (["--grid", "2097152"], "--grid"),
                           (["--cpu-only"], "no CPU-only mode")):
            with self.subTest(args=args):
                r = run("roofline", *args, "--dry-run")
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn(says, r.stderr)
                self.assertEqual(r.stdout, "")

    @unittest.skipIf(has_gpu(), "a GPU is usable here")
    def test_without_a_gpu_it_says_so_and_exits_77(self):
        r = run("roofline", "--n", "1M", "--intensity", "1")
        self.assertEqual(r.returncode, 77, r.stderr)
        self.assertIn("no usable CUDA device", r.stderr)


@unittest.skipUnless(has_gpu(), "no usable CUDA device")
class RooflineGpu(unittest.TestCase):
    def test_a_sweep_verifies_and_places_every_point_under_its_roof(self):
        r = run("roofline", "--n", "1M", "--dtype", "f32,f16", "--intensity", "0.0625,1,64",
                *FAST, "--format", "json")
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        validate(doc)
        self.assertEqual(len(doc["results"]), 6)
        for res in doc["results"]:
            self.assertTrue(res["verification"]["passed"])
            m = res["measurements"][0]
            self.assertEqual(m["name"], "kernel")
            self.assertEqual(m["item_unit"], "FLOP")
            self.assertAlmostEqual(m["items"] / m["bytes"],
                                   res["derived"]["arithmetic_intensity"])
            self.assertIn("sm_clock", m)

    def test_the_table_ends_with_the_roofs(self):
        r = run("roofline", "--n", "1M", "--intensity", "0.25,256", *FAST)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("roofline summary", r.stdout)
        self.assertIn("memory roof", r.stdout)
        self.assertIn("ridge", r.stdout)


if __name__ == "__main__":
    unittest.main()
