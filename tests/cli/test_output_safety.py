"""Outputs that must not lose or corrupt anything (hostile-input audit, findings 1, 2, 4, 5, 6, 8
and 12): a file-size limit, an --output or --junit that names an input, a file given twice to
compare or report, unchecked stdout writes, --junit's own messages, echoed arguments clipped and
escaped, and --output through a dangling symlink or a symlink loop. docs/errors.md, "Output"."""
import json
import os
import resource
import shutil
import subprocess
import unittest

from gpubench_cli import FAST, GPUBENCH, SYNTHETIC_H200, run, tempdir

CPU = ["vecadd", "--cpu-only", "--n", "1K", *FAST, "-q"]


def scaled(doc, factor):
    """`doc` with every sample multiplied by `factor` (a change of factor - 1)."""
    for result in doc["results"]:
        for m in result["measurements"]:
            m["samples"] = [s * factor for s in m["samples"]]
    return doc


class Base(unittest.TestCase):
    def setUp(self):
        self.tmp = tempdir()
        self.addCleanup(self.tmp.cleanup)
        self.dir = self.tmp.name
        shutil.copy(SYNTHETIC_H200, self.path("base.json"))
        shutil.copy(SYNTHETIC_H200, self.path("new.json"))
        with open(self.path("plan.json"), "w", encoding="utf-8") as f:
            json.dump({"options": {"cpu-only": True, "min-samples": 2, "max-samples": 2,
                                   "min-time": 0},
                       "benchmarks": [{"benchmark": "vecadd", "params": {"n": "1K"}}]}, f)

    def path(self, name):
        return os.path.join(self.dir, name)

    def read(self, name):
        with open(self.path(name), "rb") as f:
            return f.read()

    def run_here(self, *args, **kwargs):
        return subprocess.run([GPUBENCH, *args], cwd=self.dir, capture_output=True, text=True,
                              timeout=120, check=False, **kwargs)

    def assert_usage_error(self, r, *texts):
        self.assertEqual(r.returncode, 2, r.stderr)
        for t in texts:
            self.assertIn(t, r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)


class FileSizeLimit(Base):
    """Finding 1: `ulimit -f` smaller than the result killed the process with SIGXFSZ (exit 153)
    and left a partial temporary file."""

    @staticmethod
    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))

    def test_a_file_size_limit_is_a_write_error(self):
        # A measuring run writes its journal (big.json.journal) first, and fails there.
        cases = (("big.json", ["vecadd", "--cpu-only", "--n", "1K,2K,4K,8K", "--dtype", "all",
                               *FAST, "-q"], "cannot write the journal big.json.journal (write)"),
                 ("rep.json", ["report", "base.json"], "cannot write rep.json (write)"))
        for out, args, message in cases:
            with self.subTest(command=args[0]):
                before = set(os.listdir(self.dir))
                # restore_signals (the default) gives the child SIGXFSZ's default action back.
                r = self.run_here(*args, "--output", out, preexec_fn=self.limit)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn(f"{message}: File too large", r.stderr)
                self.assertEqual(set(os.listdir(self.dir)), before, "a temporary file was left")


class OutputIsAnInput(Base):
    """Finding 2: --output (or --junit) naming an input of the same command replaced it."""

    def test_compare_refuses_to_overwrite_an_input(self):
        original = self.read("new.json")
        os.symlink("new.json", self.path("link.json"))
        for option, target in (("--output", "new.json"), ("--output", "link.json"),
                               ("--junit", "new.json"), ("--output", "base.json")):
            with self.subTest(option=option, target=target):
                r = self.run_here("compare", "base.json", "new.json", option, target)
                which = "BASE" if target == "base.json" else "NEW"
                named = "new.json" if target == "link.json" else target
                self.assert_usage_error(r, f"{option} {target}: is the same file as the {which} "
                                           f"result file '{named}'")
                self.assertEqual(r.stdout, "")
        self.assertEqual(self.read("new.json"), original)
        self.assertEqual(self.read("base.json"), original)

    def test_compare_with_several_runs_checks_every_input(self):
        shutil.copy(SYNTHETIC_H200, self.path("base2.json"))
        shutil.copy(SYNTHETIC_H200, self.path("new2.json"))
        r = self.run_here("compare", "--base", "base.json", "base2.json", "--new", "new.json",
                          "new2.json", "--output", "base2.json")
        self.assert_usage_error(r, "--output base2.json: is the same file as the BASE result file "
                                   "'base2.json'")

    def test_report_refuses_to_overwrite_an_input(self):
        original = self.read("base.json")
        os.symlink("base.json", self.path("link.json"))
        for target in ("base.json", "link.json", os.path.join(self.dir, "base.json")):
            with self.subTest(target=target):
                r = self.run_here("report", "new.json", "base.json", "--output", target,
                                  "--output-format", "csv")
                self.assert_usage_error(r, f"--output {target}: is the same file as the result "
                                           "file 'base.json'")
        self.assertEqual(self.read("base.json"), original)

    def test_run_refuses_to_overwrite_its_run_file(self):
        original = self.read("plan.json")
        for extra in ([], ["--dry-run"]):
            with self.subTest(extra=extra):
                r = self.run_here("run", "plan.json", "--output", "plan.json", *extra)
                self.assert_usage_error(r, "--output plan.json: is the same file as the run file "
                                           "'plan.json'")
        self.assertEqual(self.read("plan.json"), original)

    def test_junit_and_output_must_differ(self):
        r = self.run_here("compare", "base.json", "new.json", "--output", "c.xml", "--junit",
                          "c.xml")
        self.assert_usage_error(r, "--junit c.xml: is the same file as --output c.xml")
        self.assertFalse(os.path.exists(self.path("c.xml")))

    def test_other_outputs_still_work(self):
        r = self.run_here("compare", "base.json", "new.json", "--output", "c.json", "--junit",
                          "j.xml")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(self.read("c.json"))["schema"], "gpubench-compare/1")
        self.assertIn(b"<testsuite", self.read("j.xml"))
        r = self.run_here("run", "plan.json", "--output", "r.json")
        self.assertEqual(r.returncode, 0, r.stderr)


