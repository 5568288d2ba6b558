"""Running a snippet in processes whose BLAS has one thread and two: what a result must not depend on."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

#: BLAS runs one thread on a machine of one core: nothing to compare there.
needs_two_cores = pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="BLAS runs one thread on a machine of one core")


def outputs_by_blas_threads(code: str) -> dict[str, str]:
    """What ``code`` prints, run from the checkout's root with ``OPENBLAS_NUM_THREADS`` (read as the library loads)
    at 1 and at 2, by that number."""
    root = Path(__file__).resolve().parents[3]
    return {
        threads: subprocess.run(
            [sys.executable, "-c", code],
            cwd=root,
            env={**os.environ, "OPENBLAS_NUM_THREADS": threads, "OMP_NUM_THREADS": threads},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for threads in ("1", "2")
    }
