"""`devices --help` states the default it uses: every device, not the measuring commands' 0."""
import re
import unittest

from gpubench_cli import run


class DevicesHelp(unittest.TestCase):
    def test_device_default_is_all(self):
        r = run("devices", "--help")
        self.assertEqual(r.returncode, 0)
        self.assertRegex(r.stdout, re.compile(r"--device\b[^\n]*=all\b"))

    def test_measuring_commands_default_to_device_0(self):
        for sub in ("vecadd", "stream"):
            self.assertRegex(run(sub, "--help").stdout, re.compile(r"--device\b[^\n]*=0\b"), sub)


if __name__ == "__main__":
    unittest.main()
