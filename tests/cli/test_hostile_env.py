"""Hostile environments: threads that cannot start,
outputs that are devices, FIFOs or symlinks, the umask, SIGTERM and SIGHUP, Ctrl-C during a blocking
read, --save-samples checked before measuring, and plot.py without matplotlib. Every case is
bounded in time: a hang fails the test."""
import json
import os
import signal
import stat
import subprocess
import sys
import time
import unittest

from gpubench_cli import (FAST, GPUBENCH, SANITIZED, SOURCE_DIR, recorded_results, run, tempdir,
                          validate, wait_for_signal_handlers)

INJECT = "GPUBENCH_INJECT_FAULT"


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


class ErrorPolicy(unittest.TestCase):
    """Whatever fails inside one point is recorded with that point; the sweep goes on (exit 3)."""

    def setUp(self):
        self.tmp = tempdir()
        self.addCleanup(self.tmp.cleanup)
        self.out = os.path.join(self.tmp.name, "out.json")

    def sweep(self, fault, *extra):
        r = run("vecadd", "--cpu-only", "--n", "1K,2K,4K", *FAST, *extra, "--output", self.out,
                env={INJECT: fault}, timeout=60)
        doc = load(self.out)
        validate(doc)
        return r, doc["results"]

    def test_bad_alloc_in_a_point_skips_it_and_the_sweep_goes_on(self):
        r, results = self.sweep("vecadd:2:bad_alloc")
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertEqual([x["status"] for x in results], ["ok", "skipped", "ok"])
        self.assertIn("out of host memory", results[1]["reason"])
        self.assertNotIn("CUDA", results[1]["reason"])
        self.assertNotIn("CUDA", r.stderr)

    def test_a_thread_that_cannot_start_fails_its_point_without_a_hang(self):
        r, results = self.sweep("vecadd:2:thread_start", "--cpu-threads", "4")
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertEqual([x["status"] for x in results], ["ok", "error", "ok"])
        self.assertIn("cannot start CPU thread 2 of 4", results[1]["reason"])
        self.assertIn("--cpu-threads", results[1]["reason"])

    def test_a_real_thread_limit_fails_the_point_cleanly(self):
        if SANITIZED:
            # AddressSanitizer reserves terabytes of shadow address space at start-up: under an
            # address-space cap it cannot start at all. The injected thread-start fault (above)
            # covers this path in the sanitizer build.
            self.skipTest("an address-space cap leaves no room for AddressSanitizer's shadow memory")
        # 4096 threads of 8 MB stacks cannot fit under a 1 GB address-space cap.
        import resource

        def cap():
            resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

        proc = subprocess.run([GPUBENCH, "vecadd", "--cpu-only", "--n", "1K", "--cpu-threads",
                               "4096", *FAST, "--output", self.out], capture_output=True,
                              text=True, timeout=60, preexec_fn=cap, check=False)
        if proc.returncode == 2 and "memory" in proc.stderr:
            self.skipTest("the binary cannot start under a 1 GB cap here: " + proc.stderr[:200])
        self.assertEqual(proc.returncode, 3, proc.stderr)
        [point] = load(self.out)["results"]
        self.assertEqual(point["status"], "error")
        self.assertIn("cannot start CPU thread", point["reason"])

    def test_a_malformed_fault_kind_is_a_usage_error(self):
        r = run("vecadd", "--cpu-only", "--n", "1K", env={INJECT: "vecadd:1:meteor"})
        self.assertEqual(r.returncode, 2)
        self.assertIn("BENCHMARK:POINT[:KIND]", r.stderr)


