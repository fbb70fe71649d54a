"""gemm without a GPU: the OpenBLAS row on small shapes of every dtype and layout, verified against
the f64 reference, with its description and work; the shapes, layouts and --algos counts refused
with exit 2 naming the option; --algos planned as a point of GPU runs only; a GPU run without a
GPU refused with exit 77."""
import json
import unittest

from gpubench_cli import FAST, run, validate


def gemm(*args):
    return run("gemm", "--cpu-only", *FAST, "--cpu-threads", "2", *args)


class Gemm(unittest.TestCase):
    def test_openblas_row_verified_for_every_dtype_and_layout(self):
        proc = gemm("--m", "37", "--n", "29", "--k", "65", "--dtype", "all", "--layout", "all",
                    "--format", "json")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        doc = json.loads(proc.stdout)
        validate(doc)
        self.assertEqual(len(doc["results"]), 18)  # 6 dtypes x 3 layouts
        for r in doc["results"]:
            with self.subTest(params=r["params"]):
                self.assertEqual(r["status"], "ok", r.get("reason"))
                (row,) = r["measurements"]
                self.assertEqual(row["name"], "cpu_openblas")
                self.assertEqual(row["item_unit"], "FLOP")
                self.assertEqual(row["items"], 2 * 37 * 29 * 65)
                self.assertIn("OpenBLAS", row["description"])
                self.assertIn("cblas_dgemm" if r["params"]["dtype"] == "f64" else "cblas_sgemm",
                              row["description"])
                v = r["verification"]
                self.assertTrue(v["passed"])
                self.assertEqual(v["checked"], 37 * 29)
                self.assertIn("every element", v["details"]["cpu_openblas"]["method"])

    def test_table_names_the_rate_in_flops(self):
        proc = gemm("--m", "64", "--n", "64", "--k", "64")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("FLOP/s", proc.stdout)
        self.assertIn("verification: PASSED", proc.stdout)

    def test_bad_shapes_and_layouts_exit_2_naming_the_option(self):
        for args, option in ((("--m", "0"), "--m"), (("--n", "1048577"), "--n"),
                             (("--k", "2^21"), "--k"), (("--layout", "tt"), "--layout"),
                             (("--dtype", "fp4"), "--dtype"), (("--algos", "0"), "--algos"),
                             (("--algos", "33"), "--algos")):
            with self.subTest(args=args):
                proc = gemm(*args)
                self.assertEqual(proc.returncode, 2, proc.stderr)
                self.assertIn(f"Error: {option}", proc.stderr)

    def test_algos_is_a_point_of_a_gpu_run_only(self):
        # A swept --algos plans a point per value; a CPU-only run has no cuBLASLt to time, and
        # its points leave the GPU-only option out.
        proc = run("gemm", "--m", "64", "--n", "64", "--k", "64", "--algos", "1,8", "--dry-run")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("algos=1 ", proc.stdout)
        self.assertIn("algos=8 ", proc.stdout)
        proc = gemm("--m", "64", "--n", "64", "--k", "64", "--algos", "8", "--format", "json")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        (r,) = json.loads(proc.stdout)["results"]
        self.assertNotIn("algos", r["params"])

    def test_a_gpu_run_without_a_gpu_exits_77(self):
        proc = run("gemm", "--m", "64", "--n", "64", "--k", "64")
        if proc.returncode == 0:
            self.skipTest("this machine has a GPU")
        self.assertEqual(proc.returncode, 77, proc.stderr)
        self.assertIn("no usable CUDA device", proc.stderr)


if __name__ == "__main__":
    unittest.main()
