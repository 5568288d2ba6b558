"""Podium's processes run numpy's BLAS on one thread unless the operator says otherwise (``app/__init__.py``): the web
application and the workers are started from modules of ``app``, which sets ``OPENBLAS_NUM_THREADS`` before numpy
loads. Each check runs in a fresh interpreter, since this one has loaded numpy already."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: Imports an entry module, then numpy, and prints the BLAS libraries' thread counts as threadpoolctl reads them.
PROBE = (
    "import importlib, sys\n"
    "importlib.import_module(sys.argv[1])\n"
    "import numpy\n"
    "from threadpoolctl import threadpool_info\n"
    "print(sorted({info['num_threads'] for info in threadpool_info() if info['user_api'] == 'blas'}))\n"
)


def blas_threads(module: str, **env: str) -> str:
    # Neither OpenBLAS's variable nor OpenMP's, which OpenBLAS reads when its own is not set.
    environment = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    environment.update(env)
    done = subprocess.run(
        [sys.executable, "-c", PROBE, module], capture_output=True, text=True, cwd=ROOT, env=environment, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="BLAS runs one thread on a machine of one core anyway")
def test_blas_would_use_every_core_without_podium() -> None:
    """What the setting changes: numpy alone starts a BLAS thread per core (up to OpenBLAS's own bound)."""
    assert blas_threads("json") != "[1]"


@pytest.mark.parametrize("module", ["app.main", "app.worker.celery_app", "app.cli"])
def test_podium_s_entry_modules_keep_blas_on_one_thread(module: str) -> None:
    assert blas_threads(module) == "[1]"


def test_an_operator_s_setting_is_kept() -> None:
    assert blas_threads("app.main", OPENBLAS_NUM_THREADS="2") == "[2]"
