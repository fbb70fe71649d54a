"""Shell completions: each subcommand offers its own choices for each option that has a fixed set
of values (stream --dtype: f32, f64, all; vecadd --dtype adds f16, bf16), `completions` offers
the shell names, and every word offered is accepted by the subcommand it is offered for.

bash and fish are asked for real completions (bash: the generated function with COMP_WORDS;
fish: `complete -C`); zsh's _arguments specs are read from the script, which `zsh -n` parses.
A shell that is not installed skips its test (CI installs bash, zsh and fish)."""
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from gpubench_cli import GPUBENCH, run

SUBCOMMANDS = ["vecadd", "augment", "pipeline", "stream", "gemm", "roofline", "devices", "run",
               "rerun", "compare", "report", "check", "doctor", "completions"]
# What the help of each subcommand declares, checked against the table below so that a choice
# added to a subcommand without its completion (or the reverse) fails here.
TYPE = re.compile(r"^\s+(?:-\w,)?(--[\w-]+)\s+\{([^}]*)\}(\S*)", re.M)


def declared_choices(sub):
    """{option: [words]} from `gpubench SUB --help` (the type each option declares)."""
    text = run(sub, "--help").stdout
    out = {}
    for name, words, rest in TYPE.findall(text):
        out[name] = words.split("|") + (["all"] if "|all" in rest else [])
    return out


EXPECTED = {
    ("stream", "--dtype"): ["f32", "f64", "all"],
    ("vecadd", "--dtype"): ["f32", "f64", "f16", "bf16", "all"],
    ("gemm", "--dtype"): ["f64", "f32", "tf32", "bf16", "f16", "fp8", "all"],
    ("gemm", "--layout"): ["nn", "nt", "tn", "all"],
    ("roofline", "--dtype"): ["f32", "f64", "f16", "bf16", "all"],
    ("augment", "--out-dtype"): ["f32", "f16", "bf16"],
    ("compare", "--gate"): ["gpu", "host", "host-bound", "all"],
    ("compare", "--clock"): ["gpu", "host"],
    ("doctor", "--format"): ["table", "json"],
    ("report", "--format"): ["table", "md", "json", "csv", "html"],
    ("check", "--format"): ["table", "json", "junit", "prometheus"],
}


def accepted(sub, option, word):
    """Whether SUB takes `option word` (checked without measuring: --dry-run, or a run that fails
    later for another reason than this option)."""
    if sub in ("vecadd", "augment", "pipeline", "stream", "gemm", "roofline"):
        p = run(sub, option, word, "--dry-run")
        return p.returncode == 0, p.stderr
    if sub == "run":
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "r.json")
            with open(path, "w", encoding="utf-8") as f:
                f.write('{"benchmarks": [{"benchmark": "vecadd"}]}')
            p = run("run", path, option, word, "--dry-run")
            return p.returncode == 0, p.stderr
    if sub == "rerun":
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "r.json")
            with open(os.path.join(d, "cpu.json"), "w", encoding="utf-8") as f:
                f.write('{"options": {"cpu-only": true, "min-samples": 1, "max-samples": 1}, '
                        '"benchmarks": [{"benchmark": "vecadd", "params": {"n": "1K"}}]}')
            made = run("run", os.path.join(d, "cpu.json"), "--output", path, "-q")
            assert made.returncode == 0, made.stderr
            p = run("rerun", path, option, word, "--dry-run")
            return p.returncode == 0, p.stderr
    if sub in ("compare", "report"):
        # No file: the option's value is read first, so an error naming the option rejects it.
        # A page needs a path to be written to (which then fails for another reason).
        page = ["--output", "/nonexistent/page.html"] if word == "html" else []
        p = run(sub, option, word, *page, "/nonexistent/a.json", "/nonexistent/b.json")
        return option not in p.stderr, p.stderr
    if sub == "check":
        # --from without --save-reference is refused after the formats are read: a refusal that
        # names the option rejects the word.
        p = run("check", option, word, "--from", "/nonexistent/a.json")
        return option not in p.stderr, p.stderr
    if sub == "doctor":
        p = run("doctor", option, word)
        return p.returncode in (0, 77), p.stderr
    if sub == "devices":
        p = run("devices", option, word)
        return option not in p.stderr, p.stderr
    return True, ""


