"""MPI runs (docs/multi-gpu.md): mpirun -np 4 on the CPU references gives one merged file; a build
without MPI refuses to run under a launcher; a rank that stops answering is reported by rank 0,
which ends the job within the collective timeout. Skipped where mpirun is absent."""
import json
import os
import select
import shutil
import statistics
import subprocess
import time
import unittest

from gpubench_cli import FAST, GPUBENCH, PLOT_PYTHON, SOURCE_DIR, run, tempdir, validate

MPIRUN = shutil.which("mpirun")


def mpi_built_in():
    return "MPI: built in" in run("--version").stdout


def mpirun(np, *args, env=None, timeout=120, launcher=()):
    """Runs gpubench under mpirun with `np` processes (as root in CI, more ranks than cores);
    `launcher` holds mpirun's own options."""
    environment = {**os.environ, **(env or {})}
    # Open MPI's own allocations are not gpubench's: no leak report from a sanitizer build.
    if "ASAN_OPTIONS" in environment:
        environment["ASAN_OPTIONS"] += ":detect_leaks=0"
    try:
        return subprocess.run([MPIRUN, "--allow-run-as-root", "--oversubscribe", *launcher,
                               "-np", str(np), GPUBENCH, *args], capture_output=True, text=True,
                              timeout=timeout, env=environment)
    except subprocess.TimeoutExpired as e:
        # Say what the job printed before it hung: which rank, which step.
        def text(b):
            return b.decode(errors="replace") if isinstance(b, bytes) else (b or "")
        raise AssertionError(f"mpirun did not end within {timeout} s; its stderr so far:\n"
                             f"{text(e.stderr)}") from None


def check_aggregates(test, doc, ranks):
    """Every aggregate agrees with the per-rank results it summarizes."""
    test.assertEqual(doc["aggregate"]["ranks"], ranks)
    points = doc["aggregate"]["points"]
    for point in points:
        members = [r for r in doc["results"] if r["benchmark"] == point["benchmark"]
                   and r["params"] == point["params"]]
        test.assertEqual(len(members), ranks)
        test.assertEqual(sorted(r["rank"] for r in members), list(range(ranks)))
        for agg in point["measurements"]:
            ms = [m for r in members for m in r["measurements"] if m["name"] == agg["name"]]
            test.assertEqual(agg["ranks"], len(ms))
            medians = [m["stats"]["median"] for m in ms]
            test.assertAlmostEqual(agg["median_s"]["min"], min(medians))
            test.assertAlmostEqual(agg["median_s"]["max"], max(medians))
            test.assertAlmostEqual(agg["median_s"]["median"], statistics.median(medians))
            test.assertAlmostEqual(agg["straggler_ratio"], max(medians) / statistics.median(medians))
            for key, spread in agg["rates"].items():
                test.assertAlmostEqual(spread["sum"] / sum(m["rates"][key] for m in ms), 1.0)
        test.assertGreaterEqual(point["start_skew_s"], 0)
    return points


