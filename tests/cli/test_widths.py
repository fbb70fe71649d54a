"""Everything gpubench prints for people fits the terminal: at 80 and at 120 columns (COLUMNS),
`report` of each result file in tests/data and docs/results (the files beside each README and
those packed in its json.tar.xz), `compare` of each with itself (its verdict first), the
aggregate table of multi-GPU and MPI runs (part of `report`), `run --dry-run`, `doctor` (its
verdict first) and a CPU-only benchmark's table. In a pseudo-terminal of 50 columns, with no
COLUMNS, a benchmark's table, and the progress line cut to the width. Without a terminal or COLUMNS,
output keeps to 120 columns. Error messages on stderr stay one line each, so that they can be
searched."""
import fcntl
import json
import os
import pty
import select
import struct
import subprocess
import tarfile
import tempfile
import termios
import unittest

from gpubench_cli import FAST, GPUBENCH, SANITIZED, SOURCE_DIR, run

WIDTHS = (80, 120)
# Under AddressSanitizer every run is several times slower: the sweep over the recorded files
# keeps to the narrower width there, and to one file of each shape (shape()); the plain build
# runs every file at both widths.
FILE_WIDTHS = (80,) if SANITIZED else WIDTHS


def recorded_files(target):
    """Every gpubench result file in tests/data and docs/results (under AddressSanitizer the first
    of each shape()), packed ones extracted under `target` with their archive paths kept apart."""
    files = []
    roots = [os.path.join(SOURCE_DIR, "tests", "data"), os.path.join(SOURCE_DIR, "docs", "results")]
    for root in roots:
        for folder, _, names in sorted(os.walk(root)):
            for name in sorted(names):
                path = os.path.join(folder, name)
                if name.endswith(".json"):
                    files.append(path)
                elif name.endswith("json.tar.xz"):
                    out = os.path.join(target, os.path.relpath(folder, SOURCE_DIR))
                    with tarfile.open(path) as archive:
                        for member in archive.getmembers():
                            if member.isfile() and member.name.endswith(".json"):
                                dest = os.path.join(out, os.path.normpath(member.name))
                                os.makedirs(os.path.dirname(dest), exist_ok=True)
                                with open(dest, "wb") as f:
                                    f.write(archive.extractfile(member).read())
                                files.append(dest)
    kept, shapes = [], set()
    for path in files:
        doc = result_document(path)
        if doc is None:
            continue
        if SANITIZED:  # the first file of each shape()
            key = frozenset(shape(doc))
            if key in shapes:
                continue
            shapes.add(key)
        kept.append(path)
    return kept


def shape(doc, path=""):
    """What a result file's layout consists of: every key path in it, and every benchmark and
    row name. Two files of one shape take the same code paths in `report` and `compare`."""
    found = set()
    if isinstance(doc, dict):
        for key, value in doc.items():
            found.add(f"{path}/{key}")
            found |= shape(value, f"{path}/{key}")
        if "benchmark" in doc:
            found.add(f"benchmark {doc['benchmark']}")
        if path.endswith("/measurements[]") and "name" in doc:
            found.add(f"row {doc['name']}")
    elif isinstance(doc, list):
        for value in doc:
            found |= shape(value, f"{path}[]")
    return found


