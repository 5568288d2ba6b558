"""The sandbox runner: what a program sees and gets, runtimes, the unsandboxed mode, and a clear refusal
when bubblewrap cannot run. The attacks are in test_attacks.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import sandbox.runner
from sandbox import (
    Bind,
    Limits,
    RuntimeProblem,
    SandboxUnavailable,
    choose_runtime,
    image_warning,
    parse_runtimes,
    run,
    runtime_at,
    server_runtime,
)
from tests.sandbox.support import TEST_LIMITS, readable_sandbox, run_script


def test_program_sees_its_binds_and_a_clean_system(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "in.txt").write_text("hello")
    run = run_script(
        tmp_path / "run",
        """
        import json, os, sys
        json.dump({
            "cwd": os.getcwd(), "data": open("/app/input/in.txt").read(), "root": sorted(os.listdir("/")),
            "app": sorted(os.listdir("/app")), "uid": os.getuid(), "tmp": os.access("/tmp", os.W_OK),
            "python": sys.executable, "argv": sys.argv[1:],
        }, open("/app/output/report.json", "w"))
        print("to stdout"); print("to stderr", file=sys.stderr)
        """,
        args=["a b", "$HOME"],
        binds=[Bind(data, "/app/input")],
    )
    assert run.result.ok and run.result.exit_code == 0
    report = run.report()
    assert report["cwd"] == "/app/program" and report["data"] == "hello"
    assert report["app"] == ["input", "output", "program"]
    system = {"app", "bin", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc", "sbin", "tmp", "usr", "runtime"}
    assert set(report["root"]) <= system  # the runtime is seen at /runtime, not at its host paths
    assert report["argv"] == ["a b", "$HOME"]  # arguments are passed as they are, not through a shell
    assert report["tmp"] is True and report["python"] == "/runtime/bin/python3"
    assert report["uid"] != 0
    assert run.result.stdout == b"to stdout\n" and run.result.stderr == b"to stderr\n"


def test_exit_status_and_signals_are_reported(tmp_path: Path) -> None:
    exited = run_script(tmp_path / "a", "raise SystemExit(3)")
    assert exited.result.exit_code == 3 and exited.result.describe() == "it exited with status 3"
    killed = run_script(tmp_path / "b", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)")
    assert killed.result.exit_code is None and killed.result.signal == 11
    assert "segmentation fault" in killed.result.describe()


def test_runtime_bin_comes_first_on_path(tmp_path: Path) -> None:
    env = tmp_path / "runtime"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    runtime = runtime_at(env)
    assert runtime.root == env.resolve()
    (tmp_path / "out").mkdir()
    (tmp_path / "logs").mkdir()
    result = run(
        ["/bin/sh", "-c", "command -v python; python -c 'import sys; print(sys.prefix)' > /app/output/prefix"],
        [Bind(tmp_path / "out", "/app/output", writable=True)],
        cwd="/",
        logs=tmp_path / "logs",
        limits=TEST_LIMITS,
        runtime=runtime,
    )
    assert result.ok, result.stderr
    assert result.stdout.decode().strip() == "/runtime/bin/python"
    assert (tmp_path / "out" / "prefix").read_text().strip() == "/runtime"


def test_runtime_table() -> None:
    table = parse_runtimes('{"codalab/codalab-legacy:py37": "/srv/py37", "*": "/srv/default"}')
    assert table == {"codalab/codalab-legacy:py37": Path("/srv/py37"), "*": Path("/srv/default")}
    assert image_warning("codalab/codalab-legacy:py37", table) is None
    assert "codalab/other" in (image_warning("codalab/other", table) or "")
    assert parse_runtimes("") == {}
    for bad in ("[1]", '{"x": "relative/path"}', '{"x": 3}', "{not json"):
        with pytest.raises(RuntimeProblem):
            parse_runtimes(bad)
    runtime, warning = choose_runtime("codalab/unknown", {})
    assert runtime == server_runtime() and warning and "server's own" in warning
    with pytest.raises(RuntimeProblem, match="does not exist"):
        choose_runtime("x", {"x": Path("/nowhere/at/all")})


def test_unsandboxed_mode_runs_with_host_paths_and_limits(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "logs").mkdir()
    result = run(
        ["/bin/sh", "-c", "echo done > /app/output/x; grep 'Max processes' /proc/self/limits"],
        [Bind(tmp_path / "out", "/app/output", writable=True)],
        cwd="/app/output",
        logs=tmp_path / "logs",
        limits=Limits(processes=77),
        isolation="none",
    )
    assert result.ok, result.stderr
    assert (tmp_path / "out" / "x").read_text() == "done\n"
    assert result.stdout.split()[2:4] == [b"77", b"77"]


def test_bwrap_that_cannot_run_is_a_clear_refusal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "bwrap").write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    (fake / "bwrap").chmod(0o755)
    monkeypatch.setattr(sandbox.runner, "BWRAP_ENV", {"PATH": str(fake)})
    monkeypatch.setattr(sandbox.runner, "_probed", set())
    with pytest.raises(SandboxUnavailable, match=r"No permissions to create new namespace.*PODIUM_PROGRAM_SANDBOX"):
        run_script(tmp_path / "run", "print(1)")
    monkeypatch.setattr(sandbox.runner, "BWRAP_ENV", {"PATH": str(tmp_path / "empty")})
    with pytest.raises(SandboxUnavailable, match="not installed"):
        run_script(tmp_path / "run", "print(1)")


UNPRIVILEGED_DRIVER = """
import json, sys, tempfile
from pathlib import Path
from sandbox import Bind, Limits, SandboxUnavailable, run, runtime_at
root = Path(tempfile.mkdtemp())
out, logs = root / "out", root / "logs"
out.mkdir(); logs.mkdir()
report = {}
def attempt(name, script, runtime=None, **limits):
    result = run(["python3", "-c", script], [Bind(out, "/app/output", writable=True)], cwd="/app/output",
                 logs=logs, limits=Limits(**{"wall_seconds": 5, "require_cgroup": False, **limits}),
                 runtime=runtime or runtime_at("/usr"))
    report[name] = {"ok": result.ok, "timed_out": result.timed_out, "stdout": result.stdout.decode()}
