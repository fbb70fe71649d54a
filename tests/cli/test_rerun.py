"""Every result records the effective value of each measurement option (meta.options), the same
whether the option came from the command line or a run file; `gpubench rerun RESULT.json` measures
the same points with the same options and seed again, and refuses a file it cannot repeat
(docs/usage.md, "rerun")."""
import json
import os
import re
import subprocess
import time
import unittest

from gpubench_cli import FAST, GPUBENCH, has_gpu, run, tempdir, validate

BASE = ["vecadd", "--cpu-only", "--n", "1K", "--cpu-threads", "1"]
# Options only a GPU run can take: --concurrent refuses --cpu-only, and a --cpu-only run records
# no device. The unit tests (tests/unit/option_table_test.cpp) cover them through run files.
GPU_ONLY = {"device", "concurrent"}
# Options the base command sets itself.
SET_BY_BASE = {"cpu-only", "cpu-threads"}


def result_of(args, cwd):
    out = os.path.join(cwd, "r.json")
    if os.path.exists(out):
        os.remove(out)
    p = run(*args, "--output", out, "-q")
    if p.returncode != 0:
        raise AssertionError(f"{args}: {p.stderr}")
    with open(out, encoding="utf-8") as f:
        doc = json.load(f)
    validate(doc)
    return doc


def word_choices(option):
    """The words `vecadd --help` declares for OPTION ("{read|write|none}")."""
    text = run("vecadd", "--help").stdout
    m = re.search(r"^\s+" + re.escape(option) + r"\s+\{([^}]*)\}", text, re.M)
    return m.group(1).split("|") if m else []


def other_value(name, default):
    """A valid value other than DEFAULT, by the type the record gives it."""
    if isinstance(default, bool):
        return not default
    if isinstance(default, int):
        return default + 1
    if isinstance(default, float):
        return default * 1.5 + 0.25
    if isinstance(default, str):
        return next(w for w in word_choices("--" + name) if w != default)
    raise AssertionError(f"{name}: no other value for {default!r}")


def cli_text(value):
    return str(value).lower() if isinstance(value, bool) else str(value)


