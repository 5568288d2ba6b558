"""What a sandboxed program can learn of the host's layout: no path of the runtime, the checkout or the run's
folders, no other process, and a runtime the sandbox's user cannot read refused with a clear reason."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox import Bind, SandboxUnavailable, overlays, run, runtime_at, server_runtime
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
    if not overlays.usable(os.geteuid() == 0):
        pytest.skip("this machine lets no runner make a mount namespace of its own: folders are bound as they are")
    run = run_script(tmp_path / "run", LOOK)
    assert run.result.ok, run.result.stderr
    seen = run.report()
    hidden = _host_names(tmp_path)
    assert {"work", "main", "pytest-of-root"} & hidden or len(hidden) > 2  # the check has something to find
    # The mount points and options name no host path, nor the fourth field, a mount's root inside its file system,
    # which the kernel gives as the source's host path for a bind (the runtime and the run's folders are overlays:
    # sandbox/overlays.py).
    mounts = " ".join(" ".join(fields[3:]) for fields in seen["mounts"])
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


MOUNTS_AGAIN = """
    import json, os, subprocess
    tries = {
        "tmpfs": ["mount", "-n", "-t", "tmpfs", "x", "/tmp"],
        "detach the output": ["umount", "-n", "-l", "/app/output"],
        "bind the program": ["mount", "-n", "--bind", "/app/program", "/tmp"],
    }
    said = {name: subprocess.run(argv, capture_output=True).returncode for name, argv in tries.items()}
    with open("/app/output/report.json", "w") as out:
        json.dump({"said": said, "mounts": open("/proc/self/mountinfo").read()}, out)
"""


def test_the_program_can_neither_mount_nor_undo_the_overlays_and_its_output_lands_in_the_folder(
    tmp_path: Path,
) -> None:
    if not overlays.usable(os.geteuid() == 0):
        pytest.skip("this machine lets no runner make a mount namespace of its own: folders are bound as they are")
    run = run_script(tmp_path / "run", MOUNTS_AGAIN)
    assert run.result.ok, run.result.stderr
    seen = run.report()
    assert all(code != 0 for code in seen["said"].values()), seen["said"]
    assert re.search(r" / /app/output \S+ - overlay podium \S*upperdir=\.", seen["mounts"]), seen["mounts"]
    assert (run.output / "report.json").is_file()  # what it wrote is in the host folder
    assert not [p.name for p in run.output.parent.iterdir() if p.name.startswith(".podium-work")]


@pytest.mark.skipif(os.geteuid() != 0, reason="makes an overlay on the host, which only root may")
def test_a_writable_folder_that_cannot_be_an_upper_layer_is_bound_as_before(tmp_path: Path) -> None:
    """An overlay cannot be an overlay's upper layer: the run's output folder on one is bound instead."""
    layers = [tmp_path / name for name in ("lower", "upper", "work", "merged")]
    for folder in layers:
        folder.mkdir()
    options = f"lowerdir={layers[0]},upperdir={layers[1]},workdir={layers[2]}"
    subprocess.run(["mount", "-t", "overlay", "host", "-o", options, str(layers[3])], check=True)
    try:
        run = run_script(layers[3] / "run", MOUNTS_AGAIN)
        assert run.result.ok, run.result.stderr
        seen = run.report()
        assert re.search(r" /app/output \S+ - overlay host ", seen["mounts"]), seen["mounts"]  # the plain bind
        assert (layers[1] / "run" / "output" / "report.json").is_file()
    finally:
        subprocess.run(["umount", "-l", str(layers[3])], check=True)
