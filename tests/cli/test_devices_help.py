"""`devices --help` states the default it uses: every device, not the measuring commands' 0."""
import re
import unittest

from gpubench_cli import run


# CLI11 2.3 (Debian 12) prints a default as "=all", 2.4 (Ubuntu 24.04) as "[all]".
class DevicesHelp(unittest.TestCase):
    def test_device_default_is_all(self):
        r = run("devices", "--help")
        self.assertEqual(r.returncode, 0)
        self.assertRegex(r.stdout, re.compile(r"--device\b[^\n]*(?:=all\b|\[all\])"))

    def test_measuring_commands_default_to_device_0(self):
        for sub in ("vecadd", "stream"):
            self.assertRegex(run(sub, "--help").stdout, re.compile(r"--device\b[^\n]*(?:=0\b|\[0\])"), sub)


if __name__ == "__main__":
    unittest.main()
