"""gpubench run FILE: run files, --dry-run, the shipped configs, errors and the combined report."""
import glob
import json
import os
import subprocess
import tempfile
import unittest

GPUBENCH = os.environ.get("GPUBENCH", "gpubench")
SOURCE_DIR = os.environ.get("GPUBENCH_SOURCE_DIR",
                            os.path.join(os.path.dirname(__file__), "..", ".."))
CONFIGS = sorted(glob.glob(os.path.join(SOURCE_DIR, "configs", "*.json")))
SCHEMA = os.path.join(SOURCE_DIR, "docs", "schema", "run-file.schema.json")


def gpubench(*args, timeout=300):
    return subprocess.run([GPUBENCH, *args], capture_output=True, text=True, timeout=timeout,
                          check=False)


def benchmark_exists(name):
    """Whether the binary has the subcommand: `gpubench --help` lists it under Subcommands."""
    listing = gpubench("--help").stdout.split("Subcommands:")[-1]
    return any(line.split()[:1] == [name] for line in listing.splitlines()
               if not line.startswith("   "))  # not a wrapped description's continuation


class RunFileCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def write(self, doc, name="run.json"):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(doc if isinstance(doc, str) else json.dumps(doc))
        return path

    def assert_usage_error(self, proc, *fragments):
        self.assertEqual(proc.returncode, 2, proc.stderr)
        for fragment in fragments:
            self.assertIn(fragment, proc.stderr)


class DryRun(RunFileCase):
    def test_lists_every_point_of_every_entry(self):
        path = self.write({"name": "three-by-two", "options": {"cpu_only": True}, "benchmarks": [
            {"benchmark": "vecadd", "params": {"n": ["1Ki", "2Ki", "4Ki"], "dtype": ["f32", "f16"]}},
            {"benchmark": "vecadd", "params": {"n": 100}}]})
        proc = gpubench("run", path, "--dry-run")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        lines = proc.stdout.splitlines()
        self.assertEqual(lines[0], "three-by-two: 7 points would run")
        points = lines[1:]
        self.assertEqual(len(points), 7)
        for size in (1024, 2048, 4096):
            for dtype in ("f32", "f16"):
                self.assertEqual(sum(f"dtype={dtype} n={size}" in p for p in points), 1,
                                 (size, dtype, points))
        self.assertIn("n=100", points[6])

    def test_json_listing(self):
        path = self.write({"options": {"cpu_only": True},
                           "benchmarks": [{"benchmark": "vecadd", "params": {"n": "1Ki:4Ki:x2"}}]})
        proc = gpubench("run", path, "--dry-run", "--format", "json")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        listed = json.loads(proc.stdout)
        self.assertEqual([p["params"]["n"] for p in listed["points"]], [1024, 2048, 4096])
        self.assertTrue(all(p["benchmark"] == "vecadd" for p in listed["points"]))

    def test_dry_run_runs_nothing_and_writes_nothing(self):
        out = os.path.join(self.tmp.name, "never.json")
        path = self.write({"benchmarks": [{"benchmark": "vecadd", "params": {"n": "1G"}}]})
        proc = gpubench("run", path, "--dry-run", "--output", out)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertFalse(os.path.exists(out))


