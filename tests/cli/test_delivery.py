"""Delivery: --version's build facts, `doctor`, the shell completions and man pages
generated from the CLI definitions."""
import json
import os
import shutil
import subprocess
import unittest

from gpubench_cli import FAST, GPUBENCH, has_gpu, run, tempdir


def bash_complete(script, *words):
    """Completes the last of `words` (after `gpubench`) with the generated bash script, in a
    non-interactive bash; returns the candidates."""
    line = " ".join(["gpubench", *words])
    program = (
        f"source {script}\n"
        "complete -p gpubench >/dev/null || exit 3\n"
        f"COMP_WORDS=(gpubench {' '.join(repr(w) for w in words)})\n"
        "COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))\n"
        f"COMP_LINE={line!r}; COMP_POINT=${{#COMP_LINE}}\n"
        "_gpubench\n"
        "printf '%s\\n' \"${COMPREPLY[@]}\"\n")
    out = subprocess.run(["bash", "-c", program], capture_output=True, text=True, timeout=30)
    if out.returncode != 0:
        raise AssertionError(f"bash exited {out.returncode}: {out.stderr}")
    return out.stdout.split()


class VersionTest(unittest.TestCase):
    def test_version_names_the_build(self):
        out = run("--version")
        self.assertEqual(out.returncode, 0, out.stderr)
        for text in ("gpubench 0.", "(git ", "CUDA runtime: 13.", "CUDA architectures: ", "MPI: "):
            self.assertIn(text, out.stdout)


class CompletionsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempdir()
        cls.bash = os.path.join(cls.dir.name, "gpubench.bash")
        out = run("completions", "bash")
        assert out.returncode == 0, out.stderr
        with open(cls.bash, "w", encoding="utf-8") as f:
            f.write(out.stdout)

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def test_unknown_shell_is_a_usage_error(self):
        out = run("completions", "tcsh")
        self.assertEqual(out.returncode, 2)
        self.assertIn("tcsh", out.stderr)

    def test_bash_completes_subcommands(self):
        self.assertEqual(bash_complete(self.bash, "vec"), ["vecadd"])
        self.assertIn("doctor", bash_complete(self.bash, ""))

    def test_bash_completes_dtype_words(self):
        words = bash_complete(self.bash, "vecadd", "--dtype", "")
        self.assertEqual(sorted(words), ["all", "bf16", "f16", "f32", "f64"])
        self.assertEqual(bash_complete(self.bash, "vecadd", "--dtype", "b"), ["bf16"])

    def test_bash_completes_options_of_the_subcommand(self):
        words = bash_complete(self.bash, "pipeline", "--sce")
        self.assertEqual(words, ["--scenario"])
        self.assertEqual(sorted(bash_complete(self.bash, "pipeline", "--scenario", "")),
                         ["all", "augment-train", "encoder-decoder"])

    def test_every_completed_word_is_accepted(self):
        # The word lists live beside the walker; the drivers must accept each of them.
        for option, words in (("--dtype", ["f32", "f64", "f16", "bf16", "all"]),
                              ("--kernel", ["seed", "vectorized", "all"]),
                              ("--memory", ["pinned", "pageable", "all"]),
                              ("--format", ["table", "json", "csv", "md"])):
            self.assertEqual(sorted(bash_complete(self.bash, "vecadd", option, "")), sorted(words))
            for w in words:
                out = run("vecadd", "--cpu-only", "--n", "1K", option, w, *FAST, "-q")
                self.assertEqual(out.returncode, 0, f"{option} {w}: {out.stderr}")

    def test_zsh_and_fish_name_every_subcommand(self):
        zsh = run("completions", "zsh").stdout
        fish = run("completions", "fish").stdout
        self.assertTrue(zsh.startswith("#compdef gpubench"))
        for sub in ("vecadd", "augment", "pipeline", "devices", "run", "compare", "report",
                    "doctor", "completions"):
            self.assertIn(f"'{sub}:", zsh)
            self.assertIn(f"-a {sub} ", fish)
        self.assertIn("'--dtype[", zsh)
        self.assertIn("-l dtype -r -f -a 'f32 f64 f16 bf16 all'", fish)
        self.assertIn("-l output -r -F", fish)
        self.assertNotIn("'man:", zsh)  # the hidden man page writer is not offered
        if shutil.which("zsh"):
            self.assertEqual(subprocess.run(["zsh", "-n", "-c", zsh]).returncode, 0)
        if shutil.which("fish"):
            self.assertEqual(subprocess.run(["fish", "-n", "-c", fish]).returncode, 0)


