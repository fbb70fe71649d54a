"""Every table gpubench prints for a recorded result fits a 120-column terminal: `report` of each
result file in tests/data and docs/results (the files beside each README and those packed in its
json.tar.xz), `compare` of each with itself, and the aggregate table of multi-GPU and MPI runs
(part of `report`). Report's legend and note lines wrap too; compare's notes and lists below
its table stay one line each, so that they can be searched."""
import json
import os
import tarfile
import tempfile
import unittest

from gpubench_cli import SOURCE_DIR, run

WIDTH = 120


def recorded_files(target):
    """Every gpubench result file in tests/data and docs/results, packed ones extracted under
    `target` with their archive paths kept apart."""
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
    return [f for f in files if is_result(f)]


def is_result(path):
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except ValueError:
        return False
    return isinstance(doc, dict) and doc.get("schema") == "gpubench/1" and "results" in doc


class Widths(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="gpubench-widths-")
        cls.files = recorded_files(cls.tmp.name)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def check(self, proc, what, lines=None):
        self.assertIn(proc.returncode, (0, 1), f"{what}: {proc.stderr}")
        for line in proc.stdout.splitlines() if lines is None else lines:
            self.assertLessEqual(len(line), WIDTH, f"{what}: a line of {len(line)} columns:\n{line}")

    def test_there_are_recorded_results_to_check(self):
        self.assertGreater(len(self.files), 20)
        aggregates = 0
        for path in self.files:
            with open(path, encoding="utf-8") as f:
                aggregates += '"aggregate"' in f.read()
        self.assertGreater(aggregates, 0, "no multi-GPU or MPI result among the recorded files")

    def test_report_fits_120_columns(self):
        for path in self.files:
            with self.subTest(file=os.path.relpath(path, SOURCE_DIR)):
                self.check(run("report", path), f"report {path}")

    def test_compare_fits_120_columns(self):
        for path in self.files:
            with open(path, encoding="utf-8") as f:
                if not any(r.get("measurements") for r in json.load(f)["results"]):
                    continue  # nothing to compare (a device listing, a run that measured nothing)
            with self.subTest(file=os.path.relpath(path, SOURCE_DIR)):
                # The environment block and the rows table; the notes and lists below them stay
                # one line each (docs/compare.md), so that they can be searched.
                proc = run("compare", "--force", path, path)
                tables = proc.stdout.split("\n\n")[:2]
                self.check(proc, f"compare {path}", "\n".join(tables).splitlines())


if __name__ == "__main__":
    unittest.main()