class ShippedConfigs(RunFileCase):
    def test_every_config_is_valid_against_the_schema(self):
        import jsonschema  # Debian: python3-jsonschema
        with open(SCHEMA, encoding="utf-8") as f:
            schema = json.load(f)
        jsonschema.Draft202012Validator.check_schema(schema)
        validator = jsonschema.Draft202012Validator(schema)
        names = {os.path.basename(c) for c in CONFIGS}
        self.assertTrue({"seed-reproduction.json", "ci-smoke.json", "full-sweep.json",
                         "cpu-only.json"} <= names, names)
        for config in CONFIGS:
            with self.subTest(config=os.path.basename(config)), open(config, encoding="utf-8") as f:
                validator.validate(json.load(f))

    def test_schema_names_every_benchmark_a_run_file_can_run(self):
        """The schema's list of benchmarks is the binary's: each runs from a run file (checked
        by --dry-run), and a name the binary does not know is refused by both."""
        with open(SCHEMA, encoding="utf-8") as f:
            names = json.load(f)["$defs"]["entry"]["properties"]["benchmark"]["enum"]
        self.assertEqual(sorted(names),
                         ["augment", "gemm", "pipeline", "roofline", "stream", "vecadd"])
        with tempfile.TemporaryDirectory() as d:
            for name in names + ["matmul"]:
                path = os.path.join(d, f"{name}.json")
                with open(path, "w", encoding="utf-8") as f:
                    json.dump({"benchmarks": [{"benchmark": name}]}, f)
                proc = subprocess.run([GPUBENCH, "run", path, "--dry-run"], capture_output=True,
                                      text=True, check=False)
                self.assertEqual(proc.returncode, 2 if name == "matmul" else 0,
                                 f"{name}: {proc.stderr}")

    def test_schema_rejects_what_gpubench_rejects(self):
        import jsonschema
        with open(SCHEMA, encoding="utf-8") as f:
            validator = jsonschema.Draft202012Validator(json.load(f))
        bad = [{"benchmarks": []},
               {"benchmarks": [{"benchmark": "vecadd"}], "extra": 1},
               {"benchmarks": [{"benchmark": "vecadd", "params": {"n": []}}]},
               {"benchmarks": [{"benchmark": "vecadd"}], "options": {"samples": 3}},
               {"benchmarks": [{"benchmark": "vecadd"}], "options": {"max_noise": "1"}}]
        for doc in bad:
            with self.subTest(doc=doc):
                self.assertFalse(validator.is_valid(doc))
                self.assertEqual(gpubench("run", self.write(doc), "--dry-run").returncode, 2)

    def test_every_config_plans_with_the_benchmarks_that_exist(self):
        """Dry-runs each config. Entries of benchmarks not built yet are left out and reported
        as a skip, so this passes only for what really exists."""
        missing = set()
        for config in CONFIGS:
            with open(config, encoding="utf-8") as f:
                doc = json.load(f)
            present = [e for e in doc["benchmarks"] if benchmark_exists(e["benchmark"])]
            missing |= {e["benchmark"] for e in doc["benchmarks"]} - \
                {e["benchmark"] for e in present}
            if not present:
                continue
            doc["benchmarks"] = present
            with self.subTest(config=os.path.basename(config)):
                proc = gpubench("run", self.write(doc), "--dry-run", "--format", "json")
                self.assertEqual(proc.returncode, 0, proc.stderr)
                points = json.loads(proc.stdout)["points"]
                self.assertGreater(len(points), 0)
                if os.path.basename(config) == "full-sweep.json":
                    vecadd = [p for p in points if p["benchmark"] == "vecadd"]
                    # 2^10..2^30 (21 sizes) x 4 dtypes x 2 kernels x pinned/pageable
                    self.assertEqual(len(vecadd), 21 * 4 * 2 * 2)
                if os.path.basename(config) == "seed-reproduction.json":
                    vecadd = [p["params"] for p in points if p["benchmark"] == "vecadd"]
                    self.assertEqual(len(vecadd), 1)
                    self.assertEqual((vecadd[0]["n"], vecadd[0]["kernel"], vecadd[0]["block"]),
                                     (10_000_000, "seed", 256))
        if missing:
            self.skipTest("benchmarks not built yet, their entries were not planned: "
                          + ", ".join(sorted(missing)))

    def test_cpu_only_config_runs_without_a_gpu(self):
        config = os.path.join(SOURCE_DIR, "configs", "cpu-only.json")
        with open(config, encoding="utf-8") as f:
            needed = {e["benchmark"] for e in json.load(f)["benchmarks"]}
        missing = sorted(b for b in needed if not benchmark_exists(b))
        if missing:
            self.skipTest("cpu-only.json needs benchmarks not built yet: " + ", ".join(missing))
        out = os.path.join(self.tmp.name, "a.json")
        proc = gpubench("run", config, "--output", out, "-q")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(out, encoding="utf-8") as f:
            report = json.load(f)
        self.assertEqual({r["benchmark"] for r in report["results"]}, needed)
        self.assertTrue(all(r["device"] == -1 for r in report["results"]))


