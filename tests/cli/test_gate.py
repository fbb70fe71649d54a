"""The regression gate (docs/compare.md, docs/ci.md): verdicts from the spread between runs, every
verdict and exit code, coverage, output-only parameters, environments, JUnit and the A/B script,
all on synthetic result files (no GPU needed)."""
import copy
import json
import os
import random
import subprocess
import unittest
import xml.etree.ElementTree as ET

from gpubench_cli import (GPUBENCH, SOURCE_DIR, SYNTHETIC_H200, recorded_results, run as gpubench,
                          tempdir)

SEED = int(os.environ.get("GPUBENCH_TEST_SEED", random.randrange(1 << 30)))
print(f"test_gate seed {SEED} (GPUBENCH_TEST_SEED to replay)")


VERIFIED = {"performed": True, "passed": True, "method": "exact", "tolerance": 0.0,
            "max_abs_error": 0.0, "checked": 1000, "mismatches": 0, "within_tolerance": 1.0,
            "details": {}}


def template():
    with open(SYNTHETIC_H200, encoding="utf-8") as f:
        doc = json.load(f)
    doc["results"] = []
    return doc


def measurement(name, center, rng, clock="gpu", n=30, host_bound=None):
    m = {"name": name, "clock": clock, "unit": "s", "cold": True, "converged": True,
         "samples": [center * (1 + rng.gauss(0, 0.003)) for _ in range(n)],
         "bytes": 0.0, "items": 0.0, "item_unit": "elements", "rates": {}}
    if host_bound is not None:
        m["host_bound"] = host_bound
        m["host_enqueue_s"] = center * (0.9 if host_bound else 0.1)
    return m


def run_doc(rng, run_shift=0.01, slow=None, repeat=None):
    """One run: each run moves as a whole by a draw of `run_shift` (the between-process noise);
    `slow` maps a measurement name to a factor."""
    slow = slow or {}
    doc = template()
    shift = 1 + rng.gauss(0, run_shift)

    def m(name, center, **kw):
        return measurement(name, center * shift * slow.get(name, 1.0), rng, **kw)

    doc["results"] = [
        {"benchmark": "vecadd", "device": 0, "status": "ok", "reason": "",
         "params": {"n": 4000000, "dtype": "f32", "kernel": "seed", "memory": "pinned"},
         "measurements": [m("kernel", 15e-6), m("end_to_end", 900e-6),
                          m("cpu_reference", 300e-6, clock="host")],
         "derived": {}, "verification": VERIFIED, "converged": True},
        {"benchmark": "pipeline", "device": 0, "status": "ok", "reason": "",
         "params": {"scenario": "encoder-decoder", "batch": 8, "mode": "serial,streams,graph"},
         "measurements": [m("stage_b", 70e-6, host_bound=True),
                          m("graph", 90e-6, host_bound=False)],
         "derived": {}, "verification": VERIFIED, "converged": True},
    ]
    if repeat is not None:
        for r in doc["results"]:
            r["repeat"] = repeat
    return doc


class GateCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempdir()
        self.rng = random.Random(SEED)
        self.n = 0

    def tearDown(self):
        self.tmp.cleanup()

    def save(self, doc, name=None):
        self.n += 1
        path = os.path.join(self.tmp.name, name or f"r{self.n}.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        return path

    def runs(self, k, **kw):
        return [self.save(run_doc(self.rng, **kw)) for _ in range(k)]

    def compare(self, base, new, *args):
        proc = gpubench("compare", "--base", *base, "--new", *new, "--format", "json", *args)
        doc = json.loads(proc.stdout) if proc.stdout.startswith("{") else None
        return proc, doc

    @staticmethod
    def row(doc, name):
        return next(r for r in doc["rows"] if r["measurement"] == name)


class Verdicts(GateCase):
    def test_five_runs_a_side_of_one_build_pass(self):
        proc, doc = self.compare(self.runs(5), self.runs(5), "--clock", "gpu")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertEqual(doc["summary"]["regressions"], 0)
        for r in doc["rows"]:
            self.assertEqual((r["base"]["runs"], r["new"]["runs"]), (5, 5))
            self.assertEqual(r["method"], "between runs")
            self.assertNotEqual(r["verdict"], "slower")

    def test_a_twelve_percent_slowdown_fails_with_its_interval(self):
        proc, doc = self.compare(self.runs(5), self.runs(5, slow={"end_to_end": 1.12}),
                                 "--clock", "gpu")
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        r = self.row(doc, "end_to_end")
        self.assertEqual(r["verdict"], "slower")
        self.assertTrue(r["regression"])
        # The interval is the between-run interval of docs/compare.md: with 5 runs a side it covers
        # the true change only ~90% of the time (its "coverage"), so the test does not ask that it
        # hold 12%. It asks what always holds: the interval brackets the estimate, clears the 5%
        # limit, and the estimate is within 4% of the truth (the runs move by 1% each: >5 sigma).
        lo, hi = r["interval"]["lo"], r["interval"]["hi"]
        self.assertTrue(r["interval"]["bounded"])
        self.assertGreater(r["interval"]["coverage"], 0.85)
        self.assertLessEqual(lo, r["change"])
        self.assertLessEqual(r["change"], hi)
        self.assertGreater(lo, 0.05)
        self.assertLess(abs(r["change"] - 0.12), 0.04)
        table = gpubench("compare", "--base", *doc["environment"]["base"]["files"], "--new",
                         *doc["environment"]["new"]["files"], "--clock", "gpu")
        self.assertIn("REGRESSION", table.stdout)
        self.assertIn("5/5", table.stdout)
        self.assertRegex(table.stdout, r"\[\+\d+\.\d%, \+\d+\.\d%\]")

    def test_a_five_percent_slowdown_is_never_same(self):
        proc, doc = self.compare(self.runs(5), self.runs(5, slow={"end_to_end": 1.05}),
                                 "--clock", "gpu")
        self.assertIn(proc.returncode, (0, 1), proc.stderr)
        self.assertNotEqual(self.row(doc, "end_to_end")["verdict"], "same")

    def test_faster_never_fails(self):
        proc, doc = self.compare(self.runs(5), self.runs(5, slow={"kernel": 0.7}),
                                 "--clock", "gpu")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(self.row(doc, "kernel")["verdict"], "faster")

    def test_two_runs_a_side_are_inconclusive_and_ask_for_more(self):
        proc, doc = self.compare(self.runs(2), self.runs(2, slow={"kernel": 1.5}),
                                 "--clock", "gpu")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        r = self.row(doc, "kernel")
        self.assertEqual(r["verdict"], "inconclusive")
        self.assertIn("at least 3 runs", r["note"])
        self.assertIsNone(r["interval"]["lo"])

    def test_one_run_a_side_is_stricter(self):
        base = self.save(run_doc(self.rng, run_shift=0))
        twelve = self.save(run_doc(self.rng, run_shift=0, slow={"kernel": 1.12}))
        proc, doc = self.compare([base], [twelve], "--clock", "gpu")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        r = self.row(doc, "kernel")
        self.assertEqual(r["method"], "within one run")
        self.assertEqual(r["verdict"], "inconclusive")
        self.assertIn("between-run noise unknown", r["note"])
        self.assertAlmostEqual(r["limit"], 0.15)
        thirty = self.save(run_doc(self.rng, run_shift=0, slow={"kernel": 1.3}))
        proc, doc = self.compare([base], [thirty], "--clock", "gpu")
        self.assertEqual(proc.returncode, 1, proc.stdout)
        proc, doc = self.compare([base], [thirty], "--clock", "gpu", "--run-noise", "30%")
        self.assertEqual(proc.returncode, 0, proc.stdout)

    def test_positional_base_new_still_work(self):
        a, b = self.runs(2)
        proc = gpubench("compare", a, b, "--clock", "gpu")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("1 run", proc.stdout)

    def test_repeat_tags_make_runs_within_one_file(self):
        def tagged(slow=None):
            doc = run_doc(self.rng, repeat=0, slow=slow)
            for k in range(1, 5):
                doc["results"] += run_doc(self.rng, repeat=k, slow=slow)["results"]
            return self.save(doc)
        proc, doc = self.compare([tagged()], [tagged({"end_to_end": 1.2})], "--clock", "gpu")
        self.assertEqual(proc.returncode, 1, proc.stdout)
        r = self.row(doc, "end_to_end")
        self.assertEqual((r["base"]["runs"], r["new"]["runs"]), (5, 5))
        self.assertEqual(doc["environment"]["base"]["runs"], 5)


class HostBound(GateCase):
    def test_host_bound_slowdowns_are_shown_but_not_gated_by_default(self):
        base = self.runs(5)
        slow = self.runs(5, slow={"stage_b": 1.5})
        proc, doc = self.compare(base, slow, "--clock", "gpu")
        self.assertEqual(proc.returncode, 0, proc.stdout)
        r = self.row(doc, "stage_b")
        self.assertEqual(r["verdict"], "slower")
        self.assertTrue(r["host_bound"])
        self.assertFalse(r["gated"])
        self.assertFalse(r["regression"])
        self.assertFalse(self.row(doc, "graph")["host_bound"])
        table = gpubench("compare", "--base", *base, "--new", *slow, "--clock", "gpu")
        self.assertIn("stage_b [host-bound]", table.stdout)
        self.assertIn("slower (not gated)", table.stdout)
        self.assertIn("[host-bound]", table.stdout)
        proc, doc = self.compare(base, slow, "--clock", "gpu", "--host-bound-threshold", "25%")
        self.assertEqual(proc.returncode, 1, proc.stdout)
        self.assertTrue(self.row(doc, "stage_b")["regression"])
        proc, _ = self.compare(base, slow, "--clock", "gpu", "--host-bound-threshold", "60%")
        self.assertEqual(proc.returncode, 0)


class DefaultGate(GateCase):
    """With no options only GPU-clock rows that are not host-bound are gated; host-clock and
    host-bound rows are judged, shown and marked not gated unless --gate asks for them."""

    def slowed_host_rows(self, factor):
        base = self.save(run_doc(self.rng, run_shift=0))
        new = self.save(run_doc(self.rng, run_shift=0,
                                slow={"cpu_reference": factor, "stage_b": factor}))
        return base, new

    def test_host_clock_and_host_bound_rows_are_shown_not_gated(self):
        base, new = self.slowed_host_rows(1.6)
        proc, doc = self.compare([base], [new])
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertEqual(doc["summary"]["regressions"], 0)
        self.assertEqual(doc["summary"]["not_gated"], {"host": 1, "host-bound": 1})
        self.assertEqual(doc["summary"]["gated"], 3)  # kernel, end_to_end, graph
        self.assertIsNone(doc["host_threshold"])
        for name, kind in (("cpu_reference", "host"), ("stage_b", "host-bound")):
            r = self.row(doc, name)
            self.assertEqual(r["verdict"], "slower")  # +60%: judged as any row
            self.assertEqual(r["gate_class"], kind)
            self.assertFalse(r["gated"])
            self.assertFalse(r["regression"])
            self.assertIn("not gated (--gate " + kind, r["gate_reason"])
        self.assertEqual(self.row(doc, "cpu_reference")["clock"], "host")
        for name in ("kernel", "end_to_end", "graph"):
            r = self.row(doc, name)
            self.assertEqual((r["gate_class"], r["gated"], r["clock"]), ("gpu", True, "gpu"))
            self.assertEqual(r["gate_reason"], "GPU clock: gated at 5.0%")
        table = gpubench("compare", base, new)
        self.assertEqual(table.returncode, 0)
        self.assertIn("cpu_reference [host]", table.stdout)
        self.assertIn("slower (not gated)", table.stdout)
        self.assertIn("Gated: 3 GPU-clock rows at 5.0%", table.stdout)
        self.assertIn("Not gated: 1 host-clock row (host timings move between processes; "
                      "--gate host gates them at 25.0%)", table.stdout)
        self.assertIn("Not gated: 1 host-bound row (their GPU waited on the host; "
                      "--gate host-bound gates them at 60.0%)", table.stdout)
        md = gpubench("compare", base, new, "--format", "md")
        self.assertIn("### gpubench compare: no regression", md.stdout)
        self.assertIn("| slower (not gated) |", md.stdout)
        self.assertIn("Not gated: 1 host-clock row", md.stdout)
        csv = gpubench("compare", base, new, "--format", "csv").stdout.splitlines()
        header = csv[0].split(",")
        self.assertEqual(header[-3:], ["clock", "gate_class", "gate_reason"])
        junit = os.path.join(self.tmp.name, "junit.xml")
        self.assertEqual(gpubench("compare", base, new, "--junit", junit).returncode, 0)
        cases = {c.get("name").split(" [")[0]: c
                 for c in ET.parse(junit).getroot().iter("testcase")}
        self.assertIsNone(cases["cpu_reference"].find("failure"))
        self.assertIn("slower (not gated)", cases["cpu_reference"].find("system-out").text)
        self.assertIn("host clock: not gated", cases["cpu_reference"].find("system-out").text)

    def test_gate_host_gates_host_clock_rows_at_their_own_threshold(self):
        base, new = self.slowed_host_rows(1.6)
        proc, doc = self.compare([base], [new], "--gate", "host")
        self.assertEqual(proc.returncode, 1, proc.stdout)
        r = self.row(doc, "cpu_reference")
        self.assertTrue(r["gated"] and r["regression"])
        self.assertAlmostEqual(r["threshold"], 0.25)
        self.assertAlmostEqual(r["limit"], 0.35)  # one run a side: + 10% run noise
        self.assertEqual(r["gate_reason"], "host clock: gated at 25.0%")
        self.assertAlmostEqual(doc["host_threshold"], 0.25)
        self.assertFalse(self.row(doc, "stage_b")["gated"])
        # 30% is within the host threshold's 35% limit; --host-threshold tightens it (and gates).
        base, new = self.slowed_host_rows(1.3)
        proc, _ = self.compare([base], [new], "--gate", "host")
        self.assertEqual(proc.returncode, 0, proc.stdout)
        for args in (("--gate", "host", "--host-threshold", "10%"), ("--host-threshold", "10%")):
            with self.subTest(args=args):
                proc, doc = self.compare([base], [new], *args)
                self.assertEqual(proc.returncode, 1, proc.stdout)
                self.assertAlmostEqual(self.row(doc, "cpu_reference")["threshold"], 0.10)

    def test_gate_host_bound_and_the_existing_host_bound_threshold(self):
        base, new = self.slowed_host_rows(1.6)
        # --host-bound-threshold alone still gates host-bound rows at its value.
        proc, doc = self.compare([base], [new], "--host-bound-threshold", "25%")
        self.assertEqual(proc.returncode, 1, proc.stdout)
        self.assertTrue(self.row(doc, "stage_b")["regression"])
        self.assertFalse(self.row(doc, "cpu_reference")["gated"])
        # --gate host-bound: their default 60% (+10% run noise) lets +60% pass, but gated.
        proc, doc = self.compare([base], [new], "--gate", "host-bound")
        self.assertEqual(proc.returncode, 0, proc.stdout)
        r = self.row(doc, "stage_b")
        self.assertTrue(r["gated"])
        self.assertAlmostEqual(r["threshold"], 0.60)
        self.assertAlmostEqual(doc["host_bound_threshold"], 0.60)

    def test_gate_values_combine(self):
        base, new = self.slowed_host_rows(1.6)
        gated = None
        for args in (("--gate", "all"), ("--gate", "host,host-bound"),
                     ("--gate", "host", "--gate", "host-bound"), ("--gate", "gpu,all")):
            with self.subTest(args=args):
                proc, doc = self.compare([base], [new], *args, "--host-bound-threshold", "20%")
                self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
                now = {r["measurement"]: r["gated"] for r in doc["rows"]}
                self.assertTrue(all(now.values()), now)
                self.assertEqual(doc["summary"]["regressions"], 2)
                gated = gated or now
                self.assertEqual(now, gated)
        proc, doc = self.compare([base], [new], "--gate", "gpu")
        self.assertEqual(proc.returncode, 0, proc.stdout)
        self.assertEqual(doc["summary"]["not_gated"], {"host": 1, "host-bound": 1})

    def test_clock_host_gates_the_host_clock_unless_gate_says_otherwise(self):
        base, new = self.slowed_host_rows(1.6)
        proc, doc = self.compare([base], [new], "--clock", "host")
        self.assertEqual(proc.returncode, 1, proc.stdout)
        self.assertEqual([r["measurement"] for r in doc["rows"]], ["cpu_reference"])
        self.assertTrue(doc["rows"][0]["regression"])
        table = gpubench("compare", base, new, "--clock", "host", "--gate", "gpu")
        self.assertEqual(table.returncode, 0, table.stdout)
        self.assertIn("Gated: no row, so nothing compared here can fail the gate", table.stdout)
        # --clock gpu judges no host row, whatever --gate says.
        proc, doc = self.compare([base], [new], "--clock", "gpu", "--gate", "all")
        self.assertEqual(proc.returncode, 0, proc.stdout)
        self.assertNotIn("cpu_reference", [r["measurement"] for r in doc["rows"]])

    def test_unknown_gate_values_exit_2_naming_the_choices(self):
        a = self.save(run_doc(self.rng))
        for value in ("cpu", "host,wall", "gpu,hostbound"):
            with self.subTest(value=value):
                proc = gpubench("compare", a, a, "--gate", value)
                self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
                self.assertIn("is not one of gpu, host, host-bound, all", proc.stderr)
                self.assertEqual(proc.stdout, "")
        # The choices match in any case.
        proc = gpubench("compare", a, a, "--gate", "HOST", "--clock", "GPU")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        proc = gpubench("compare", a, a, "--gate", "")
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("--gate", proc.stderr)
        proc = gpubench("compare", a, a, "--host-threshold", "lots")
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("--host-threshold: 'lots' is not a percentage", proc.stderr)

    def test_a_gpu_slowdown_is_still_caught_at_the_defaults(self):
        # 20% with one run a side (limit 5% + 10% run noise) ...
        base = self.save(run_doc(self.rng, run_shift=0))
        slow = self.save(run_doc(self.rng, run_shift=0, slow={"kernel": 1.2}))
        proc, doc = self.compare([base], [slow])
        self.assertEqual(proc.returncode, 1, proc.stdout)
        self.assertEqual([r["measurement"] for r in doc["rows"] if r["regression"]], ["kernel"])
        # ... and 10% with five a side (runs moving by 1% each), not the same build.
        proc, doc = self.compare(self.runs(5), self.runs(5, slow={"end_to_end": 1.10}))
        self.assertEqual(proc.returncode, 1, proc.stdout)
        self.assertEqual([r["measurement"] for r in doc["rows"] if r["regression"]],
                         ["end_to_end"])
        proc, _ = self.compare(self.runs(5), self.runs(5))
        self.assertEqual(proc.returncode, 0, proc.stdout)

    def test_old_result_files_still_load(self):
        # Files recorded before host_enqueue_s / host_bound existed: loaded and gated by clock.
        old = recorded_results("h200-2026-11-29")
        proc, doc = self.compare([os.path.join(old, "ci-smoke-1.json")],
                                 [os.path.join(old, "ci-smoke-2.json")])
        self.assertIn(proc.returncode, (0, 1), proc.stderr)
        self.assertGreater(len(doc["rows"]), 10)
        host = [r for r in doc["rows"] if r["clock"] == "host"]
        self.assertTrue(host)
        self.assertTrue(all(r["gate_class"] == "host" and not r["gated"] for r in host))
        self.assertFalse(any(r["host_bound"] for r in doc["rows"]))


class Coverage(GateCase):
    def test_clock_gpu_on_cpu_only_data_compares_nothing_and_exits_2(self):
        doc = run_doc(self.rng)
        for r in doc["results"]:
            r["device"] = -1
            for m in r["measurements"]:
                m["clock"] = "host"
                m.pop("host_bound", None)
        a = self.save(doc)
        proc = gpubench("compare", a, a, "--clock", "gpu")
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        self.assertIn("NOT ENOUGH COMPARED", proc.stdout)
        self.assertIn("only 0 of 0", proc.stderr)

    def test_different_parameters_exit_2_naming_what_did_not_match(self):
        base = run_doc(self.rng)
        new = copy.deepcopy(base)
        new["results"][0]["params"]["n"] = 8000000
        proc = gpubench("compare", self.save(base), self.save(new), "--clock", "gpu")
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        only_base = proc.stdout.split("Only in BASE:")[1]
        self.assertIn("n=4000000", only_base)
        self.assertIn("n=8000000", proc.stdout.split("Only in NEW:")[1])
        # The share is a stated option: 2 of 4 GPU measurements is enough at 50%.
        proc = gpubench("compare", self.save(base), self.save(new), "--clock", "gpu",
                        "--min-compared", "50%")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)

    def test_output_only_parameters_do_not_split_points(self):
        base = run_doc(self.rng)
        aug = {"benchmark": "augment", "device": 0, "status": "ok", "reason": "",
               "params": {"batch": 8, "impl": "fused", "input": "/data/a/photos",
                          "save-samples": "/tmp/run1"},
               "measurements": [measurement("fused", 10e-6, self.rng)], "derived": {},
               "verification": VERIFIED, "converged": True}
        base["results"].append(aug)
        new = copy.deepcopy(base)
        new["results"][2]["params"]["input"] = "/mnt/other/photos"
        new["results"][2]["params"]["save-samples"] = "/tmp/run2"
        proc, doc = self.compare([self.save(base)], [self.save(new)], "--clock", "gpu")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("fused", [r["measurement"] for r in doc["rows"]])
        self.assertEqual(doc["only_in_base"] + doc["only_in_new"], [])
        # Real images against synthetic ones are different points.
        del new["results"][2]["params"]["input"]
        proc, doc = self.compare([self.save(base)], [self.save(new)], "--clock", "gpu")
        self.assertEqual(len(doc["only_in_base"]), 1)


