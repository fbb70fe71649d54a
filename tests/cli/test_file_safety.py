"""No file gpubench writes can be turned against its user (docs/reliability.md, "Files that cannot
be turned"): a journal or lock planted as a link, an output of another user or with other names,
two writers of one output through any of its names, an edited journal point, a rerun beyond the
point limit, and messages that quote hostile bytes. The cases with a second user run when the test
runs as root (as CI does) and are skipped with a message otherwise."""
import json
import os
import shutil
import subprocess
import time
import unittest

from gpubench_cli import FAST, GPUBENCH, HOLDING_SWEEP, SYNTHETIC_H200, run, tempdir

SWEEP = ["vecadd", "--cpu-only", "--n", "1000:1003:1", *FAST, "--cpu-threads", "1", "-q"]
NOBODY = 65534


def as_nobody():
    os.setgid(NOBODY)
    os.setuid(NOBODY)


def fnv1a(text):
    """The journal's line check (lib/src/results/journal.cpp)."""
    h = 14695981039346656037
    for byte in text.encode("utf-8"):
        h ^= byte
        h = (h * 1099511628211) % (1 << 64)
    return f"{h:016x}"


def reseal(line, old, new):
    """`line` (a journal line as gpubench wrote it) with the text `old` replaced by `new` and its
    check recomputed as gpubench computes it: over the line's JSON without "check", which sorts
    first, so the body is the line's own text without it (no float is formatted again)."""
    head = line[:len('{"check":"0123456789abcdef",')]
    assert head.startswith('{"check":"') and head.endswith('",'), line[:40]
    body = "{" + line[len(head):]
    assert line == f'{{"check":"{fnv1a(body)}",' + body[1:], "the check is FNV-1a of the body"
    assert body.count(old) == 1, old
    body = body.replace(old, new)
    return f'{{"check":"{fnv1a(body)}",' + body[1:]


class Base(unittest.TestCase):
    def setUp(self):
        self.tmp = tempdir()
        self.addCleanup(self.tmp.cleanup)
        self.dir = self.tmp.name
        self.out = self.path("out.json")
        self.journal = self.out + ".journal"

    def path(self, name):
        return os.path.join(self.dir, name)

    def put(self, name, text):
        with open(self.path(name), "w", encoding="utf-8") as f:
            f.write(text)
        return self.path(name)

    def text(self, path):
        with open(path, encoding="utf-8") as f:
            return f.read()

    def refused(self, proc, *expected):
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        for e in expected:
            self.assertIn(e, proc.stderr)

    def start_slow(self):
        """A sweep writing self.out, once its first point is journaled."""
        proc = subprocess.Popen([GPUBENCH, *HOLDING_SWEEP, "--output", self.out],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: (proc.kill(), proc.communicate()))
        deadline = time.time() + 60
        while time.time() < deadline and proc.poll() is None:
            if os.path.exists(self.journal) and self.text(self.journal).count("\n") >= 2:
                return proc
            time.sleep(0.01)
        self.fail("the slow sweep ended before its first point: " + proc.communicate()[1])


