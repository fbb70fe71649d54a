"""The `gpubench` console entry point of the pip wheel: finds the executable installed beside
this file and runs it, after checking that the CUDA runtime it links against is installed."""

import os
import sys
from pathlib import Path

# The CUDA major release the executable is built against (pyproject.toml pins the wheels).
_CUDA_MAJOR = "13"
_REQUIRED = [
    # (folder under site-packages, library, what it is, pip package providing it): the
    # executable's loader needs these before main (pyproject.toml makes them dependencies); cuBLAS
    # is loaded by gpubench itself when a workload needs it, and it names the package.
    (f"nvidia/cu{_CUDA_MAJOR}/lib", f"libcudart.so.{_CUDA_MAJOR}", "the CUDA runtime",
     "nvidia-cuda-runtime==13.0.*"),
    ("scipy_openblas32/lib", "libscipy_openblas.so", "OpenBLAS, gemm's CPU row",
     "scipy-openblas32>=0.3.27"),
]


def _executable() -> Path:
    return Path(__file__).resolve().parent / "bin" / "gpubench"


def main() -> None:
    exe = _executable()
    site = exe.parent.parent.parent
    for folder, library, what, package in _REQUIRED:
        lib_dir = site / folder
        if not (lib_dir / library).exists():
            sys.stderr.write(
                f"Error: {library} ({what}) was not found in {lib_dir}. "
                f"Install it with: pip install '{package}'\n"
            )
            sys.exit(77)
    if not exe.exists():
        sys.stderr.write(f"Error: the gpubench executable is missing ({exe}); reinstall gpubench\n")
        sys.exit(2)
    # --format html runs gpubench.html_report with this interpreter: the one whose environment
    # holds this package and, with the [html] extra, matplotlib.
    os.environ.setdefault("GPUBENCH_PYTHON", sys.executable)
    os.execv(str(exe), [str(exe)] + sys.argv[1:])
