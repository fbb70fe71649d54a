"""The journal (docs/reliability.md, "The journal"): each completed point of a run with --output
FILE is in FILE.journal before the next starts; --resume keeps them after a SIGKILL; one writer
per output; a full disk, a torn or edited line; `report` and `compare` read a journal."""
import json
import os
import random
import resource
import signal
import subprocess
import time
import unittest

from gpubench_cli import (GPUBENCH, HOLDING_SWEEP, SANITIZED, run, tempdir, validate,
                          wait_for_signal_handlers)

# A CPU sweep of equal, tiny points, each paced by its warm-up calls (about 25 ms a point on one
# core): the whole sweep takes long enough that a test polling its journal sees the lines it waits
# for before the run ends, even on a loaded machine. Under AddressSanitizer each call is several
# times slower, so a tenth of the calls paces the points about as much.
PACED = ["--min-samples", "2", "--max-samples", "3", "--min-time", "0", "--timeout", "0.2",
         "--warmup", "10000" if SANITIZED else "100000", "--cpu-threads", "1"]
SWEEP = ["vecadd", "--cpu-only", "--n", "1000:1029:1", *PACED]
# The same points, each sampled for at least 10 ms: a signal can land in the middle of the sweep.
SLOW_SWEEP = ["vecadd", "--cpu-only", "--n", "1000000:1000029:1", "--min-samples", "20",
              "--max-samples", "20", "--min-time", "0", "--timeout", "1", "--warmup", "0",
              "--cpu-threads", "1"]


