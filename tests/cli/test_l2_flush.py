"""--l2-flush through the real binary: offered by every measuring subcommand, refused with the
choices when unknown or when it contradicts --warm (exit 2), read from run files, and recorded
in each GPU row where a GPU is usable. Result files from before the field still load."""
import copy
import json
import os
import unittest

from gpubench_cli import FAST, SYNTHETIC_H200, has_gpu, run, tempdir, validate

MEASURING = ("vecadd", "augment", "pipeline", "stream")
OLD_FILE = SYNTHETIC_H200  # written as files were before l2_flush: GPU rows with `cold` alone


class Help(unittest.TestCase):
    def test_every_measuring_subcommand_offers_it_with_its_choices(self):
        for sub in MEASURING:
            with self.subTest(sub=sub):
                r = run(sub, "--help")
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertIn("--l2-flush", r.stdout)
                self.assertIn("{read|write|none}", r.stdout)

    def test_subcommands_that_measure_nothing_do_not(self):
        for sub in ("devices", "report", "compare"):
            with self.subTest(sub=sub):
                self.assertNotIn("--l2-flush", run(sub, "--help").stdout)


class BadInput(unittest.TestCase):
    def test_an_unknown_mode_exits_2_naming_the_choices(self):
        for sub in ("vecadd", "stream", "augment"):
            for value in ("dirty", "flush", ""):
                with self.subTest(sub=sub, value=value):
                    r = run(sub, "--cpu-only", "--l2-flush", value, *FAST)
                    self.assertEqual(r.returncode, 2, r.stderr)
                    self.assertIn(f"--l2-flush: '{value}' is not one of read, write, none",
                                  r.stderr)
                    self.assertEqual(r.stdout, "")

    def test_any_case_is_accepted(self):
        r = run("vecadd", "--n", "4Ki", "--l2-flush", "WRITE", "--dry-run")
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_a_missing_value_exits_2(self):
        r = run("vecadd", "--cpu-only", "--l2-flush")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--l2-flush", r.stderr)

    def test_warm_beside_read_or_write_exits_2(self):
        for mode in ("read", "write"):
            with self.subTest(mode=mode):
                r = run("vecadd", "--n", "1K", "--cpu-only", "--warm", "--l2-flush", mode, *FAST)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn(f"--warm: means --l2-flush none; it conflicts with --l2-flush {mode}",
                              r.stderr)

    def test_warm_beside_none_is_the_same_thing_said_twice(self):
        r = run("vecadd", "--n", "1K", "--cpu-only", "--warm", "--l2-flush", "none", *FAST,
                "-q")
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_with_cpu_only_it_is_noted_as_having_no_effect(self):
        r = run("vecadd", "--n", "1K", "--cpu-only", "--l2-flush", "write", *FAST)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("--l2-flush has no effect with --cpu-only", r.stderr)


class RunFiles(unittest.TestCase):
    def write(self, folder, options):
        path = os.path.join(folder, "plan.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"options": options,
                       "benchmarks": [{"benchmark": "vecadd", "params": {"n": 1000}}]}, f)
        return path

    def test_the_key_is_read_and_bad_values_name_the_choices(self):
        with tempdir() as d:
            ok = run("run", self.write(d, {"l2-flush": "write", "cpu-only": True}), "--dry-run")
            self.assertEqual(ok.returncode, 0, ok.stderr)
            bad = run("run", self.write(d, {"l2-flush": "dirty"}), "--dry-run")
            self.assertEqual(bad.returncode, 2, bad.stderr)
            self.assertIn('options.l2-flush: "dirty"', bad.stderr)
            self.assertIn("one of read, write, none", bad.stderr)

    def test_warm_and_write_in_one_file_conflict_but_the_command_line_replaces_both(self):
        with tempdir() as d:
            path = self.write(d, {"warm": True, "l2-flush": "write", "cpu-only": True})
            r = run("run", path, "--dry-run")
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn('"warm": true means "l2-flush": "none"', r.stderr)
            # A file that says warm, overridden on the command line, is no conflict.
            path = self.write(d, {"warm": True, "cpu-only": True, **short_options()})
            r = run("run", path, "--l2-flush", "write", "-q")
            self.assertEqual(r.returncode, 0, r.stderr)


def short_options():
    return {"min-samples": 2, "max-samples": 3, "min-time": 0, "timeout": 0.2, "warmup": 0}


class OldFiles(unittest.TestCase):
    def test_a_file_without_the_field_loads_in_report_and_compare(self):
        with open(OLD_FILE, encoding="utf-8") as f:
            doc = json.load(f)
        self.assertFalse(any("l2_flush" in m for r in doc["results"] for m in r["measurements"]))
        r = run("report", OLD_FILE)
        self.assertEqual(r.returncode, 0, r.stderr)
        # The same file with the field added (as a new run writes it) compares against the old.
        new = copy.deepcopy(doc)
        for res in new["results"]:
            for m in res["measurements"]:
                if m["clock"] == "gpu":
                    m["l2_flush"] = "read" if m["cold"] else "none"
        validate(new)
        with tempdir() as d:
            path = os.path.join(d, "new.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(new, f)
            c = run("compare", OLD_FILE, path)
            self.assertIn(c.returncode, (0, 1), c.stderr)
            self.assertNotIn("error", c.stderr.lower())
            table = run("report", path)
            self.assertEqual(table.returncode, 0, table.stderr)

    def test_a_write_flushed_row_reads_gpu_d_in_the_table(self):
        with open(OLD_FILE, encoding="utf-8") as f:
            doc = json.load(f)
        for res in doc["results"]:
            for m in res["measurements"]:
                if m["clock"] == "gpu" and m["cold"]:
                    m["l2_flush"] = "write"
        with tempdir() as d:
            path = os.path.join(d, "write.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(doc, f)
            r = run("report", path)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("gpu/d", r.stdout)


@unittest.skipUnless(has_gpu(), "needs a usable CUDA device")
class OnTheGpu(unittest.TestCase):
    def test_each_mode_is_recorded_in_every_timed_gpu_row_and_verifies(self):
        for mode, cold in (("read", True), ("write", True), ("none", False)):
            with self.subTest(mode=mode):
                r = run("vecadd", "--n", "1Mi", "--kernel", "seed,vectorized", "--l2-flush", mode,
                        *FAST, "--format", "json")
                self.assertEqual(r.returncode, 0, r.stderr)
                doc = json.loads(r.stdout)
                validate(doc)
                for res in doc["results"]:
                    self.assertTrue(res["verification"]["passed"])
                    for m in res["measurements"]:
                        if m["clock"] != "gpu":
                            self.assertNotIn("l2_flush", m)
                            continue
                        self.assertEqual(m["l2_flush"], mode, m["name"])
                        self.assertEqual(m["cold"], cold, m["name"])

    def test_stream_with_a_write_flush_verifies_every_kernel(self):
        r = run("stream", "--n", "1M", "--l2-flush", "write", "--batch-time", "0.001", *FAST,
                "--format", "json")
        self.assertEqual(r.returncode, 0, r.stderr)
        res = json.loads(r.stdout)["results"][0]
        self.assertTrue(res["verification"]["passed"])
        flushes = {m["name"]: m.get("l2_flush") for m in res["measurements"]}
        self.assertEqual(flushes["triad"], "write")
        self.assertEqual(flushes["triad (batch)"], "none")
        self.assertIsNone(flushes["cpu_triad"])


if __name__ == "__main__":
    unittest.main()