@unittest.skipIf(MPIRUN is None, "mpirun is not installed (apt-get install openmpi-bin)")
class MpiTest(unittest.TestCase):
    def setUp(self):
        if not mpi_built_in():
            self.skipTest("this gpubench was built without MPI")

    def test_four_ranks_give_one_merged_file(self):
        with tempdir() as d:
            out = os.path.join(d, "merged.json")
            p = mpirun(4, "vecadd", "--cpu-only", "--n", "64Ki,128Ki", *FAST,
                       "--format", "json", "--output", out)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(out, encoding="utf-8") as f:
                doc = json.load(f)
            validate(doc)
            # Rank 0 alone printed: stdout is one JSON document, the same job.
            self.assertEqual(json.loads(p.stdout)["aggregate"], doc["aggregate"])
            self.assertEqual([r["rank"] for r in doc["ranks"]], [0, 1, 2, 3])
            self.assertTrue(all(r["status"] == "ok" for r in doc["ranks"]))
            self.assertEqual(len(doc["results"]), 8)
            self.assertEqual(doc["aggregate"]["mode"], "mpi")
            self.assertEqual(doc["aggregate"]["nodes"], 1)
            self.assertEqual(doc["aggregate"]["ranks_sharing_a_gpu"], 0)
            self.assertEqual(len(check_aggregates(self, doc, 4)), 2)
            self.assertIn("clock_rtt_s", doc["ranks"][1])
            # report shows the ranks and the aggregates; plot.py draws the rank x measurement map.
            shown = run("report", out)
            self.assertEqual(shown.returncode, 0, shown.stderr)
            self.assertIn("Multi-GPU (mpi): 4 ranks on 1 node", shown.stdout)
            self.assertIn("rank 3", shown.stdout)
            plots = os.path.join(d, "plots")
            drawn = subprocess.run([PLOT_PYTHON, os.path.join(SOURCE_DIR, "scripts", "plot.py"), out,
                                    "--out", plots], capture_output=True, text=True, timeout=120)
            if "no module 'matplotlib'" not in drawn.stderr:  # plot.py's message without it
                self.assertEqual(drawn.returncode, 0, drawn.stderr)
                self.assertGreater(os.path.getsize(os.path.join(plots, "multi-gpu-heatmap.png")),
                                   1000)
            # compare matches rank by rank; a job of another shape is refused unless --force.
            same = run("compare", out, out)
            self.assertEqual(same.returncode, 0, same.stderr)
            self.assertIn("rank 3", same.stdout)
            two = os.path.join(d, "two.json")
            p2 = mpirun(2, "vecadd", "--cpu-only", "--n", "64Ki,128Ki", *FAST, "-q",
                        "--output", two)
            self.assertEqual(p2.returncode, 0, p2.stderr)
            refused = run("compare", out, two)
            self.assertEqual(refused.returncode, 2)
            self.assertIn("jobs of different shapes", refused.stderr)
            # Forced, the two ranks both jobs have are compared: half of the 4-rank baseline, so the
            # coverage floor (compare --min-compared, 90% by default) is lowered to match.
            forced = run("compare", out, two, "--force", "--min-compared", "50%")
            self.assertIn(forced.returncode, (0, 1), forced.stderr)

    def test_each_rank_records_the_cpus_its_binding_allows(self):
        # Bound to one core each, a rank's CPU rows run on one thread, and its record says so;
        # unbound, every CPU the test may use.
        allowed = len(os.sched_getaffinity(0))
        if allowed < 2:
            self.skipTest("needs 2 usable CPUs to bind 2 ranks to one core each")
        args = ("vecadd", "--cpu-only", "--n", "64Ki", *FAST, "--format", "json")
        bound = mpirun(2, *args, launcher=("--bind-to", "core"))
        self.assertEqual(bound.returncode, 0, bound.stderr)
        doc = json.loads(bound.stdout)
        validate(doc)
        self.assertEqual([r["cores_usable"] for r in doc["ranks"]], [1, 1])
        self.assertEqual(doc["meta"]["host"]["cores_usable"], 1)
        self.assertIn("may run on 1 of the", bound.stderr)  # rank 0 says so; the others are silent
        self.assertEqual(bound.stderr.count("may run on"), 1)
        free = mpirun(2, *args, launcher=("--bind-to", "none"))
        self.assertEqual(free.returncode, 0, free.stderr)
        self.assertEqual([r["cores_usable"] for r in json.loads(free.stdout)["ranks"]],
                         [allowed, allowed])
        self.assertNotIn("may run on", free.stderr)

    def test_a_run_file_under_mpirun_merges_too(self):
        with tempdir() as d:
            plan = os.path.join(d, "plan.json")
            with open(plan, "w", encoding="utf-8") as f:
                json.dump({"name": "mpi", "options": {"cpu_only": True},
                           "benchmarks": [{"benchmark": "vecadd", "params": {"n": "32Ki"}},
                                          {"benchmark": "augment", "params": {"batch": 1}}]}, f)
            out = os.path.join(d, "merged.json")
            p = mpirun(3, "run", plan, *FAST, "--output", out, "-q")
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(out, encoding="utf-8") as f:
                doc = json.load(f)
            validate(doc)
            self.assertEqual(len(doc["ranks"]), 3)
            self.assertEqual(len(doc["results"]), 6)
            points = check_aggregates(self, doc, 3)
            self.assertEqual([p["benchmark"] for p in points], ["vecadd", "augment"])

    def test_a_rank_that_stops_answering_is_reported_and_the_job_ends(self):
        with tempdir() as d:
            out = os.path.join(d, "merged.json")
            started = time.monotonic()
            p = mpirun(3, "vecadd", "--cpu-only", "--n", "1Ki,2Ki,4Ki", *FAST,
                       "--sync-timeout", "2", "--output", out,
                       env={"GPUBENCH_MPI_TEST_FAIL": "1:2:stall"}, timeout=60)
            elapsed = time.monotonic() - started
            self.assertNotEqual(p.returncode, 0)
            self.assertLess(elapsed, 45, "the job should end soon after the 2 s timeout")
            self.assertIn("rank 1 did not reach point 2 within 2 s", p.stderr)
            with open(out, encoding="utf-8") as f:
                doc = json.load(f)
            validate(doc)
            self.assertTrue(doc["meta"]["incomplete"])
            self.assertEqual([r["status"] for r in doc["ranks"]], ["ok", "lost", "ok"])
            self.assertIn("did not reach point 2", doc["ranks"][1]["reason"])
            # The first point, finished by everyone before the stall, is kept for ranks 0 and 2.
            self.assertEqual(sorted(r["rank"] for r in doc["results"]), [0, 2])

    def test_sigterm_ends_ranks_waiting_on_a_long_sync_timeout(self):
        # Rank 1 stops answering; the others wait for it with a 600 s timeout. A SIGTERM to the
        # launcher (a CI timeout, Slurm) must end every rank now, not after 600 s.
        environment = {**os.environ, "GPUBENCH_MPI_TEST_FAIL": "1:2:stall"}
        if "ASAN_OPTIONS" in environment:
            environment["ASAN_OPTIONS"] += ":detect_leaks=0"
        proc = subprocess.Popen([MPIRUN, "--allow-run-as-root", "--oversubscribe", "-np", "3",
                                 GPUBENCH, "vecadd", "--cpu-only", "--n", "1Ki,2Ki,4Ki", *FAST,
                                 "--sync-timeout", "600"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=environment)
        # Wait for rank 1 to stall (not a fixed sleep: on a loaded machine it can take a while),
        # then send SIGTERM.
        seen = []
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            ready, _, _ = select.select([proc.stderr], [], [], 1)
            if ready:
                line = proc.stderr.readline()
                if not line:
                    break
                seen.append(line)
                if "stopping to answer" in line:
                    break
        self.assertIn("stopping to answer", "".join(seen))
        started = time.monotonic()
        proc.terminate()
        try:
            _, err = proc.communicate(timeout=40)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            self.fail("the ranks did not end within 40 s of SIGTERM")
        self.assertLess(time.monotonic() - started, 40)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("interrupted (SIGTERM)", "".join(seen) + err)

    def test_a_rank_that_crashes_ends_the_job_with_an_error(self):
        started = time.monotonic()
        p = mpirun(2, "vecadd", "--cpu-only", "--n", "1Ki,2Ki", *FAST, "--sync-timeout", "5",
                   env={"GPUBENCH_MPI_TEST_FAIL": "1:2:abort"}, timeout=60)
        self.assertNotEqual(p.returncode, 0)
        self.assertLess(time.monotonic() - started, 45)
        # The launcher ends the job and names the rank; the rank's own last words may be cut
        # off by the abort, so either is enough.
        self.assertRegex(p.stderr, r"aborting before point 2|rank 1 .*signal 6|Aborted")

    def test_version_says_mpi_is_built_in(self):
        self.assertIn("MPI: built in (", run("--version").stdout)


@unittest.skipIf(MPIRUN is None, "mpirun is not installed (apt-get install openmpi-bin)")
class NoMpiBuildTest(unittest.TestCase):
    """A build without MPI under mpirun would have every process write the same file; it stops.
    With an MPI build, GPUBENCH_TEST_PRETEND_NO_MPI=1 takes that build's path."""

    def test_a_build_without_mpi_refuses_to_run_under_mpirun(self):
        p = mpirun(2, "vecadd", "--cpu-only", "--n", "1Ki", *FAST,
                   env={"GPUBENCH_TEST_PRETEND_NO_MPI": "1"})
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("built without MPI, but Open MPI started it as one of 2 processes",
                      p.stderr)


class LauncherEnvironmentTest(unittest.TestCase):
    """Detected from the launcher's environment alone (no mpirun needed)."""

    def test_srun_and_pmi_environments_are_recognised(self):
        for env in ({"SLURM_PROCID": "0", "SLURM_STEP_NUM_TASKS": "4"},
                    {"PMI_SIZE": "2", "PMI_RANK": "0"}):
            p = run("vecadd", "--cpu-only", "--n", "1Ki", *FAST,
                    env={**env, "GPUBENCH_TEST_PRETEND_NO_MPI": "1"})
            self.assertEqual(p.returncode, 2, (env, p.stderr))
            self.assertIn("built without MPI", p.stderr)

    def test_an_sbatch_script_without_srun_is_one_process(self):
        p = run("vecadd", "--cpu-only", "--n", "1Ki", *FAST, "-q",
                env={"SLURM_PROCID": "0", "SLURM_NTASKS": "4",
                     "GPUBENCH_TEST_PRETEND_NO_MPI": "1"})
        self.assertEqual(p.returncode, 0, p.stderr)


if __name__ == "__main__":
    unittest.main()