def journal_lines(path):
    """The complete lines of a journal (a torn last line left out), parsed."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return [json.loads(line) for line in text.split("\n")[:-1]]


def samples_of(result):
    return [m["samples"] for m in result["measurements"]]


def start(args, out, **kwargs):
    proc = subprocess.Popen([GPUBENCH, *args, "--output", out], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kwargs)
    return proc


def wait_for_lines(path, count, proc, timeout=60):
    """Waits until the journal at `path` holds `count` complete lines (header included)."""
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None:
        try:
            with open(path, encoding="utf-8") as f:
                if f.read().count("\n") >= count:
                    return True
        except FileNotFoundError:
            pass
        time.sleep(0.005)
    return False


class Journal(unittest.TestCase):
    def setUp(self):
        self.tmp = tempdir()
        self.addCleanup(self.tmp.cleanup)
        self.out = os.path.join(self.tmp.name, "out.json")
        self.journal = self.out + ".journal"

    def killed_journal(self, lines=6, args=SWEEP):
        """A journal left by a run SIGKILLed once it held `lines` lines (header included)."""
        proc = start(args, self.out)
        reached = wait_for_lines(self.journal, lines, proc)
        proc.kill()
        proc.communicate()
        self.assertTrue(reached, "the run ended before its journal held the lines wanted")
        return journal_lines(self.journal)

    def final(self):
        with open(self.out, encoding="utf-8") as f:
            doc = json.load(f)
        validate(doc)
        return doc

    def test_a_finished_run_leaves_its_file_and_no_journal(self):
        proc = run(*SWEEP, "--output", self.out)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(os.listdir(self.tmp.name), ["out.json"])
        self.assertEqual(len(self.final()["results"]), 30)

    def test_resume_keeps_the_killed_runs_points_and_measures_the_rest(self):
        lines = self.killed_journal()
        header, points = lines[0], lines[1:]
        self.assertEqual(header["gpubench_journal"], 1)
        self.assertEqual(header["planned"], 30)
        self.assertNotIn("gpu_uuids", header["identity"])  # a CPU-only run names no GPU
        proc = run(*SWEEP, "--output", self.out, "--resume")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn(f"{len(points)} of 30 points kept", proc.stderr)
        doc = self.final()
        self.assertEqual([r["params"]["n"] for r in doc["results"]], list(range(1000, 1030)))
        for p in points:
            self.assertEqual(samples_of(doc["results"][p["point"]]), samples_of(p["result"]))
        self.assertEqual(doc["meta"]["resumed"]["kept_points"], len(points))
        self.assertEqual(doc["meta"]["started_at"], header["meta"]["started_at"])
        self.assertFalse(doc["meta"]["incomplete"])
        self.assertEqual(os.listdir(self.tmp.name), ["out.json"])

    def test_a_torn_last_line_is_ignored(self):
        lines = self.killed_journal()
        with open(self.journal, "a", encoding="utf-8") as f:
            f.write('{"point": 29, "result": {"benchmark": "vec')  # killed mid-line
        proc = run("report", self.journal, "--format", "json")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(len(json.loads(proc.stdout)["results"]), len(lines) - 1)
        proc = run(*SWEEP, "--output", self.out, "--resume")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("torn last line is ignored", proc.stderr)
        self.assertEqual(len(self.final()["results"]), 30)

    def test_report_and_compare_read_a_journal_as_an_incomplete_run(self):
        lines = self.killed_journal()
        proc = run("report", self.journal, "--format", "json")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        doc = json.loads(proc.stdout)
        self.assertTrue(doc["meta"]["incomplete"])
        self.assertIn(f"{len(lines) - 1} of 30 points", doc["meta"]["incomplete_reason"])
        self.assertEqual([samples_of(r) for r in doc["results"]],
                         [samples_of(p["result"]) for p in lines[1:]])
        proc = run("compare", self.journal, self.journal, "--format", "json")
        self.assertIn(proc.returncode, (0, 1), proc.stderr)

    def test_a_line_changed_by_hand_fails_naming_its_line(self):
        self.killed_journal()
        with open(self.journal, encoding="utf-8") as f:
            lines = f.read().split("\n")
        doc = json.loads(lines[2])
        doc["result"]["measurements"][0]["samples"][0] *= 2  # a "better" figure, by hand
        lines[2] = json.dumps(doc)
        with open(self.journal, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
        for args in (["report", self.journal], [*SWEEP, "--output", self.out, "--resume"]):
            proc = run(*args)
            self.assertEqual(proc.returncode, 2, proc.stderr)
            self.assertIn("line 3", proc.stderr)
            self.assertIn("changed after gpubench wrote it", proc.stderr)

    def test_resume_of_another_run_names_what_differs(self):
        self.killed_journal()
        other_points = ["vecadd", "--cpu-only", "--n", "1000:1030:1", *PACED]
        proc = run(*other_points, "--output", self.out, "--resume")
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("points differ", proc.stderr)
        proc = run(*SWEEP, "--seed", "7", "--output", self.out, "--resume")
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("option seed differs", proc.stderr)
        self.assertTrue(os.path.exists(self.journal), "a refused --resume keeps the journal")

    def test_resume_without_a_journal_is_a_plain_run_with_a_note(self):
        proc = run(*SWEEP, "--output", self.out, "--resume")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("holds no point of an earlier run", proc.stderr)
        self.assertNotIn("resumed", self.final()["meta"])
        proc = run(*SWEEP, "--resume")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--resume needs --output FILE", proc.stderr)

    def test_a_second_writer_is_refused_naming_the_first(self):
        first = start(HOLDING_SWEEP, self.out)
        try:
            self.assertTrue(wait_for_lines(self.journal, 2, first), "the first run ended early")
            proc = run(*SWEEP, "--output", self.out)
            self.assertEqual(proc.returncode, 2, proc.stderr)
            self.assertIn(f"pid {first.pid}", proc.stderr)
            self.assertIn("another process", proc.stderr)
        finally:
            first.kill()
            first.communicate()
        # The kernel released the killed run's lock: nothing stale stops the next one, but the
        # killed run's measured point is not dropped unasked.
        proc = run(*SWEEP, "--output", self.out)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertNotIn("another process", proc.stderr)
        self.assertIn("holds 1 measured point of an earlier run", proc.stderr)
        self.assertIn("add --resume to keep them", proc.stderr)
        self.assertTrue(os.path.exists(self.journal))
        os.remove(self.journal)
        proc = run(*SWEEP, "--output", self.out)
        self.assertEqual(proc.returncode, 0, proc.stderr)

    def test_a_full_disk_stops_the_run_with_the_journal_intact(self):
        limit = 24 * 1024  # bytes: the header and a few point lines fit

        def small_files():
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

        proc = subprocess.run([GPUBENCH, *SWEEP, "--output", self.out], capture_output=True,
                              text=True, preexec_fn=small_files, timeout=120)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("cannot write the journal", proc.stderr)
        self.assertIn(self.journal, proc.stderr)
        self.assertEqual(sorted(os.listdir(self.tmp.name)), ["out.json.journal"])
        with open(self.journal, encoding="utf-8") as f:
            text = f.read()
        self.assertTrue(text.endswith("\n"), "the journal ends on a complete line")
        kept = journal_lines(self.journal)
        self.assertGreater(len(kept), 1)
        proc = run(*SWEEP, "--output", self.out, "--resume")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(len(self.final()["results"]), 30)

    def test_sigterm_writes_the_incomplete_file_and_keeps_the_journal(self):
        proc = start(SLOW_SWEEP, self.out)
        wait_for_signal_handlers(proc)
        self.assertTrue(wait_for_lines(self.journal, 4, proc))
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=120)
        if proc.returncode == 0:
            self.skipTest("the run finished before SIGTERM arrived")
        self.assertEqual(proc.returncode, 143, stderr)
        self.assertTrue(self.final()["meta"]["incomplete"])
        self.assertIn("--resume measures the rest", stderr)
        proc = run(*SLOW_SWEEP, "--output", self.out, "--resume")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(len(self.final()["results"]), 30)

    def test_resume_is_refused_where_no_journal_is_kept(self):
        proc = run(*SWEEP, "--output", self.out, "--resume", "--concurrent")
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("--resume does not apply with --concurrent", proc.stderr)


class KilledAtRandom(unittest.TestCase):
    """SIGKILL at random moments of a CPU sweep, the final write included, then --resume."""
    # Each trial is about two whole runs, which AddressSanitizer makes several times slower.
    TRIALS = 8 if SANITIZED else 20

    def test_resume_completes_whenever_the_run_was_killed(self):
        seed = int(os.environ.get("GPUBENCH_TEST_SEED", random.randrange(1 << 30)))
        print(f"test_journal KilledAtRandom seed {seed}")
        rng = random.Random(seed)
        with tempdir() as d:
            out = os.path.join(d, "probe.json")
            began = time.monotonic()
            self.assertEqual(run(*SLOW_SWEEP, "--output", out).returncode, 0)
            whole = time.monotonic() - began
        # A trial waits up to 1.1 runs before its kill, then resumes: about two runs. The limit
        # follows the probe's time (a sanitizer build runs several times slower), at least 90 s.
        deadline = time.monotonic() + max(90.0, 4 * whole * self.TRIALS)
        kept_counts = []
        for trial in range(self.TRIALS):
            self.assertLess(time.monotonic(), deadline, f"trial {trial}: out of time (seed {seed})")
            with tempdir() as d, self.subTest(trial=trial):
                out = os.path.join(d, "out.json")
                journal = out + ".journal"
                proc = start(SLOW_SWEEP, out)
                time.sleep(rng.uniform(0, whole * 1.1))
                proc.kill()
                proc.communicate()
                kept = []
                if os.path.exists(journal):
                    kept = journal_lines(journal)[1:]
                kept_counts.append(len(kept) if os.path.exists(journal) else "-")
                resumed = run(*SLOW_SWEEP, "--output", out, "--resume")
                self.assertEqual(resumed.returncode, 0, f"seed {seed}: {resumed.stderr}")
                with open(out, encoding="utf-8") as f:
                    doc = json.load(f)
                validate(doc)
                self.assertFalse(doc["meta"]["incomplete"])
                self.assertEqual([r["params"]["n"] for r in doc["results"]],
                                 list(range(1000000, 1000030)))
                for p in kept:
                    self.assertEqual(samples_of(doc["results"][p["point"]]),
                                     samples_of(p["result"]), f"seed {seed}")
                leftovers = [n for n in os.listdir(d) if n != "out.json"]
                # SIGKILL during the final write can leave its temporary file (nothing can remove
                # it); never a journal once the run is complete.
                self.assertNotIn("out.json.journal", leftovers)
        # "-": killed before the journal existed, or after the finished run deleted it.
        print(f"test_journal KilledAtRandom: points kept per trial {kept_counts}")


if __name__ == "__main__":
    unittest.main()