class Outputs(unittest.TestCase):
    """--output never replaces a device or special file; the umask and an existing mode hold."""

    def setUp(self):
        self.tmp = tempdir()
        self.addCleanup(self.tmp.cleanup)

    def cpu_run(self, out, preexec_fn=None):
        return subprocess.run([GPUBENCH, "vecadd", "--cpu-only", "--n", "1K", *FAST, "-q",
                               "--output", out], capture_output=True, text=True, timeout=60,
                              preexec_fn=preexec_fn, check=False)

    def test_dev_null_is_refused_and_stays_a_device(self):
        for path in ("/dev/null", "/dev/full"):
            with self.subTest(path=path):
                r = self.cpu_run(path)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn("is a character device, not a regular file", r.stderr)
                self.assertTrue(stat.S_ISCHR(os.stat(path).st_mode))

    def test_a_fifo_is_refused_and_stays_a_fifo(self):
        fifo = os.path.join(self.tmp.name, "fifo")
        os.mkfifo(fifo)
        r = self.cpu_run(fifo)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("is a FIFO", r.stderr)
        self.assertTrue(stat.S_ISFIFO(os.stat(fifo).st_mode))
        self.assertEqual(os.listdir(self.tmp.name), ["fifo"])

    def test_a_symlink_to_a_file_is_written_through(self):
        target = os.path.join(self.tmp.name, "target.json")
        link = os.path.join(self.tmp.name, "link.json")
        with open(target, "w", encoding="utf-8") as f:
            f.write("{}")
        os.symlink(target, link)
        r = self.cpu_run(link)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.islink(link))
        self.assertEqual(load(target)["schema"], "gpubench/1")

    def test_the_umask_is_honoured_and_an_existing_mode_kept(self):
        out = os.path.join(self.tmp.name, "private.json")
        r = self.cpu_run(out, preexec_fn=lambda: os.umask(0o077))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(stat.S_IMODE(os.stat(out).st_mode), 0o600)
        os.chmod(out, 0o640)
        r = self.cpu_run(out)  # the default umask would give 0644
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(stat.S_IMODE(os.stat(out).st_mode), 0o640)


