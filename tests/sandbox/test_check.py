"""``sandbox.check_available``: what a worker checks as it starts, naming what is missing for programs to run."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests.sandbox.support import readable_sandbox

#: A stdlib-only interpreter the unprivileged user can read (the sandbox package needs nothing else).
PYTHON = shutil.which("python3", path="/usr/bin:/bin")
CHECK = """
from sandbox import SandboxUnavailable, check_available
try:
    check_available(require_cgroup={require})
except SandboxUnavailable as exc:
    print("refused:", exc)
else:
    print("available")
"""

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None or shutil.which("bwrap") is None or PYTHON is None,
    reason="needs root with bubblewrap and setpriv, to check as an unprivileged user",
)


def as_nobody(require: bool) -> str:
    nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    assert PYTHON is not None
    with readable_sandbox() as libraries:
        done = subprocess.run(
            [*nobody, PYTHON, "-c", CHECK.format(require=require)],
            env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(libraries)},
            cwd="/",
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_worker_that_cannot_make_a_runs_cgroup_is_told_so_where_one_is_required() -> None:
    said = as_nobody(require=True)
    assert said.startswith("refused: ") and "cgroup" in said and "PODIUM_SANDBOX_ALLOW_NO_CGROUP" in said, said


def test_where_no_cgroup_is_required_the_sandbox_alone_is_checked() -> None:
    said = as_nobody(require=False)
    # An unprivileged bubblewrap needs user namespaces; where the kernel refuses them, the refusal names bubblewrap.
    assert said == "available" or ("refused: " in said and "bubblewrap" in said), said