class Environments(GateCase):
    def test_different_drivers_are_refused_unless_forced(self):
        base = run_doc(self.rng)
        new = copy.deepcopy(base)
        new["meta"]["cuda"]["driver"] = "13.0"
        a, b = self.save(base), self.save(new)
        proc = gpubench("compare", a, b)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("driver 12.4 but NEW with 13.0", proc.stderr)
        self.assertIn("--force", proc.stderr)
        proc = gpubench("compare", a, b, "--force", "--clock", "gpu")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("compared anyway: --force", proc.stdout)

    def test_different_nvidia_drivers_are_refused_unless_forced(self):
        base = run_doc(self.rng)
        base["meta"]["cuda"]["nvidia_driver"] = "575.57.08"
        new = copy.deepcopy(base)
        new["meta"]["cuda"]["nvidia_driver"] = "580.65.06"
        a, b = self.save(base), self.save(new)
        proc = gpubench("compare", a, b)
        self.assertEqual(proc.returncode, 2, proc.stdout)
        self.assertIn("NVIDIA driver 575.57.08 but NEW with 580.65.06", proc.stderr)
        self.assertIn("--force", proc.stderr)
        proc = gpubench("compare", a, b, "--force", "--clock", "gpu")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        # Lists wrap to the width (120 columns without a terminal): read them as words.
        self.assertIn("compared anyway: --force", " ".join(proc.stdout.split()))
        # Both versions shown, beside the CUDA level.
        self.assertRegex(proc.stdout, r"driver / CUDA / runtime +575\.57\.08 / 12\.4 / \S+ +"
                         r"580\.65\.06 / 12\.4")
        doc = json.loads(gpubench("compare", a, b, "--force", "--format", "json").stdout)
        self.assertEqual(doc["environment"]["base"]["nvidia_driver"], "575.57.08")
        self.assertEqual(doc["environment"]["new"]["nvidia_driver"], "580.65.06")

    def test_a_file_without_the_nvidia_driver_is_compared_with_a_note(self):
        base = run_doc(self.rng)  # as written before the driver's version was recorded
        self.assertNotIn("nvidia_driver", base["meta"]["cuda"])
        new = copy.deepcopy(base)
        new["meta"]["cuda"]["nvidia_driver"] = "580.65.06"
        proc = gpubench("compare", self.save(base), self.save(new), "--clock", "gpu")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("BASE records no NVIDIA driver version", proc.stdout)
        # The same driver on both sides: nothing to say.
        base["meta"]["cuda"]["nvidia_driver"] = "580.65.06"
        proc = gpubench("compare", self.save(base), self.save(new), "--clock", "gpu")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertNotIn("NVIDIA driver", proc.stdout)

    def test_flagged_telemetry_on_one_side_is_refused_unless_forced(self):
        base = run_doc(self.rng)
        new = copy.deepcopy(base)
        for m in new["results"][0]["measurements"]:
            m["telemetry"] = {"available": True, "flags": ["thermal", "power_cap"],
                              "sm_clock_mhz": {"min": 1500, "median": 1700}}
        a, b = self.save(base), self.save(new)
        proc = gpubench("compare", a, b, "--clock", "gpu")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("telemetry flags differ", proc.stderr)
        self.assertIn("NEW [thermal]", proc.stderr)
        proc = gpubench("compare", a, b, "--clock", "gpu", "--force")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("1700 MHz", proc.stdout)
        # power_cap alone is informational: no refusal.
        for m in new["results"][0]["measurements"]:
            m["telemetry"]["flags"] = ["power_cap"]
        proc = gpubench("compare", a, self.save(new), "--clock", "gpu")
        self.assertEqual(proc.returncode, 0, proc.stderr)

    def test_environments_side_by_side_and_test_knob_warned(self):
        base = run_doc(self.rng)
        new = copy.deepcopy(base)
        new["meta"]["test_slowdown"] = "end_to_end:0.10"
        proc = gpubench("compare", self.save(base), self.save(new), "--clock", "gpu")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        # The verdict first, then the environments side by side.
        verdict, first = proc.stdout.splitlines()[0], proc.stdout.splitlines()[2]
        self.assertTrue(verdict.startswith("Verdict: no regression; "), verdict)
        self.assertIn("BASE", first)
        self.assertIn("NEW", first)
        self.assertRegex(proc.stdout, r"gpu\s+NVIDIA H200\s+NVIDIA H200")
        self.assertIn("GPUBENCH_TEST_SLOWDOWN=end_to_end:0.10", proc.stdout)