attempt("network", "import socket\\ntry:\\n socket.create_connection(('127.0.0.1', 5432), 1); print('connected')\\n"
        "except OSError: print('refused')")
attempt("fork", "import os\\nn = 0\\ntry:\\n while n < 1000:\\n  pid = os.fork()\\n  if pid == 0: os._exit(0) if False "
        "else __import__('time').sleep(30)\\n  n += 1\\nexcept OSError: print(n)", processes=20)
attempt("write", "import os\\nfor p in ['/usr/x', '/x', '/etc/x']:\\n try: open(p, 'w'); print('wrote', p)\\n"
        " except OSError: pass\\nopen('/app/output/y', 'w').write('y'); print('done')")
attempt("userns", "import subprocess\\nnested = subprocess.run(['unshare', '-U', 'true']).returncode == 0\\n"
        "print('nested' if nested else 'refused')")
data = root / "data"  # a read-only folder too
data.mkdir()
(data / "gold.txt").write_text("gold")
shown = run(["python3", "-c", "print(open('/app/input/gold.txt').read()); print(open('/proc/self/mountinfo').read())"],
            [Bind(out, "/app/output", writable=True), Bind(data, "/app/input")], cwd="/app/output", logs=logs,
            limits=Limits(wall_seconds=5, require_cgroup=False), runtime=runtime_at("/usr"))
report["mounts"] = {"ok": shown.ok, "stdout": shown.stdout.decode()}
report["out"] = str(out)
private = root / "private-runtime"  # a runtime this user may enter but not read
(private / "bin").mkdir(parents=True)
(private / "bin" / "python3").symlink_to("/usr/bin/python3")
private.chmod(0o311)
try:
    attempt("private", "print(1)", runtime=runtime_at(private))
except SandboxUnavailable as exc:
    report["private"] = str(exc)
try:  # no cgroup of its own for this user: refused unless allowed
    run(["true"], [], cwd="/", logs=logs, limits=Limits(wall_seconds=5), runtime=runtime_at("/usr"))
    report["cgroup"] = "ran"
except SandboxUnavailable as exc:
    report["cgroup"] = str(exc)
print(json.dumps(report))
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="the other tests run the sandbox unprivileged already")
def test_unprivileged_runner() -> None:
    """The same sandbox when the runner is not root: bwrap's own user namespace, limits inside it."""
    python = Path("/usr/bin/python3")
    if not python.exists():
        pytest.skip("no system /usr/bin/python3 to run the stdlib-only runner as another user")
    with readable_sandbox() as libraries:
        done = subprocess.run(
            [str(python), "-c", textwrap.dedent(UNPRIVILEGED_DRIVER)],
            user=65534,
            group=65534,
            extra_groups=[],
            env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(libraries), "TMPDIR": "/tmp", "HOME": "/tmp"},
            cwd="/",
            capture_output=True,
            timeout=120,
            check=False,
        )
    assert done.returncode == 0, done.stderr.decode()
    report = json.loads(done.stdout)
    assert report["network"]["stdout"].strip() == "refused"
    assert int(report["fork"]["stdout"].strip()) < 20
    assert report["write"]["stdout"].strip() == "done"
    assert report["userns"]["stdout"].strip() == "refused"
    # Its output folder is an overlay mounted in a user namespace of the run's (sandbox/overlays.py): the mount
    # table does not give its host path.
    shown = report["mounts"]["stdout"]
    assert report["mounts"]["ok"] and shown.startswith("gold\n"), shown
    for target in ("/app/output", "/app/input"):
        (line,) = [line for line in shown.splitlines() if f" {target} " in line]
        assert line.split()[3:5] == ["/", target] and " - overlay podium " in line, line
    assert Path(report["out"]).parent.name not in shown, shown  # the host folders' random name
    assert "cannot read the runtime" in report["private"] and "private-runtime" in report["private"]
    assert "cannot be made" in report["cgroup"] and "PODIUM_SANDBOX_ALLOW_NO_CGROUP=true" in report["cgroup"]
