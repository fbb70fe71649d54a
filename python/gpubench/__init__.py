"""The `gpubench` console entry point of the pip wheel: finds the executable installed beside
this file and runs it, after checking that the CUDA runtime it links against is installed."""

import os
import sys
from pathlib import Path

# The CUDA major release the executable is built against (pyproject.toml pins the wheels).
_CUDA_MAJOR = "13"
_REQUIRED = [
    # (library, pip package providing it): the executable's loader needs the runtime before main;
    # cuBLAS is loaded by gpubench itself when the pipeline needs it, and it names the package.
    (f"libcudart.so.{_CUDA_MAJOR}", "nvidia-cuda-runtime==13.0.*"),
]


def _executable() -> Path:
    return Path(__file__).resolve().parent / "bin" / "gpubench"


def main() -> None:
    exe = _executable()
    lib_dir = exe.parent.parent.parent / "nvidia" / f"cu{_CUDA_MAJOR}" / "lib"
    for library, package in _REQUIRED:
        if not (lib_dir / library).exists():
            sys.stderr.write(
                f"Error: {library} (the CUDA runtime) was not found in {lib_dir}. "
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