class Outputs(GateCase):
    def test_markdown_for_a_pull_request_comment(self):
        proc = gpubench("compare", "--base", *self.runs(5), "--new",
                        *self.runs(5, slow={"end_to_end": 1.2}), "--clock", "gpu",
                        "--format", "md")
        self.assertEqual(proc.returncode, 1)
        lines = proc.stdout.splitlines()
        self.assertEqual(lines[0], "### gpubench compare: 1 regression")
        self.assertIn("| | BASE | NEW |", proc.stdout.replace("|  |", "| |"))
        self.assertIn("**REGRESSION**", proc.stdout)

    def test_junit_xml(self):
        junit = os.path.join(self.tmp.name, "junit.xml")
        proc = gpubench("compare", "--base", *self.runs(5), "--new",
                        *self.runs(5, slow={"end_to_end": 1.2}), "--clock", "gpu",
                        "--junit", junit)
        self.assertEqual(proc.returncode, 1)
        suite = ET.parse(junit).getroot().find("testsuite")
        self.assertEqual(suite.get("failures"), "1")
        failed = [c for c in suite.iter("testcase") if c.find("failure") is not None]
        self.assertEqual(len(failed), 1)
        self.assertIn("end_to_end", failed[0].get("name"))
        self.assertIn("REGRESSION: change +", failed[0].find("failure").get("message"))

    def test_csv_has_the_interval(self):
        proc = gpubench("compare", "--base", *self.runs(3), "--new", *self.runs(3),
                        "--clock", "gpu", "--format", "csv")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        header = proc.stdout.splitlines()[0].split(",")
        self.assertIn("interval_lo", header)
        self.assertIn("host_bound", header)

    def test_bad_option_combinations_are_usage_errors(self):
        a = self.save(run_doc(self.rng))
        for args, message in [((a,), "BASE NEW"), ((a, a, "--base", a), "not both"),
                              ((a, a, "--min-compared", "150%"), "more than 100%"),
                              ((a, a, "--run-noise", "x"), "--run-noise")]:
            with self.subTest(args=args):
                proc = gpubench("compare", *args)
                self.assertEqual(proc.returncode, 2, proc.stdout)
                self.assertIn(message, proc.stderr)