class RecordedOptions(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempdir()
        cls.defaults = result_of(BASE, cls.tmp.name)["meta"]["options"]

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_every_option_is_recorded_with_its_default(self):
        self.assertEqual(self.defaults["seed"], 42)
        self.assertEqual(self.defaults["max-noise"], 1)
        self.assertEqual(self.defaults["l2-flush"], "read")
        self.assertEqual(self.defaults["device"], [])  # --cpu-only: no GPU
        self.assertGreaterEqual(len(self.defaults), 20)

    def test_the_command_line_and_a_run_file_record_every_option_alike(self):
        for name, default in self.defaults.items():
            if name in GPU_ONLY or name in SET_BY_BASE:
                continue
            value = other_value(name, default)
            with self.subTest(option=name, value=value):
                flag = isinstance(value, bool)
                args = BASE + ([f"--{name}"] if flag else [f"--{name}", cli_text(value)])
                on_line = result_of(args, self.tmp.name)["meta"]["options"]
                self.assertEqual(on_line[name], value)
                plan = os.path.join(self.tmp.name, "plan.json")
                with open(plan, "w", encoding="utf-8") as f:
                    json.dump({"options": {"cpu-only": True, "cpu-threads": 1, name: value},
                               "benchmarks": [{"benchmark": "vecadd",
                                               "params": {"n": "1K"}}]}, f)
                from_file = result_of(["run", plan], self.tmp.name)["meta"]["options"]
                self.assertEqual(from_file, on_line)
                # Every other option keeps its default (--warm also means l2-flush none).
                for other, v in on_line.items():
                    if other != name and not (name == "warm" and other == "l2-flush"):
                        self.assertEqual(v, self.defaults[other], other)


class Rerun(unittest.TestCase):
    def setUp(self):
        self.tmp = tempdir()
        self.addCleanup(self.tmp.cleanup)
        self.dir = self.tmp.name
        self.plan = os.path.join(self.dir, "plan.json")
        with open(self.plan, "w", encoding="utf-8") as f:
            json.dump({"options": {"cpu-only": True, "seed": 7, "warmup": 0, "min-samples": 3,
                                   "max-samples": 4, "max-noise": "2%", "min-time": 0,
                                   "cpu-threads": 1},
                       "benchmarks": [{"benchmark": "vecadd",
                                       "params": {"n": [1000, 2000], "dtype": ["f32", "f64"]}},
                                      {"benchmark": "stream", "params": {"n": "4K"}}]}, f)
        self.source = os.path.join(self.dir, "source.json")
        p = run("run", self.plan, "--output", self.source, "-q")
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(self.source, encoding="utf-8") as f:
            self.doc = json.load(f)

    def rerun(self, *args):
        return run("rerun", *args)

    def load(self, path):
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        validate(doc)
        return doc

    @staticmethod
    def points(doc):
        return [(r["benchmark"], r["params"], r.get("device")) for r in doc["results"]]

    def test_a_rerun_measures_the_same_points_with_the_same_options_and_seed(self):
        again = os.path.join(self.dir, "again.json")
        p = self.rerun(self.source, "--output", again, "-q")
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = self.load(again)
        self.assertEqual(doc["meta"]["options"], self.doc["meta"]["options"])
        self.assertEqual(doc["meta"]["options"]["seed"], 7)
        self.assertEqual(doc["meta"]["options"]["max-noise"], 2)
        self.assertEqual(self.points(doc), self.points(self.doc))
        self.assertEqual(len(doc["results"]), 5)
        self.assertEqual(doc["meta"]["argv"][1:], ["rerun", self.source, "--output", again, "-q"])
        for r in doc["results"]:
            for m in r["measurements"]:
                self.assertLessEqual(len(m["samples"]), 4)
        # A rerun's result is rerun alike: the record is complete.
        third = os.path.join(self.dir, "third.json")
        p = self.rerun(again, "--output", third, "-q")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.points(self.load(third)), self.points(self.doc))

    def test_a_rerun_may_replace_the_file_it_repeats(self):
        p = self.rerun(self.source, "--output", self.source, "-q")
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = self.load(self.source)
        self.assertEqual(self.points(doc), self.points(self.doc))
        self.assertEqual(doc["meta"]["argv"][1], "rerun")

    def test_a_dry_run_lists_the_points_and_measures_nothing(self):
        p = self.rerun(self.source, "--dry-run", "--format", "json")
        self.assertEqual(p.returncode, 0, p.stderr)
        listed = json.loads(p.stdout)["points"]
        self.assertEqual([(q["benchmark"], {k: v for k, v in q["params"].items() if k != "device"})
                          for q in listed],
                         [(r["benchmark"], r["params"]) for r in self.doc["results"]])

    def write(self, doc, name="edited.json"):
        path = os.path.join(self.dir, name)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        return path

    def refused(self, path, *expected):
        p = self.rerun(path, "--output", os.path.join(self.dir, "never.json"))
        self.assertEqual(p.returncode, 2, p.stderr)
        for text in expected:
            self.assertIn(text, p.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "never.json")))

    def test_a_benchmark_this_build_lacks_is_refused(self):
        doc = json.loads(json.dumps(self.doc))
        doc["results"][4]["benchmark"] = "nbody"
        self.refused(self.write(doc), 'results[4] (nbody): this gpubench has no benchmark "nbody"')

    def test_a_parameter_this_build_lacks_is_refused(self):
        doc = json.loads(json.dumps(self.doc))
        doc["results"][0]["params"]["unroll"] = 4
        self.refused(self.write(doc), "results[0] (vecadd)", "unroll",
                     "the file comes from another build")

    def test_an_option_this_build_lacks_is_refused(self):
        doc = json.loads(json.dumps(self.doc))
        doc["meta"]["options"]["fast-mode"] = True
        self.refused(self.write(doc), "meta.options.fast-mode: an option this gpubench does not "
                                      "have (the file comes from a newer build)")

    def test_a_newer_schema_is_refused(self):
        doc = json.loads(json.dumps(self.doc))
        doc["schema"] = "gpubench/2"
        self.refused(self.write(doc), 'schema "gpubench/2" is not gpubench/1')

    def test_a_file_without_recorded_options_suggests_its_command(self):
        doc = json.loads(json.dumps(self.doc))
        del doc["meta"]["options"]
        doc["meta"]["version"] = "0.9.0"
        doc["meta"]["argv"] = ["gpubench", "vecadd", "--n", "1K", "--seed", "3"]
        self.refused(self.write(doc), "records no measurement options (meta.options)",
                     "written by gpubench 0.9.0",
                     "run its original command instead: gpubench vecadd --n 1K --seed 3")

    def test_an_out_of_range_recorded_option_is_refused(self):
        doc = json.loads(json.dumps(self.doc))
        doc["meta"]["options"]["warmup"] = -1
        self.refused(self.write(doc), "meta.options.warmup: -1 is an integer; expected an "
                                      "integer from 0 to 1000000")