class RepeatedFiles(Base):
    """Finding 4: the same file given several times on one side of compare counted as several
    independent runs and flipped the gate."""

    def setUp(self):
        super().setUp()
        with open(SYNTHETIC_H200, encoding="utf-8") as f:
            doc = scaled(json.load(f), 1.12)
        with open(self.path("slower.json"), "w", encoding="utf-8") as f:
            json.dump(doc, f)

    def test_a_file_twice_on_one_side_is_refused(self):
        os.symlink("base.json", self.path("link.json"))
        cases = ((["--base", "base.json", "base.json", "--new", "slower.json", "new.json"],
                  "--base: 'base.json' is given twice (its 1st and 2nd files)"),
                 (["--base", "base.json", "new.json", "--new", "slower.json", "new.json",
                   "slower.json"], "--new: 'slower.json' is given twice (its 1st and 3rd files)"),
                 (["--base", "base.json", "link.json", "--new", "slower.json", "new.json"],
                  "--base: 'base.json' and 'link.json' are the same file"),
                 (["--base", "base.json", "./base.json", "--new", "slower.json", "new.json"],
                  "--base: 'base.json' and './base.json' are the same file"))
        for args, message in cases:
            with self.subTest(args=args):
                r = self.run_here("compare", *args)
                self.assert_usage_error(r, message, "Give each run once")
                self.assertEqual(r.stdout, "")

    def test_the_audit_case_no_longer_flips_the_gate(self):
        r = self.run_here("compare", "--base", *["base.json"] * 5, "--new", *["slower.json"] * 5)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertNotIn("REGRESSION", r.stdout)

    def test_one_file_as_both_base_and_new_still_works(self):
        for args in (["base.json", "base.json"], ["--base", "base.json", "--new", "base.json"],
                     ["--base", "base.json", "new.json", "--new", "base.json", "new.json"]):
            with self.subTest(args=args):
                r = self.run_here("compare", *args)
                self.assertEqual(r.returncode, 0, r.stderr)

    def test_report_refuses_a_file_twice(self):
        r = self.run_here("report", "base.json", "new.json", "base.json")
        self.assert_usage_error(r, "report: 'base.json' is given twice")
        os.symlink("base.json", self.path("link.json"))
        r = self.run_here("report", "base.json", "link.json")
        self.assert_usage_error(r, "report: 'base.json' and 'link.json' are the same file")
        r = self.run_here("report", "base.json", "new.json")  # two files of equal content
        self.assertEqual(r.returncode, 0, r.stderr)


class CheckedStdout(Base):
    """Finding 5: what was written through std::cout (--help, --version, completions, a vecadd
    dry run) was not checked: exit 0 into /dev/full or a closed pipe."""

    COMMANDS = (["--help"], ["--version"], ["vecadd", "--help"], ["completions", "bash"],
                ["completions", "fish"], ["completions", "zsh"],
                ["vecadd", "--cpu-only", "--n", "1:4096:1", "--dry-run"],
                ["run", "plan.json", "--dry-run"])

    @unittest.skipUnless(os.path.exists("/dev/full"), "no /dev/full")
    def test_a_full_stdout_is_exit_2(self):
        for args in self.COMMANDS:
            with self.subTest(args=args):
                with open("/dev/full", "w", encoding="utf-8") as full:
                    r = subprocess.run([GPUBENCH, *args], cwd=self.dir, stdout=full,
                                       stderr=subprocess.PIPE, text=True, timeout=120,
                                       check=False)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertEqual(r.stderr, "Error: cannot write to stdout: No space left on "
                                           "device\n")

    def test_a_closed_pipe_is_exit_2_as_for_measuring_commands(self):
        # Output larger than a pipe's buffer, so that the write meets the closed end.
        for args in (["vecadd", "--cpu-only", "--n", "1:4096:1", "--dry-run"],
                     ["completions", "bash"]):
            with self.subTest(args=args):
                read_end, write_end = os.pipe()
                os.close(read_end)  # as `| head -c 10` does once it has its bytes
                try:
                    r = subprocess.run([GPUBENCH, *args], cwd=self.dir, stdout=write_end,
                                       stderr=subprocess.PIPE, text=True, timeout=120,
                                       check=False)
                finally:
                    os.close(write_end)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn("cannot write to stdout: Broken pipe", r.stderr)

    def test_a_working_stdout_gets_everything(self):
        r = self.run_here("completions", "bash")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(r.stdout.endswith("complete -F _gpubench gpubench\n"), r.stdout[-80:])
        r = self.run_here("vecadd", "--cpu-only", "--n", "1:4096:1", "--dry-run")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertGreater(len(r.stdout), 100000)
        r = self.run_here("--version")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(r.stdout.startswith("gpubench "), r.stdout)