class PlantedLinks(Base):
    def test_a_journal_planted_as_a_link_is_refused_and_its_target_untouched(self):
        victim = self.put("victim", "precious")
        for kind in ("symlink", "hard link", "dangling symlink"):
            with self.subTest(kind=kind):
                if kind == "hard link":
                    os.link(victim, self.journal)
                elif kind == "symlink":
                    os.symlink(victim, self.journal)
                else:
                    os.symlink(self.path("created-through-the-link"), self.journal)
                for extra in ([], ["--resume"]):
                    proc = run(*SWEEP, "--output", self.out, *extra)
                    self.refused(proc, f"the journal {self.journal}",
                                 "remove it or give another --output")
                self.assertEqual(self.text(victim), "precious")
                self.assertFalse(os.path.exists(self.path("created-through-the-link")))
                self.assertFalse(os.path.exists(self.out))
                os.remove(self.journal)

    def test_a_lock_file_planted_as_a_link_is_refused(self):
        victim = self.put("victim", "precious")
        os.symlink(victim, self.path(".out.json.lock"))
        self.refused(run(*SWEEP, "--output", self.out), "the lock file", ".out.json.lock")
        self.refused(run("report", SYNTHETIC_H200, "--output", self.out), "the lock file")
        self.assertEqual(self.text(victim), "precious")

    def test_an_output_with_another_name_is_not_replaced(self):
        self.put("out.json", "{}")
        os.link(self.out, self.path("other-name.json"))
        self.refused(run(*SWEEP, "--output", self.out), "has 2 hard links")
        self.refused(run("report", SYNTHETIC_H200, "--output", self.out), "has 2 hard links")
        self.assertEqual(self.text(self.path("other-name.json")), "{}")

    def test_the_users_own_symlink_is_followed_as_documented(self):
        self.put("target.json", "{}")
        os.symlink("target.json", self.out)
        proc = run(*SWEEP, "--output", self.out)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertTrue(os.path.islink(self.out))
        self.assertEqual(len(json.loads(self.text(self.path("target.json")))["results"]), 4)
        self.assertEqual(sorted(os.listdir(self.dir)), ["out.json", "target.json"],
                         "no journal, lock or temporary file is left")


@unittest.skipUnless(os.geteuid() == 0, "needs root to act as a second user (CI runs as root)")
class SecondUser(Base):
    """Root writes in a shared folder (sticky, writable by all) where user nobody planted files."""

    def setUp(self):
        super().setUp()
        os.chmod(self.dir, 0o755)
        self.shared = self.path("shared")
        os.mkdir(self.shared)
        os.chmod(self.shared, 0o1777)
        self.out = os.path.join(self.shared, "out.json")
        self.journal = self.out + ".journal"
        self.victim = self.put("root-only", "root's")
        os.chmod(self.victim, 0o600)

    def plant(self, *argv):
        subprocess.run(argv, check=True, preexec_fn=as_nobody)

    def test_nobodys_journal_link_to_a_root_only_file_is_refused(self):
        self.plant("ln", "-s", self.victim, self.journal)
        self.refused(run(*SWEEP, "--output", self.out), "the journal")
        self.assertEqual(self.text(self.victim), "root's")
        self.assertTrue(os.path.islink(self.journal), "the planted link is left for its owner")

    def test_nobodys_output_link_or_file_is_not_followed_or_replaced(self):
        self.plant("ln", "-s", self.victim, self.out)
        self.refused(run(*SWEEP, "--output", self.out), "symlink of another user (uid 65534)",
                     "shared folder")
        self.refused(run("report", SYNTHETIC_H200, "--output", self.out), "symlink of another")
        self.assertEqual(self.text(self.victim), "root's")
        os.remove(self.out)
        self.plant("touch", self.out)
        self.refused(run(*SWEEP, "--output", self.out), "belongs to another user (uid 65534")
        self.assertEqual(os.path.getsize(self.out), 0)

    def test_nobodys_lock_file_is_refused(self):
        self.plant("touch", os.path.join(self.shared, ".out.json.lock"))
        self.refused(run(*SWEEP, "--output", self.out), "the lock file", "belongs to another user")
        self.assertFalse(os.path.exists(self.out))


class OneWriter(Base):
    def test_every_command_that_writes_refuses_an_output_being_written(self):
        first = self.start_slow()
        os.symlink("out.json", self.path("link.json"))
        writers = {
            "report": ["report", SYNTHETIC_H200],
            "compare": ["compare", SYNTHETIC_H200, SYNTHETIC_H200],
            "completions": ["completions", "bash"],
            "a benchmark": SWEEP,
        }
        for name, argv in writers.items():
            for out in (self.out, self.path("link.json")):
                with self.subTest(writer=name, output=out):
                    proc = run(*argv, "--output", out)
                    self.refused(proc, f"pid {first.pid}", "another process")
        self.assertFalse(os.path.exists(self.out), "nothing replaced the running sweep's file")

    def test_rerun_refuses_an_output_being_written(self):
        done = self.path("done.json")
        self.assertEqual(run(*SWEEP, "--output", done).returncode, 0)
        first = self.start_slow()
        self.refused(run("rerun", done, "--output", self.out), f"pid {first.pid}")

    def test_completions_writes_its_script_to_output(self):
        proc = run("completions", "bash", "--output", self.path("gpubench.bash"))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout, "")
        self.assertEqual(self.text(self.path("gpubench.bash")), run("completions", "bash").stdout)