class ManTest(unittest.TestCase):
    def test_man_pages_for_gpubench_and_each_subcommand(self):
        with tempdir() as d:
            out = run("man", d)
            self.assertEqual(out.returncode, 0, out.stderr)
            pages = sorted(os.listdir(d))
            self.assertIn("gpubench.1", pages)
            self.assertIn("gpubench-vecadd.1", pages)
            self.assertIn("gpubench-doctor.1", pages)
            with open(os.path.join(d, "gpubench-vecadd.1"), encoding="utf-8") as f:
                page = f.read()
            self.assertIn(".TH GPUBENCH-VECADD 1", page)
            self.assertIn("\\-\\-dtype", page)
            if shutil.which("groff"):
                rendered = subprocess.run(
                    ["groff", "-man", "-Tutf8", "-ww", "-z", os.path.join(d, "gpubench-vecadd.1")],
                    capture_output=True, text=True)
                self.assertEqual(rendered.stderr, "")


class DoctorTest(unittest.TestCase):
    def test_doctor_json_names_libraries_and_verdict(self):
        out = run("doctor", "--format", "json")
        self.assertIn(out.returncode, (0, 77), out.stderr)
        doc = json.loads(out.stdout)
        self.assertIn(doc["gpubench"]["cuda_runtime_linkage"], ("static", "shared"))
        for lib in doc["libraries"]:
            self.assertTrue(lib["owner"], lib)
        # CUPTI is optional (only --timestamps): said either way, never a problem.
        self.assertIn(doc["cupti"]["available"], (True, False))
        if not doc["cupti"]["available"]:
            self.assertTrue(doc["cupti"]["reason"])
        self.assertFalse(any("CUPTI" in p["what"] for p in doc["problems"]))
        if out.returncode == 77:
            self.assertTrue(any(p["fatal"] for p in doc["problems"]))

    @unittest.skipIf(has_gpu(), "a GPU is usable here")
    def test_doctor_without_a_gpu_exits_77_naming_the_cause(self):
        out = run("doctor")
        self.assertEqual(out.returncode, 77)
        self.assertIn("verdict: PROBLEM: no usable CUDA device", out.stdout)
        self.assertIn("fix: ", out.stdout)

    def test_doctor_says_when_cupti_is_missing(self):
        out = run("doctor", "--format", "json",
                  env={"GPUBENCH_CUPTI_LIBRARY": "/nonexistent/libcupti.so"})
        doc = json.loads(out.stdout)
        self.assertFalse(doc["cupti"]["available"])
        self.assertIn("/nonexistent/libcupti.so", doc["cupti"]["reason"])

    def test_doctor_counts_the_cpus_and_warns_when_confined(self):
        doc = json.loads(run("doctor", "--format", "json").stdout)
        allowed = sorted(os.sched_getaffinity(0))
        self.assertEqual(doc["cpus"], {"hardware": os.cpu_count(), "usable": len(allowed)})
        taskset = shutil.which("taskset")
        if taskset is None or len(allowed) < 2:
            self.skipTest("needs taskset and at least 2 usable CPUs")
        out = subprocess.run([taskset, "-c", str(allowed[0]), GPUBENCH, "doctor"],
                             capture_output=True, text=True, timeout=60)
        self.assertIn(f"verdict: warning: this process may run on 1 of the {os.cpu_count()} CPUs",
                      out.stdout)
        self.assertRegex(out.stdout, r"CPUs +\d+ \(1 usable by this process")

    def test_doctor_rejects_an_unknown_format(self):
        self.assertEqual(run("doctor", "--format", "csv").returncode, 2)


if __name__ == "__main__":
    unittest.main()
