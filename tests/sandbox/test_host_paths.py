"""What a sandboxed program can learn of the host's layout: no path of the runtime, the checkout or the run's
folders, no other process, and a runtime the sandbox's user cannot read refused with a clear reason."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox import Bind, SandboxUnavailable, run, runtime_at, server_runtime
from tests.conftest import ROOT
from tests.sandbox.support import TEST_LIMITS, run_script

LOOK = """
    import json, os
    seen = {"cmdline": open("/proc/1/cmdline", "rb").read().decode(errors="replace"),
            "proc": sorted(os.listdir("/proc")), "root": sorted(os.listdir("/")), "paths": []}
    # The mount table; its fourth field is the source's path inside its own file system (below).
    seen["mounts"] = [line.split() for line in open("/proc/self/mountinfo")]
    seen["pids"] = [p for p in seen["proc"] if p.isdigit()]
    seen["cmdlines"] = {p: open(f"/proc/{p}/cmdline", "rb").read().decode(errors="replace") for p in seen["pids"]}
    skip = ("/proc", "/sys", "/dev", "/usr", "/runtime/lib", "/runtime/base")
    for top, dirs, files in os.walk("/"):
        if top.startswith(skip):
            dirs[:] = []
            continue
        seen["paths"] += [os.path.join(top, name) for name in dirs + files]
    seen["tmp"] = [os.path.join(top, n) for top, dirs, files in os.walk("/tmp") for n in dirs + files]
    json.dump(seen, open("/app/output/report.json", "w"))
"""
#: Names the sandbox uses itself, whatever the host's paths.
OWN = {"", "tmp", "usr", "lib", "lib64", "bin", "app", "runtime", "base", "program", "output", "input"}


def _host_names(tmp_path: Path) -> set[str]:
    """Every component of the host paths a program must not learn: runtime, checkout and temporary folders."""
    paths = [*server_runtime().folders, ROOT, tmp_path, Path(sys.prefix).resolve()]
    return {part for path in paths for part in path.parts[1:]} - OWN


def _tokens(text: str) -> set[str]:
    return set(re.split(r"[/\s\x00=,:]+", text))


def test_program_learns_no_host_path_and_sees_only_its_processes(tmp_path: Path) -> None:
    run = run_script(tmp_path / "run", LOOK)
    assert run.result.ok, run.result.stderr
    seen = run.report()
    hidden = _host_names(tmp_path)
    assert {"work", "main", "pytest-of-root"} & hidden or len(hidden) > 2  # the check has something to find
    # The mount points and options name no host path. The source's path inside its file system (the fourth
    # field) is the kernel's to show for any bind mount: only a runtime and work folders at neutral host
    # paths hide it (examples/README.md).
    mounts = " ".join(" ".join(fields[4:]) for fields in seen["mounts"])
    for what in (seen["cmdline"], *seen["cmdlines"].values(), mounts, *seen["proc"], *seen["root"]):
        assert not _tokens(what) & hidden, what
    for path in seen["paths"] + seen["tmp"]:
        assert not _tokens(path) & hidden, path
    assert seen["tmp"] == []  # an empty /tmp of its own
    assert any(fields[4] == "/runtime/lib" for fields in seen["mounts"])
    # Its own processes alone: the namespace's first process (bwrap) and the program.
    assert len(seen["pids"]) <= 2 and "1" in seen["pids"]
    assert seen["cmdline"].split("\x00")[:3] == ["bwrap", "--args", seen["cmdline"].split("\x00")[2]]


@pytest.mark.skipif(os.geteuid() != 0, reason="only a root runner gives programs a user of their own")
def test_a_runtime_the_sandbox_user_cannot_read_is_refused_clearly(tmp_path: Path) -> None:
    env = tmp_path / "private-runtime"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    site = next((env / "lib").glob("python3*/site-packages"))
    (site / "secret_module.py").write_text("x = 1\n")
    (site / "secret_module.py").chmod(0o600)
    (tmp_path / "logs").mkdir()
    with pytest.raises(SandboxUnavailable, match=r"cannot read .*secret_module\.py \(mode 0600\).*o\+rX"):
        run(["true"], [], cwd="/", logs=tmp_path / "logs", limits=TEST_LIMITS, runtime=runtime_at(env))
    (site / "secret_module.py").chmod(0o644)
    done = run(
        ["python3", "-c", "import secret_module"],
        [],
        cwd="/",
        logs=tmp_path / "logs",
        limits=TEST_LIMITS,
        runtime=runtime_at(env),
    )
    assert done.ok, done.stderr


def test_nothing_is_bound_into_the_sandboxs_own_folders(tmp_path: Path) -> None:
    for target in ("/tmp", "/tmp/gold", "/runtime/lib", "/proc/x", "/dev/shm/x"):
        with pytest.raises(ValueError, match="sandbox's own"):
            Bind(tmp_path, target)
    assert Bind(tmp_path, "/tmpdata").target == "/tmpdata"