class EditedJournal(Base):
    def test_a_point_edited_to_another_points_parameters_is_refused(self):
        proc = self.start_slow()
        proc.kill()
        proc.communicate()
        lines = self.text(self.journal).split("\n")
        self.assertEqual(json.loads(lines[1])["result"]["params"], {"dtype": "f32", "n": 1000})
        # The plan's other point, as a careful hand would edit it.
        lines[1] = reseal(lines[1], '"params":{"dtype":"f32","n":1000}',
                          '"params":{"dtype":"f32","n":20000000}')
        self.put("out.json.journal", "\n".join(lines))
        self.refused(run(*HOLDING_SWEEP, "--output", self.out, "--resume"), "line 2",
                     "parameter n", "not the plan's")


class Limits(Base):
    def test_rerun_takes_the_point_limit_of_every_command(self):
        self.assertEqual(run(*SWEEP, "--output", self.out).returncode, 0)
        doc = json.loads(self.text(self.out))
        doc["results"] = [doc["results"][0]] * 10001  # one over the limit
        big = self.put("big.json", json.dumps(doc))
        for extra in (["--dry-run"], ["--output", self.path("never.json")]):
            self.refused(run("rerun", big, *extra), "holds 10001 results",
                         "at most 10000 points")
        self.assertFalse(os.path.exists(self.path("never.json")))

    def test_a_gpu_point_under_cpu_only_names_the_option(self):
        self.assertEqual(run(*SWEEP, "--output", self.out).returncode, 0)
        doc = json.loads(self.text(self.out))
        listed = json.loads(run("vecadd", "--n", "1000", "--dry-run", "--format", "json").stdout)
        params = dict(listed["points"][0]["params"])
        del params["device"]
        doc["results"][0]["params"] = params
        doc["results"][0]["device"] = 0
        edited = self.put("gpu-point.json", json.dumps(doc))
        self.refused(run("rerun", edited, "--dry-run"), "the option cpu-only is on",
                     "rerun it without cpu-only")


class Escaping(Base):
    def test_bytes_that_are_not_utf8_are_shown_escaped(self):
        with open(self.path("bad.json"), "wb") as f:
            f.write(b'{"schema": "gpubench/1", "results": [{"benchmark": "vecadd\xff"}]}')
        proc = run("report", self.path("bad.json"))
        self.assertEqual(proc.returncode, 2)
        self.assertIn("\\xff", proc.stderr)
        self.assertNotIn("\ufffd", proc.stderr)

    def test_notes_quote_a_path_by_the_same_rule(self):
        out = self.path("r\x1b[2J\u202e.json")
        proc = run(*SWEEP[:-1], "--output", out, "--resume")  # without -q: the note is said
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("holds no point of an earlier run", proc.stderr)
        self.assertIn("r\\x1b[2J\\u202e.json", proc.stderr)
        self.assertNotIn("\x1b", proc.stderr)
        self.assertNotIn("\u202e", proc.stderr)

    def test_a_bidirectional_control_is_shown_escaped(self):
        with open(SYNTHETIC_H200, encoding="utf-8") as f:
            doc = json.load(f)
        doc["meta"]["cuda"]["driver"] = "535.\u202e21"
        edited = self.put("rlo.json", json.dumps(doc, ensure_ascii=False))
        for argv in (["report", edited], ["compare", edited, SYNTHETIC_H200]):
            proc = run(*argv)
            self.assertEqual(proc.returncode, 2, proc.stderr)
            self.assertIn("meta.cuda.driver", proc.stderr)
            self.assertNotIn("\u202e", proc.stderr + proc.stdout)
        with open(self.path("arg.json"), "w", encoding="utf-8") as f:
            f.write("{")
        proc = run("report", self.path("arg.json"), "--format", "x\u202ey")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("x\\u202ey", proc.stderr)
        self.assertNotIn("\u202e", proc.stderr)


if __name__ == "__main__":
    unittest.main()