def result_document(path):
    """The parsed file if it is a gpubench result, else None."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except ValueError:
        return None
    is_result = isinstance(doc, dict) and doc.get("schema") == "gpubench/1" and "results" in doc
    return doc if is_result else None


class Widths(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="gpubench-widths-")
        cls.files = recorded_files(cls.tmp.name)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def check(self, proc, what, width, lines=None):
        self.assertIn(proc.returncode, (0, 1), f"{what}: {proc.stderr}")
        for line in proc.stdout.splitlines() if lines is None else lines:
            self.assertLessEqual(len(line), width,
                                 f"{what} at {width} columns: a line of {len(line)}:\n{line}")

    def test_there_are_recorded_results_to_check(self):
        self.assertGreater(len(self.files), 20)
        aggregates = 0
        for path in self.files:
            with open(path, encoding="utf-8") as f:
                aggregates += '"aggregate"' in f.read()
        self.assertGreater(aggregates, 0, "no multi-GPU or MPI result among the recorded files")

    def test_report_fits_the_width(self):
        for width in FILE_WIDTHS:
            for path in self.files:
                with self.subTest(width=width, file=os.path.relpath(path, SOURCE_DIR)):
                    self.check(run("report", path, env={"COLUMNS": str(width)}),
                               f"report {path}", width)

    def test_compare_fits_the_width_with_its_verdict_first(self):
        for width in FILE_WIDTHS:
            for path in self.files:
                with open(path, encoding="utf-8") as f:
                    if not any(r.get("measurements") for r in json.load(f)["results"]):
                        continue  # nothing to compare (a device listing, a run measuring nothing)
                with self.subTest(width=width, file=os.path.relpath(path, SOURCE_DIR)):
                    proc = run("compare", "--force", path, path, env={"COLUMNS": str(width)})
                    self.check(proc, f"compare {path}", width)
                    self.assertTrue(proc.stdout.startswith("Verdict: no regression; "),
                                    proc.stdout[:200])

    def test_plan_doctor_and_a_benchmark_fit_the_width(self):
        for width in WIDTHS:
            env = {"COLUMNS": str(width)}
            plan = run("run", os.path.join(SOURCE_DIR, "configs", "full-sweep.json"), "--dry-run",
                       env=env)
            self.check(plan, "run --dry-run", width)
            self.assertIn("would run", plan.stdout)
            doctor = run("doctor", env=env)  # no GPU here: exit 77, a PROBLEM verdict
            self.assertEqual(doctor.stdout.splitlines()[0][:9], "verdict: ")
            self.assertIn("\nlibraries loaded:", doctor.stdout)
            for line in doctor.stdout.splitlines():
                self.assertLessEqual(len(line), width, f"doctor at {width}: {line}")
            bench = run("augment", "--cpu-only", "--batch", "2", *FAST, env=env)
            self.check(bench, "augment --cpu-only", width)

    def test_without_a_terminal_output_keeps_to_120_columns(self):
        env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
        proc = subprocess.run([GPUBENCH, "run", os.path.join(SOURCE_DIR, "configs",
                                                              "full-sweep.json"), "--dry-run"],
                              capture_output=True, text=True, env=env, check=False)
        widest = max(len(line) for line in proc.stdout.splitlines())
        self.assertLessEqual(widest, 120)
        self.assertGreater(widest, 100, "long plan lines use the 120 columns")

    def test_a_terminal_of_50_columns(self):
        """gpubench in a pseudo-terminal 50 columns wide, COLUMNS unset: the table folded to it,
        and the progress line (on stderr, redrawn with a carriage return) cut to it."""
        env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
        pid, fd = pty.fork()
        if pid == 0:  # the child: its stdin, stdout and stderr are the terminal
            fcntl.ioctl(1, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 50, 0, 0))
            os.execve(GPUBENCH, [GPUBENCH, "vecadd", "--cpu-only", "--n", "1000:1400:100",
                                 "--dtype", "all", *FAST], env)
        out = b""
        while True:
            ready, _, _ = select.select([fd], [], [], 60)
            if not ready:
                break
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
        _, status = os.waitpid(pid, 0)
        self.assertEqual(os.waitstatus_to_exitcode(status), 0, out.decode(errors="replace"))
        text = out.decode()
        progress = [p for line in text.split("\r\n") for p in line.split("\r")
                    if p.startswith("\x1b[K[")]
        self.assertTrue(progress, "no progress line in the terminal")
        for part in progress:
            self.assertLessEqual(len(part) - len("\x1b[K"), 49, part)
        self.assertTrue(any(p.endswith("...") for p in progress),
                        f"a point's label longer than the terminal is cut: {progress[:2]}")
        for line in text.replace("\r\n", "\n").split("\n"):
            line = line.split("\r")[-1].replace("\x1b[K", "")
            self.assertLessEqual(len(line), 50, line)


if __name__ == "__main__":
    unittest.main()
