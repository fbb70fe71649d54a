"""Soak (docs/reliability.md, "Soak"): a 2,000-point --cpu-only sweep with its journal. Peak RSS
after 2,000 points is at most 1.5x that after 200, the time per point stays flat (the last 200
points within 20% of the first 200 after warm-up), and the final file holds exactly what the
journal held. The figures are printed for CI's log."""
import json
import os
import subprocess
import time
import unittest

from gpubench_cli import FAST, GPUBENCH, tempdir, validate

WARMUP_POINTS = 50


def sweep(points):
    """`points` equal CPU points: vecadd of 1,000 to 999+points elements, one thread."""
    return ["vecadd", "--cpu-only", "--n", f"1000:{999 + points}:1", *FAST, "--cpu-threads", "1",
            "--quiet"]


def peak_rss_kib(args, out):
    """Peak RSS of a whole run of `args`, from the kernel's accounting of the child."""
    proc = subprocess.Popen([GPUBENCH, *args, "--output", out], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, for its rusage
    stderr = proc.stderr.read().decode()
    proc.stderr.close()
    return proc.returncode, stderr, usage.ru_maxrss


class Soak(unittest.TestCase):
    def test_two_thousand_points_stay_flat_in_memory_and_time(self):
        with tempdir() as d:
            out200 = os.path.join(d, "s200.json")
            code, stderr, rss200 = peak_rss_kib(sweep(200), out200)
            self.assertEqual(code, 0, stderr)

            out = os.path.join(d, "s2000.json")
            journal = out + ".journal"
            proc = subprocess.Popen([GPUBENCH, *sweep(2000), "--output", out],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            began = time.monotonic()
            handle, chunks = None, []
            while True:
                if handle is None:
                    try:
                        handle = open(journal, "rb")  # pylint: disable=consider-using-with
                    except FileNotFoundError:
                        pass
                if handle is not None:
                    chunks.append(handle.read())
                pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
                if pid != 0:
                    proc.returncode = os.waitstatus_to_exitcode(status)
                    break
                time.sleep(0.02)
            wall = time.monotonic() - began
            self.assertIsNotNone(handle, "the run wrote no journal")
            chunks.append(handle.read())  # the rest, read after the run deleted the journal
            handle.close()
            stderr = proc.stderr.read().decode()
            proc.stderr.close()
            self.assertEqual(proc.returncode, 0, stderr)
            rss2000 = usage.ru_maxrss
            self.assertFalse(os.path.exists(journal), "a finished run removes its journal")

            lines = [json.loads(x) for x in b"".join(chunks).decode().split("\n")[:-1]]
            header, points = lines[0], lines[1:]
            self.assertEqual(header["planned"], 2000)
            self.assertEqual([p["point"] for p in points], list(range(2000)))
            with open(out, encoding="utf-8") as f:
                doc = json.load(f)
            validate(doc)
            self.assertEqual(len(doc["results"]), 2000)
            for p in points:
                self.assertEqual(doc["results"][p["point"]], p["result"],
                                 f"point {p['point']}: the file and the journal differ")

            # Each point's own cost: its line's figures less the previous line's. Wall time per
            # point follows the machine more than gpubench (an fdatasync on a disk shared with
            # builds takes 0.3 ms or a 4 ms journal commit); the process's CPU time is what a
            # point cost gpubench itself, and is what would grow if a point's cost grew with the
            # points before it (a leak, a structure walked whole per point).
            def per_point(key, window):
                values = [p[key] for p in points]
                steps = [b - a for a, b in zip(values, values[1:])]
                return sum(steps[window]) / len(steps[window])

            first_window = slice(WARMUP_POINTS, WARMUP_POINTS + 200)
            last_window = slice(len(points) - 201, len(points) - 1)
            first, last = per_point("cpu_s", first_window), per_point("cpu_s", last_window)
            wall_first, wall_last = per_point("t", first_window), per_point("t", last_window)
            print(f"soak: 2000 points in {wall:.1f} s; peak RSS {rss200} KiB after 200 points, "
                  f"{rss2000} KiB after 2000 ({rss2000 / rss200:.2f}x); CPU time per point "
                  f"{first * 1e3:.3f} ms (points {WARMUP_POINTS + 2}-{WARMUP_POINTS + 201}), "
                  f"{last * 1e3:.3f} ms (points 1801-2000, {last / first:.2f}x); wall time per "
                  f"point {wall_first * 1e3:.3f} ms and {wall_last * 1e3:.3f} ms")
            self.assertLessEqual(rss2000, 1.5 * rss200)
            self.assertLessEqual(last, 1.2 * first, "the CPU time per point grows along the sweep")


if __name__ == "__main__":
    unittest.main()