class Errors(RunFileCase):
    def test_unknown_top_level_key(self):
        proc = gpubench("run", self.write({"benchmarks": [{"benchmark": "vecadd"}],
                                           "option": {}}))
        self.assert_usage_error(proc, "option: unknown key", "expected one of")

    def test_unknown_parameter_names_its_path_and_the_known_ones(self):
        proc = gpubench("run", self.write({"benchmarks": [
            {"benchmark": "vecadd"}, {"benchmark": "vecadd", "params": {"size": "1M"}}]}))
        self.assert_usage_error(proc, "benchmarks[1].params.size: unknown parameter of vecadd",
                                "\"1M\"", "dtype")

    def test_unknown_benchmark(self):
        proc = gpubench("run", self.write({"benchmarks": [{"benchmark": "vecsub"}]}))
        self.assert_usage_error(proc, "benchmarks[0].benchmark: \"vecsub\" is not a benchmark",
                                "vecadd")

    def test_bad_value_is_reported_with_its_entry(self):
        proc = gpubench("run", self.write({"benchmarks": [
            {"benchmark": "vecadd", "params": {"n": "10Q"}}]}), "--dry-run")
        self.assert_usage_error(proc, "benchmarks[0] (vecadd):", "10Q")

    def test_wrong_type_names_the_value_and_the_expectation(self):
        proc = gpubench("run", self.write({"benchmarks": [{"benchmark": "vecadd"}],
                                           "options": {"min_samples": "ten"}}))
        self.assert_usage_error(proc, "options.min_samples: \"ten\" is a string; expected an "
                                      "integer")

    def test_syntax_error_gives_line_and_column(self):
        path = self.write('{\n  "benchmarks": [\n    {"benchmark": "vecadd"}\n  ],\n}\n')
        proc = gpubench("run", path)
        self.assert_usage_error(proc, f"{path}:5:", "not valid JSON")

    def test_missing_file(self):
        self.assert_usage_error(gpubench("run", os.path.join(self.tmp.name, "nope.json")),
                                "nope.json: cannot open")


class Running(RunFileCase):
    def small_file(self, **options):
        opts = {"cpu_only": True, "min_samples": 3, "max_samples": 3, "min_time": 0,
                "timeout": 5}
        opts.update(options)
        return self.write({"options": opts, "benchmarks": [
            {"benchmark": "vecadd", "params": {"n": ["1Ki", "2Ki"]}},
            {"benchmark": "vecadd", "params": {"n": "4Ki", "dtype": "f16"}}]})

    def test_one_combined_report_with_every_point(self):
        out = os.path.join(self.tmp.name, "out.json")
        proc = gpubench("run", self.small_file(), "--output", out, "-q")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(out, encoding="utf-8") as f:
            report = json.load(f)
        self.assertEqual(report["schema"], "gpubench/1")
        self.assertEqual([(r["params"]["n"], r["params"]["dtype"]) for r in report["results"]],
                         [(1024, "f32"), (2048, "f32"), (4096, "f16")])
        for r in report["results"]:
            self.assertEqual([len(m["samples"]) for m in r["measurements"]],
                             [3] * len(r["measurements"]))
        self.assertEqual([n for n in os.listdir(self.tmp.name) if n.startswith("out")],
                         ["out.json"])  # no temporary file left behind

    def test_command_line_options_override_the_file(self):
        proc = gpubench("run", self.small_file(), "--min-samples", "5", "--max-samples", "5",
                        "--format", "json", "-q")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        report = json.loads(proc.stdout)
        counts = {len(m["samples"]) for r in report["results"] for m in r["measurements"]}
        self.assertEqual(counts, {5})


if __name__ == "__main__":
    unittest.main()