class AbGate(GateCase):
    """scripts/ab-gate.sh with stand-in binaries that copy prepared results."""

    FAKE = """#!/bin/sh
# stand-in for gpubench run: log the call, copy the prepared result to --output
echo "$SIDE" >> "$LOG"
out=""
while [ $# -gt 0 ]; do [ "$1" = --output ] && out=$2; shift; done
n=$(wc -l < "$LOG")
cp "$PREPARED/$SIDE-$n.json" "$out"
"""

    def fake(self, side):
        path = os.path.join(self.tmp.name, f"fake-{side}")
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.FAKE.replace("$SIDE", side))
        os.chmod(path, 0o755)
        return path

    def gate(self, slow):
        prepared = os.path.join(self.tmp.name, "prepared")
        os.makedirs(prepared, exist_ok=True)
        for n in range(1, 7):
            for side in ("a", "b"):
                doc = run_doc(self.rng, slow=slow if side == "b" else None)
                with open(os.path.join(prepared, f"{side}-{n}.json"), "w",
                          encoding="utf-8") as f:
                    json.dump(doc, f)
        # each side's Nth call copies its Nth file; the log interleaves both sides
        log = os.path.join(self.tmp.name, "calls.log")
        for side in ("a", "b"):
            for n in range(1, 13):
                src = os.path.join(prepared, f"{side}-{(n - 1) % 6 + 1}.json")
                dst = os.path.join(prepared, f"{side}-{n}.json")
                if not os.path.exists(dst):
                    with open(src, encoding="utf-8") as f, open(dst, "w", encoding="utf-8") as g:
                        g.write(f.read())
        if os.path.exists(log):
            os.remove(log)
        env = dict(os.environ, LOG=log, PREPARED=prepared, ROUNDS="3", COMPARE_WITH=GPUBENCH)
        out = os.path.join(self.tmp.name, "ab-out")
        proc = subprocess.run(["bash", os.path.join(SOURCE_DIR, "scripts", "ab-gate.sh"),
                               self.fake("a"), self.fake("b"), "unused.json", out],
                              capture_output=True, text=True, timeout=120, env=env, check=False)
        with open(log, encoding="utf-8") as f:
            calls = f.read().split()
        return proc, calls, out

    def test_interleaves_and_passes_one_build(self):
        proc, calls, out = self.gate(None)
        self.assertEqual(calls, ["a", "b", "b", "a", "a", "b"])
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        for name in ("compare.md", "compare.json", "junit.xml", "a-3.json", "b-3.json"):
            self.assertTrue(os.path.exists(os.path.join(out, name)), name)
        with open(os.path.join(out, "compare.json"), encoding="utf-8") as f:
            self.assertEqual(json.load(f)["environment"]["new"]["runs"], 3)

    def test_cpu_only_runs_gate_their_host_clock_rows(self):
        # A run file of CPU references has no GPU-clock row: the default gate would judge
        # nothing ("0 of 0 compared"); the script gates the host-clock rows and says so.
        config = os.path.join(self.tmp.name, "cpu.json")
        with open(config, "w", encoding="utf-8") as f:
            json.dump({"options": {"cpu-only": True, "min-samples": 2, "max-samples": 3,
                                   "min-time": 0, "timeout": 0.2, "warmup": 0},
                       "benchmarks": [{"benchmark": "vecadd", "params": {"n": "64Ki"}}]}, f)
        script = os.path.join(SOURCE_DIR, "scripts", "ab-gate.sh")
        out = os.path.join(self.tmp.name, "cpu-out")
        env = dict(os.environ, ROUNDS="2", HOST_THRESHOLD="500%")
        proc = subprocess.run(["bash", script, GPUBENCH, GPUBENCH, config, out],
                              capture_output=True, text=True, timeout=120, env=env, check=False)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("host-clock measurements only", proc.stderr)
        with open(os.path.join(out, "compare.json"), encoding="utf-8") as f:
            doc = json.load(f)
        self.assertEqual(len(doc["rows"]), 1)
        self.assertEqual(doc["rows"][0]["measurement"], "cpu_reference")
        # Asked for the GPU clock, the script says why nothing can match.
        proc = subprocess.run(["bash", script, GPUBENCH, GPUBENCH, config, out],
                              capture_output=True, text=True, timeout=120,
                              env=dict(env, CLOCK="gpu"), check=False)
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        self.assertIn("no GPU-clock measurement", proc.stderr)

    def test_fails_a_slowed_build(self):
        proc, _, _ = self.gate({"end_to_end": 1.3})
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        self.assertIn("REGRESSION", proc.stdout)


if __name__ == "__main__":
    unittest.main()
