"""scripts/anchors/summarize.py on outputs shaped as nvbench 0.3.0 (--jsonbin), gpubench and
BabelStream (--csv) write them: the medians it sets side by side, the differences and the
verdicts on the targets of docs/methodology.md."""
import json
import os
import struct
import subprocess
import sys
import unittest

from gpubench_cli import SOURCE_DIR, tempdir

SUMMARIZE = os.path.join(SOURCE_DIR, "scripts", "anchors", "summarize.py")
SIZES = [1 << k for k in range(20, 31, 2)]
OPS = ("copy", "mul", "add", "triad", "dot")


def nvbench_time(n):
    return 8e-6 * n / SIZES[0]


def write_nvbench(folder, samples_of):
    """nvbench.json with one state per (benchmark, axes); samples in nvbench.json-bin/N.bin."""
    os.makedirs(os.path.join(folder, "nvbench.json-bin"))
    benches = {"vecadd": [], "stream": []}
    file_id = 0
    for bench, axes in [("vecadd", [("kernel", k), ("n", n)]) for k in ("seed", "vectorized")
                        for n in SIZES] + [("stream", [("op", op), ("n", n)]) for op in OPS
                                           for n in SIZES]:
        samples = samples_of(bench, dict(axes))
        name = f"nvbench.json-bin/{file_id}.bin"
        with open(os.path.join(folder, name), "wb") as f:
            f.write(struct.pack(f"<{len(samples)}f", *samples))
        file_id += 1
        benches[bench].append({
            "name": " ".join(f"{k}={v}" for k, v in axes),
            "axis_values": [{"name": k, "type": "int64" if k == "n" else "string",
                             "value": str(v)} for k, v in axes],
            "summaries": [
                {"tag": "nv/cold/time/gpu/mean",
                 "data": [{"name": "value", "type": "float64",
                           "value": str(sum(samples) / len(samples))}]},
                {"tag": "nv/json/bin:nv/cold/sample_times", "hint": "sample_times",
                 "data": [{"name": "filename", "type": "string", "value": name},
                          {"name": "size", "type": "int64", "value": str(len(samples))}]}],
            "is_skipped": False})
    with open(os.path.join(folder, "nvbench.json"), "w", encoding="utf-8") as f:
        json.dump({"benchmarks": [{"name": b, "states": s} for b, s in benches.items()]}, f)


def write_gpubench(folder, name, results):
    with open(os.path.join(folder, name), "w", encoding="utf-8") as f:
        json.dump({"schema": "gpubench/1", "results": results}, f)


def vecadd_results(mode, factor_of):
    return [{"benchmark": "vecadd", "status": "ok", "params": {"n": n, "kernel": k},
             "measurements": [
                 {"name": "kernel", "clock": "gpu", "cold": True, "l2_flush": mode,
                  "stats": {"median": nvbench_time(n) * factor_of(n), "min": 0}},
                 {"name": "cpu_reference", "clock": "host", "cold": False,
                  "stats": {"median": 1.0, "min": 1.0}}]}
            for k in ("seed", "vectorized") for n in SIZES]


def summarize(folder):
    proc = subprocess.run([sys.executable, SUMMARIZE, folder], capture_output=True, text=True,
                          timeout=120)
    if proc.returncode != 0:
        raise AssertionError(proc.stderr)
    with open(os.path.join(folder, "summary.json"), encoding="utf-8") as f:
        return json.load(f), proc.stdout


class Summary(unittest.TestCase):
    def run_case(self, folder, read_factor, write_factor):
        # nvbench's samples: 5 around the median, one far outlier that a mean would feel.
        write_nvbench(folder, lambda bench, axes: [nvbench_time(axes["n"]) * x
                                                  for x in (0.99, 0.995, 1.0, 1.005, 1.01, 3.0)])
        write_gpubench(folder, "gpubench-vecadd-read.json", vecadd_results("read", read_factor))
        write_gpubench(folder, "gpubench-vecadd-write.json",
                       vecadd_results("write", write_factor))
        write_gpubench(folder, "gpubench-stream.json", [
            {"benchmark": "stream", "status": "ok", "params": {"n": 1 << 28},
             "measurements": [{"name": op, "clock": "gpu", "cold": True, "l2_flush": "read",
                               "stats": {"median": 500e-6, "min": 490e-6}} for op in OPS]}])
        with open(os.path.join(folder, "babelstream.csv"), "w", encoding="utf-8") as f:
            f.write("CUDA Driver: 13000\nfunction,num_times,n_elements,sizeof,max_MB_per_sec,"
                    "min_runtime,max_runtime,avg_runtime\n")
            for op in OPS:
                f.write(f"{op.capitalize()},100,268435456,4,4200000,0.000510,0.0006,0.000520\n")
        return summarize(folder)

    def test_medians_differences_and_verdicts(self):
        with tempdir() as d:
            # write within 3% everywhere; read 20% fast at 2^20, 0.5% from 2^26 on.
            summary, table = self.run_case(
                d, lambda n: 0.8 if n < 1 << 26 else 0.995, lambda n: 1.02)
            seed = [r for r in summary["vecadd"] if r["kernel"] == "seed"]
            self.assertEqual([r["n"] for r in seed], SIZES)
            for r in seed:
                # The median of the samples (the 1.0 and 1.005 pair's mean), not the mean.
                self.assertAlmostEqual(r["nvbench_median_s"] / nvbench_time(r["n"]), 1.0025,
                                       places=5)
                self.assertEqual(r["nvbench_samples"], 6)
                self.assertAlmostEqual(r["write_vs_nvbench"], 1.02 / 1.0025 - 1, places=5)
                self.assertEqual(r["gpubench_write_l2_flush"], "write")
            self.assertTrue(summary["targets"]["seed_write_within_3pct_every_n"])
            self.assertTrue(summary["targets"]["seed_read_within_1pct_from_2^26"])
            self.assertIn("| seed | 2^20 | 8.02 |", table)
            stream = {r["kernel"]: r for r in summary["stream"]}
            self.assertAlmostEqual(stream["triad"]["babelstream_min_s"], 510e-6)
            self.assertAlmostEqual(stream["triad"]["gpubench_gb_per_s"],
                                   3 * 4 * (1 << 28) / 500e-6 / 1e9)
            self.assertEqual(len(summary["nvbench_stream"]), len(OPS) * len(SIZES))

    def test_a_missed_target_says_no(self):
        with tempdir() as d:
            summary, table = self.run_case(d, lambda n: 1.03, lambda n: 1.1 if n == 1 << 24 else 1)
            self.assertFalse(summary["targets"]["seed_write_within_3pct_every_n"])
            self.assertFalse(summary["targets"]["seed_read_within_1pct_from_2^26"])
            self.assertIn("within 3% of nvbench at every n: NO", table)


if __name__ == "__main__":
    unittest.main()