class Choices(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.declared = {sub: declared_choices(sub) for sub in SUBCOMMANDS}

    def test_the_help_declares_each_subcommands_own_choices(self):
        for (sub, option), words in EXPECTED.items():
            with self.subTest(sub=sub, option=option):
                self.assertEqual(self.declared[sub].get(option), words)

    def test_every_declared_word_is_accepted(self):
        for sub, options in self.declared.items():
            for option, words in options.items():
                if option == "--output-format":
                    continue  # needs --output; the words are --format's
                for word in words:
                    with self.subTest(sub=sub, option=option, word=word):
                        ok, err = accepted(sub, option, word)
                        self.assertTrue(ok, err)

    def test_any_case_is_accepted(self):
        for args in (["vecadd", "--dtype", "F32", "--dry-run"],
                     ["vecadd", "--format", "JSON", "--dry-run"],
                     ["augment", "--interp", "Bilinear", "--dry-run"],
                     ["vecadd", "--l2-flush", "WRITE", "--dry-run"]):
            with self.subTest(args=args):
                p = run(*args)
                self.assertEqual(p.returncode, 0, p.stderr)
        p = run("vecadd", "--dtype", "F32,F16", "--dry-run", "--format", "json")
        self.assertIn('"dtype": "f16"', p.stdout.replace("\n", " ").replace('":"', '": "'))


def script(shell):
    p = run("completions", shell)
    if p.returncode != 0:
        raise AssertionError(p.stderr)
    return p.stdout


class ShellCase(unittest.TestCase):
    shell = ""

    def setUp(self):
        if shutil.which(self.shell) is None:
            self.skipTest(f"{self.shell} is not installed")
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.path = os.path.join(self.tmp.name, "gpubench." + self.shell)
        with open(self.path, "w", encoding="utf-8") as f:
            f.write(script(self.shell))
        self.declared = {sub: declared_choices(sub) for sub in SUBCOMMANDS}

    def check_all(self):
        self.assertEqual(sorted(self.complete([])), sorted(
            [s for s in SUBCOMMANDS] + ["--help", "--version", "-h"]) if self.shell == "bash"
            else sorted(SUBCOMMANDS))
        self.assertEqual(sorted(self.complete(["completions"])), ["bash", "fish", "zsh"])
        for sub, options in self.declared.items():
            for option, words in options.items():
                with self.subTest(sub=sub, option=option):
                    self.assertEqual(sorted(self.complete([sub, option])), sorted(words))
        self.assertNotIn("f16", self.complete(["stream", "--dtype"]))
        self.assertNotIn("man", self.complete([]))


class Bash(ShellCase):
    shell = "bash"

    def complete(self, words):
        line = ["gpubench", *words, ""]
        cmd = (f"source {self.path}; COMP_WORDS=({' '.join(line[:-1])} ''); "
               f"COMP_CWORD={len(line) - 1}; _gpubench; printf '%s\\n' \"${{COMPREPLY[@]}}\"")
        p = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        return [w for w in p.stdout.split("\n") if w]

    def test_each_subcommand_offers_its_own_choices(self):
        self.check_all()


class Fish(ShellCase):
    shell = "fish"

    def complete(self, words):
        line = " ".join(["gpubench", *words]) + " "
        cmd = f"source {self.path}; complete -C '{line}'"
        p = subprocess.run(["fish", "--no-config", "-c", cmd], capture_output=True, text=True,
                           timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        return [w.split("\t")[0] for w in p.stdout.split("\n") if w]

    def test_each_subcommand_offers_its_own_choices(self):
        self.check_all()


class Zsh(ShellCase):
    shell = "zsh"

    def complete(self, words):
        """The words the script declares for the last of `words` (zsh's own completion needs a
        terminal; the _arguments specs are what it reads)."""
        text = open(self.path, encoding="utf-8").read()
        if not words:
            return re.findall(r"^    '([a-z][\w-]*):", text, re.M)
        block = re.search(r"^        " + re.escape(words[0]) + r"\)\n(.*?);;", text,
                          re.M | re.S).group(1)
        if len(words) == 1:
            m = re.search(r"'1:\w+:\(([^)]*)\)'", block)
            return m.group(1).split() if m else []
        m = re.search(r"'" + re.escape(words[1]) + r"\[[^]]*\]:value:\(([^)]*)\)'", block)
        return m.group(1).split() if m else []

    def test_the_script_parses(self):
        p = subprocess.run(["zsh", "-n", self.path], capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_each_subcommand_offers_its_own_choices(self):
        self.check_all()


if __name__ == "__main__":
    unittest.main()