class Journal(unittest.TestCase):
    """A rerun with --output FILE keeps FILE.journal as the run it repeats does."""

    def test_a_killed_rerun_resumes_from_its_journal(self):
        with tempdir() as d:
            plan = os.path.join(d, "plan.json")
            with open(plan, "w", encoding="utf-8") as f:
                json.dump({"options": {"cpu-only": True, "min-samples": 20, "max-samples": 20,
                                       "min-time": 0, "warmup": 0, "cpu-threads": 1},
                           "benchmarks": [{"benchmark": "vecadd",
                                           "params": {"n": "1000000:1000011:1"}}]}, f)
            source = os.path.join(d, "source.json")
            p = run("run", plan, "--output", source, "-q")
            self.assertEqual(p.returncode, 0, p.stderr)
            out = os.path.join(d, "again.json")
            proc = subprocess.Popen([GPUBENCH, "rerun", source, "--output", out, "-q"],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            journal = out + ".journal"
            deadline = time.time() + 60
            lines = 0
            while time.time() < deadline and proc.poll() is None and lines < 4:
                if os.path.exists(journal):
                    with open(journal, encoding="utf-8") as f:
                        lines = f.read().count("\n")
                time.sleep(0.005)
            proc.kill()
            proc.communicate()
            self.assertGreaterEqual(lines, 4, "the rerun ended before its journal held 3 points")
            p = run("rerun", source, "--output", out, "--resume")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("--resume:", p.stderr)
            self.assertIn("points kept from", p.stderr)
            with open(out, encoding="utf-8") as f:
                doc = json.load(f)
            with open(source, encoding="utf-8") as f:
                first = json.load(f)
            self.assertEqual([r["params"] for r in doc["results"]],
                             [r["params"] for r in first["results"]])
            self.assertGreaterEqual(doc["meta"]["resumed"]["kept_points"], 3)
            self.assertFalse(os.path.exists(journal))


def gpu_count():
    p = run("devices", "--format", "json")
    if p.returncode != 0:
        return 0
    doc = json.loads(p.stdout)
    return len(doc.get("devices", doc) if isinstance(doc, dict) else doc)


@unittest.skipUnless(has_gpu(), "needs a usable GPU (scripts/gpu-check.sh runs it)")
class OnTheGpu(unittest.TestCase):
    """GPU points: the record names the GPUs and the flush; a rerun repeats them."""

    def check(self, *args):
        with tempdir() as d:
            first = os.path.join(d, "first.json")
            p = run("vecadd", "--n", "1M", *FAST, *args, "--output", first, "-q")
            self.assertEqual(p.returncode, 0, p.stderr)
            again = os.path.join(d, "again.json")
            p = run("rerun", first, "--output", again, "-q")
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(first, encoding="utf-8") as f:
                a = json.load(f)
            with open(again, encoding="utf-8") as f:
                b = json.load(f)
            validate(b)
            self.assertEqual(b["meta"]["options"], a["meta"]["options"])
            self.assertEqual([(r["benchmark"], r["params"], r["device"]) for r in b["results"]],
                             [(r["benchmark"], r["params"], r["device"]) for r in a["results"]])
            return a["meta"]["options"]

    def test_one_gpu(self):
        options = self.check("--l2-flush", "write", "--seed", "5")
        self.assertEqual(options["device"], [0])
        self.assertEqual(options["l2-flush"], "write")
        self.assertEqual(options["seed"], 5)

    @unittest.skipUnless(gpu_count() >= 2, "needs two GPUs")
    def test_two_gpus_at_once(self):
        options = self.check("--device", "0,1", "--concurrent")
        self.assertEqual(options["device"], [0, 1])
        self.assertTrue(options["concurrent"])


if __name__ == "__main__":
    unittest.main()