class Junit(Base):
    """Finding 6: --junit's errors named --output, and --junit "" wrote nothing, silently."""

    def test_errors_name_junit(self):
        os.mkdir(self.path("adir"))
        for target, message in (("adir", "--junit adir: is a folder, expected a file name"),
                                ("nodir/j.xml", "--junit nodir/j.xml: the folder 'nodir' does "
                                                "not exist")):
            with self.subTest(target=target):
                r = self.run_here("compare", "base.json", "new.json", "--junit", target)
                self.assert_usage_error(r, message)
                self.assertNotIn("--output", r.stderr)

    def test_an_empty_or_dash_junit_is_refused(self):
        r = self.run_here("compare", "base.json", "new.json", "--junit", "")
        self.assert_usage_error(r, "--junit: the path is empty (an unset variable?); give a file "
                                   "name")
        r = self.run_here("compare", "base.json", "new.json", "--junit", "-")
        self.assert_usage_error(r, "--junit: '-' is not a file")
        self.assertEqual(sorted(os.listdir(self.dir)), ["base.json", "new.json", "plan.json"])


class EchoedArguments(Base):
    """Finding 8: some errors echoed a 120,000-character argument in full, ESC and CR raw."""

    def test_long_arguments_are_clipped(self):
        long = "a" * 120000
        cases = (["vecadd", "--" + long], ["vecadd", long], [*CPU, "--format", long],
                 [*CPU, "--output", "nodir/" + long],
                 ["compare", "base.json", "new.json", "--clock", long],
                 ["augment", "--cpu-only", "--input", "nodir/" + long],
                 ["augment", "--cpu-only", "--save-samples", "nodir/" + long],
                 ["completions", long], ["report", long], ["devices", "--device", long],
                 ["doctor", "--format", long], ["report", "base.json", "--format", long],
                 [*CPU, "--output-format", long])
        for args in cases:
            with self.subTest(args=[a[:20] for a in args]):
                r = self.run_here(*args)
                self.assertEqual(r.returncode, 2, r.stderr[:300])
                self.assertLess(len(r.stderr), 1200, r.stderr[:300])
                self.assertIn("aaaa", r.stderr)

    def test_control_characters_are_escaped(self):
        nasty = "x\x1b[2Jy\rz"
        for args in ([*CPU, "--format", nasty], ["vecadd", "--" + nasty],
                     ["compare", "base.json", "new.json", "--clock", nasty],
                     ["completions", nasty], [*CPU, "--output", "nodir/" + nasty]):
            with self.subTest(args=args):
                r = self.run_here(*args)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertNotIn("\x1b", r.stderr)
                self.assertNotIn("\r", r.stderr)
                self.assertIn("x\\x1b[2Jy\\rz", r.stderr)


class Symlinks(Base):
    """Finding 12: --output naming a dangling symlink or a symlink loop replaced the link."""

    def test_a_dangling_symlink_is_written_through(self):
        os.mkdir(self.path("results"))
        os.symlink("results/new.json", self.path("link.json"))
        r = self.run_here("report", "base.json", "--output", "link.json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.islink(self.path("link.json")))
        self.assertEqual(json.loads(self.read("results/new.json"))["schema"], "gpubench/1")
        self.assertEqual(os.listdir(self.path("results")), ["new.json"])

    def test_a_dangling_symlink_into_a_missing_folder_is_refused(self):
        os.symlink("nodir/new.json", self.path("link.json"))
        r = self.run_here(*CPU, "--output", "link.json")
        self.assert_usage_error(r, "--output link.json: the folder 'nodir' does not exist")
        self.assertTrue(os.path.islink(self.path("link.json")))

    def test_a_symlink_loop_is_refused(self):
        os.symlink("loop2", self.path("loop1"))
        os.symlink("loop1", self.path("loop2"))
        for args in (["report", "base.json"], CPU, ["compare", "base.json", "new.json"]):
            with self.subTest(command=args[0]):
                r = self.run_here(*args, "--output", "loop1")
                self.assert_usage_error(r, "--output loop1: is a symlink loop")
                self.assertEqual(r.stdout, "")
        r = self.run_here("compare", "base.json", "new.json", "--junit", "loop1")
        self.assert_usage_error(r, "--junit loop1: is a symlink loop")
        self.assertTrue(os.path.islink(self.path("loop1")))
        self.assertTrue(os.path.islink(self.path("loop2")))


if __name__ == "__main__":
    unittest.main()