class Signals(unittest.TestCase):
    def setUp(self):
        self.tmp = tempdir()
        self.addCleanup(self.tmp.cleanup)
        self.out = os.path.join(self.tmp.name, "out.json")

    def signalled(self, sig, args, after=1.0, **popen):
        proc = subprocess.Popen([GPUBENCH, *args], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, **popen)
        wait_for_signal_handlers(proc)
        time.sleep(after)
        self.assertIsNone(proc.poll(), "the run ended before the signal was sent")
        proc.send_signal(sig)
        try:
            _, stderr = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            self.fail(f"gpubench did not stop within 60 s of signal {sig}")
        return proc.returncode, stderr

    def test_sigterm_and_sighup_keep_the_results_so_far(self):
        for sig, code, name in ((signal.SIGTERM, 143, "SIGTERM"), (signal.SIGHUP, 129, "SIGHUP")):
            with self.subTest(signal=name):
                code_got, stderr = self.signalled(
                    sig, ["vecadd", "--cpu-only", "--n", "1K,100M,100M", "--timeout", "5",
                          "--min-time", "0", "--min-samples", "1000", "--output", self.out],
                    after=1.0)
                self.assertEqual(code_got, code, stderr)
                doc = load(self.out)
                validate(doc)
                self.assertTrue(doc["meta"]["incomplete"])
                self.assertIn(name, doc["meta"]["incomplete_reason"])
                # The 1K point is normally done when the signal lands; on a loaded machine the
                # signal may land in it, which leaves it skipped, never ok without samples.
                first = doc["results"][0]
                self.assertIn(first["status"], ("ok", "skipped"))
                if first["status"] == "ok":
                    self.assertGreater(len(first["measurements"][0]["samples"]), 0)
                # The journal stays beside an incomplete file when it holds a point.
                self.assertEqual(sorted(set(os.listdir(self.tmp.name)) - {"out.json.journal"}),
                                 ["out.json"], "a temporary was left")
                os.remove(self.out)
                if os.path.exists(self.out + ".journal"):
                    os.remove(self.out + ".journal")

    def test_a_fifo_run_file_never_blocks(self):
        # Run files from a FIFO (or a pipe) are refused before any read (docs/errors.md, "Hostile
        # input"), so a silent writer cannot hold gpubench, and Ctrl-C has nothing to interrupt.
        fifo = os.path.join(self.tmp.name, "run.json")
        os.mkfifo(fifo)
        r = subprocess.run([GPUBENCH, "run", fifo], capture_output=True, text=True, timeout=20,
                           check=False)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("is a FIFO (named pipe), not a run file", r.stderr)

    def test_a_run_file_from_an_open_pipe_never_blocks(self):
        with subprocess.Popen([GPUBENCH, "run", "/dev/stdin"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
            try:
                _, stderr = proc.communicate(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                self.fail("a run file read from an open pipe blocked")
        self.assertEqual(proc.returncode, 2, stderr)
        self.assertIn("not a run file", stderr)


class SaveSamples(unittest.TestCase):
    @unittest.skipUnless(os.path.isdir("/proc/self"), "needs /proc")
    def test_a_folder_that_cannot_be_created_is_found_before_measuring(self):
        start = time.time()
        r = run("augment", "--cpu-only", "--batch", "2", "--save-samples",
                "/proc/gpubench-samples", *FAST, timeout=60)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--save-samples: cannot create '/proc/gpubench-samples'", r.stderr)
        self.assertNotIn("cpu_reference", r.stdout)  # nothing was measured
        self.assertLess(time.time() - start, 30)

    def test_a_writable_folder_is_created_at_once(self):
        with tempdir() as d:
            folder = os.path.join(d, "samples")
            r = run("augment", "--cpu-only", "--batch", "2", "--save-samples", folder, *FAST,
                    "-q", timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertTrue(any(f.endswith(".png") for f in os.listdir(folder)))
            self.assertFalse(any(f.startswith(".gpubench-probe") for f in os.listdir(folder)))


PLOT = os.path.join(SOURCE_DIR, "scripts", "plot.py")
SYSTEM_PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


class Plot(unittest.TestCase):
    def test_a_missing_matplotlib_names_the_interpreter_and_the_fix(self):
        # -S leaves out site-packages (where matplotlib lives): as an interpreter without it.
        r = subprocess.run([SYSTEM_PYTHON, "-S", PLOT, "x.json"], capture_output=True, text=True,
                           timeout=60, check=False)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(f"the Python interpreter {SYSTEM_PYTHON}", r.stderr)
        self.assertIn("has no module 'matplotlib'", r.stderr)
        self.assertIn("-m pip install matplotlib", r.stderr)
        self.assertNotIn("Traceback", r.stderr)

    def test_one_colour_per_mode_documented_names_and_error_bars(self):
        script = f"""
import glob, json, sys
sys.path.insert(0, {os.path.join(SOURCE_DIR, "python")!r})
from gpubench import charts
charts.use_matplotlib()
files = sorted(glob.glob({os.path.join(recorded_results("h200-2026-11-29/first-run"), "*.json")!r}))
c = charts.Collection([charts.read_document(f) for f in files])
figs = [("pipeline-steps", charts.pipeline_figure(c)), ("augment", charts.augment_figure(c))]
out = []
for name, fig in figs:
    for ax in fig.axes:
        for c in ax.containers:
            line = c.lines[0]
            bars = c.lines[2][0].get_segments() if c.lines[2] else []
            spans = [abs(s[1][1] - s[0][1]) for s in bars]
            out.append([name, ax.get_title(), c.get_label(), line.get_color(), max(spans or [0])])
print(json.dumps(out))
"""
        r = subprocess.run([SYSTEM_PYTHON, "-c", script], capture_output=True, text=True,
                           timeout=120, check=False)
        if r.returncode != 0 and "No module named 'matplotlib'" in r.stderr:
            self.skipTest("matplotlib is not installed for " + SYSTEM_PYTHON)
        self.assertEqual(r.returncode, 0, r.stderr)
        series = json.loads(r.stdout)
        colours = {}
        for _, _, label, colour, _ in series:
            colours.setdefault(label, set()).add(colour)
        for label, seen in colours.items():
            self.assertEqual(len(seen), 1, f"{label} has several colours: {seen}")
        labels = set(colours)
        self.assertIn("serial", labels)
        self.assertIn("cpu-augment", labels)  # the docs' name, not the key cpu_augment
        self.assertIn("CPU reference", labels)
        self.assertFalse(labels & {"cpu_augment", "stage_a_cpu", "cpu_reference"}, labels)
        self.assertTrue(any(span > 0 for *_, span in series), "no point carries its spread")


if __name__ == "__main__":
    unittest.main()
