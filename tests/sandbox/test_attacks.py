"""The sandbox against a hostile program: each attack is contained and the test process goes on unharmed.

Every attack runs as a scoring program would (``python3 /app/program/script.py`` with the server's
environment as runtime), reports what it managed to the one folder it may write, and the test checks
both that report and the host: files, processes, environment, disk and network of this process.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import subprocess
import textwrap
import threading
import uuid
from pathlib import Path

import pytest

from sandbox import Bind, Limits, tree_size
from tests.conftest import ROOT
from tests.sandbox.support import TEST_LIMITS, run_script, sandbox_processes

SECRET = "podium-secret-" + uuid.uuid4().hex

SCAN = """
    import json, os, sys
    secret = sys.argv[1]
    found, readable = [], 0
    skip = ("/proc", "/sys", "/dev", "/usr") + tuple(p for p in sys.path if p.startswith("/") and p != "/")
    for top, dirs, files in os.walk("/"):
        if top.startswith(skip):
            dirs[:] = []
            continue
        for name in files:
            path = os.path.join(top, name)
            try:
                with open(path, "rb") as f:
                    data = f.read(10_000_000)
                readable += 1
            except OSError:
                continue
            if secret.encode() in data:
                found.append(path)
    report = {"found": found, "readable": readable}
"""


def _scan_then(source: str) -> str:
    """A script that first looks for the secret in every file it can read, then runs ``source``."""
    return textwrap.dedent(SCAN) + textwrap.dedent(source)


def _host_alive() -> None:
    """What the test process can still do after an attack: start a process and serve a socket."""
    assert subprocess.run(["true"], check=False).returncode == 0
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)


def test_no_network(tmp_path: Path) -> None:
    # A server of this test process on the host's loopback: the sandbox has a loopback of its own.
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    server.settimeout(0.5)
    port = server.getsockname()[1]
    run = run_script(
        tmp_path,
        """
        import json, socket, sys
        report = {}
        targets = {"host-test-server": ("127.0.0.1", int(sys.argv[1])), "postgresql": ("127.0.0.1", 5432),
                   "redis": ("127.0.0.1", 6379), "public-dns": ("8.8.8.8", 53), "pypi": ("pypi.org", 443)}
        for name, address in targets.items():
            try:
                socket.create_connection(address, timeout=2).close()
                report[name] = "connected"
            except OSError as exc:
                report[name] = type(exc).__name__
        try:
            socket.getaddrinfo("pypi.org", 443)
            report["dns"] = "resolved"
        except OSError as exc:
            report["dns"] = type(exc).__name__
        report["interfaces"] = [name for _, name in socket.if_nameindex()]
        json.dump(report, open("/app/output/report.json", "w"))
        """,
        args=[str(port)],
    )
    assert run.result.ok, run.result.stderr
    report = run.report()
    assert "connected" not in report.values() and report["dns"] != "resolved", report
    assert report["interfaces"] == ["lo"]
    with pytest.raises(TimeoutError):
        server.accept()  # nothing ever reached the host's server
    server.close()
    _host_alive()


def test_no_view_of_database_blobs_data_folder_or_checkout(tmp_path: Path) -> None:
    # A database file (the blobs live in it), a data folder and a gold file of this server, outside the run.
    private = tmp_path / "server"
    (private / "data").mkdir(parents=True)
    (private / "podium.sqlite3").write_text(f"SQLite format 3 ... blob {SECRET}")
    (private / "data" / "gold.tsv").write_text(f"uuid\tlabel\n1\t{SECRET}\n")
    probes = [str(private / "podium.sqlite3"), str(private / "data" / "gold.tsv"), str(ROOT / "pyproject.toml")]
    run = run_script(
        tmp_path / "run",
        _scan_then(
            """
        report["opened"] = []
        for path in sys.argv[2:]:
            try:
                open(path).read()
                report["opened"].append(path)
            except OSError:
                pass
        report["checkout"] = os.path.exists(sys.argv[2 + 2].rsplit("/", 1)[0] + "/app")
        json.dump(report, open("/app/output/report.json", "w"))
        """
        ),
        args=[SECRET, *probes],
    )
    assert run.result.ok, run.result.stderr
    report = run.report()
    assert report == {"found": [], "readable": report["readable"], "opened": [], "checkout": False}
    assert report["readable"] > 0  # the scan did read files: the program's own, /etc's few
    _host_alive()


def test_no_view_of_another_competitions_gold_while_it_runs(tmp_path: Path) -> None:
    other = tmp_path / "other"
    (other / "ref").mkdir(parents=True)
    (other / "ref" / "gold.txt").write_text(SECRET)
    holder: dict[str, object] = {}

    def other_run() -> None:  # another competition's program, busy with its gold meanwhile
        holder["run"] = run_script(
            other,
            "import time, shutil; shutil.copy('/app/input/ref/gold.txt', '/tmp/gold.txt'); time.sleep(4)",
            binds=[Bind(other / "ref", "/app/input/ref")],
        )

    thread = threading.Thread(target=other_run)
    thread.start()
    try:
        run = run_script(
            tmp_path / "attacker",
            _scan_then(
                """
            import glob
            report["other_ref"] = os.path.exists(sys.argv[2])
            report["pids"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
            report["tmp"] = os.listdir("/tmp")
            json.dump(report, open("/app/output/report.json", "w"))
            """
            ),
            args=[SECRET, str(other / "ref" / "gold.txt")],
        )
    finally:
        thread.join()
    report = run.report()
    assert report["found"] == [] and report["other_ref"] is False and report["tmp"] == []
    assert len(report["pids"]) <= 3  # bwrap's init, sh/python: nothing of the other run or the host
    assert holder["run"].result.ok  # type: ignore[attr-defined]


def test_clean_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secrets = {
        "PODIUM_SECRET_KEY": "s3cret-" + uuid.uuid4().hex,
        "PODIUM_DATABASE_URL": f"postgresql+psycopg://podium:{uuid.uuid4().hex}@db/podium",
        "AWS_SECRET_ACCESS_KEY": uuid.uuid4().hex,
    }
    for key, value in secrets.items():
        monkeypatch.setenv(key, value)
    run = run_script(
        tmp_path,
        """
        import json, os
        report = {"environ": dict(os.environ), "proc": {}}
        for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
            try:
                report["proc"][pid] = open(f"/proc/{pid}/environ", "rb").read().decode("utf-8", "replace")
            except OSError as exc:
                report["proc"][pid] = type(exc).__name__
        json.dump(report, open("/app/output/report.json", "w"))
        """,
    )
    assert run.result.ok, run.result.stderr
    text = (run.output / "report.json").read_text()
    assert not any(value in text for value in secrets.values())
    assert not any(key in text for key in secrets)
    environ = run.report()["environ"]
    assert set(environ) <= {"PATH", "HOME", "PWD", "LC_CTYPE", "LD_LIBRARY_PATH"}
    assert environ.get("LD_LIBRARY_PATH", "/runtime/").startswith("/runtime/")  # a shared Python's library


def test_no_write_outside_output(tmp_path: Path) -> None:
    ref = tmp_path / "ref"
    ref.mkdir()
    (ref / "gold.txt").write_text("the answers")
    before = hashlib.sha256((ref / "gold.txt").read_bytes()).hexdigest()
    runtime_file = Path(os.__file__)
    run = run_script(
        tmp_path / "run",
        """
        import json, os, sys
        report = {}
        for path in ["/app/program/x", "/app/input/ref/x", "/usr/x", "/x", "/etc/x", "/proc/x", sys.argv[1] + "/x",
                     os.path.dirname(os.__file__) + "/x", sys.prefix + "/x"]:
            try:
                open(path, "w").write("x")
                report[path] = "written"
            except OSError as exc:
                report[path] = type(exc).__name__
        for name, action in [("unlink", lambda: os.unlink("/app/input/ref/gold.txt")),
                             ("chmod", lambda: os.chmod("/app/input/ref/gold.txt", 0o777)),
                             ("rename", lambda: os.rename("/app/input/ref/gold.txt", "/app/output/g")),
                             ("append", lambda: open("/app/input/ref/gold.txt", "a").write("!"))]:
            try:
                action()
                report[name] = "done"
            except OSError as exc:
                report[name] = type(exc).__name__
        open("/app/output/ok", "w").write("ok")
        open("/tmp/ok", "w").write("ok")
        json.dump(report, open("/app/output/report.json", "w"))
        """,
        args=[str(tmp_path)],
        binds=[Bind(ref, "/app/input/ref")],
    )
    assert run.result.ok, run.result.stderr
    report = run.report()
    assert "written" not in report.values() and "done" not in report.values(), report
    assert (run.output / "ok").read_text() == "ok"
    assert hashlib.sha256((ref / "gold.txt").read_bytes()).hexdigest() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ref", "run"]
    assert not (runtime_file.parent / "x").exists()


def test_fork_bomb(tmp_path: Path) -> None:
    run = run_script(
        tmp_path,
        """
        import os, subprocess
        open("/app/output/uid", "w").write(str(os.getuid()))
        subprocess.Popen(["/bin/sh", "-c", ":(){ :|:& };:"])
        while True:
            try:
                os.fork()
            except OSError:
                pass
        """,
        limits=Limits(wall_seconds=5, processes=64, memory_bytes=1024**3),
    )
    assert not run.result.ok and run.result.timed_out
    assert run.result.wall_seconds < 15
    assert sandbox_processes(int((run.output / "uid").read_text())) == []
    _host_alive()


def test_memory_hog(tmp_path: Path) -> None:
    limit = 512 * 1024 * 1024
    run = run_script(
        tmp_path,
        """
        import json
        held, total = [], 0
        try:
            while True:
                held.append(bytearray(64 * 1024 * 1024))  # zero-filled: really allocated
                total += 64 * 1024 * 1024
                json.dump({"allocated": total}, open("/app/output/report.json", "w"))
        except MemoryError:
            json.dump({"allocated": total, "stopped": "MemoryError"}, open("/app/output/report.json", "w"))
            raise
        """,
        limits=Limits(wall_seconds=30, memory_bytes=limit, processes=64),
    )
    assert not run.result.ok and not run.result.timed_out
    assert run.report()["stopped"] == "MemoryError" and run.report()["allocated"] < limit
    assert b"MemoryError" in run.result.stderr
    _host_alive()


def test_endless_loop_and_processes_that_hide(tmp_path: Path) -> None:
    run = run_script(
        tmp_path,
        """
        import os, signal
        open("/app/output/uid", "w").write(str(os.getuid()))
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if os.fork() == 0:
            os.setsid()  # a child in a session of its own, that ignores SIGTERM too
            while True:
                pass
        while True:
            pass
        """,
        limits=TEST_LIMITS.with_wall(2),
    )
    assert run.result.timed_out and not run.result.ok
    assert run.result.wall_seconds < 10
    assert "time limit of 2 seconds" in run.result.describe()
    assert sandbox_processes(int((run.output / "uid").read_text())) == []
    _host_alive()


def test_cpu_limit_ends_a_busy_program_before_its_wall_time(tmp_path: Path) -> None:
    run = run_script(tmp_path, "while True: pass", limits=Limits(wall_seconds=60, cpu_seconds=1))
    assert not run.result.timed_out and run.result.signal is not None
    assert "CPU time" in run.result.describe()


@pytest.mark.parametrize(
    "how",
    [
        "one-file",  # one huge file: stopped by the file size limit
        "many-files",  # many files below it: stopped by the runner's watch
        "stdout",  # the log: a file like any other
    ],
)
def test_ten_gigabytes_of_output(tmp_path: Path, how: str) -> None:
    scripts = {
        "one-file": "f = open('/app/output/big', 'wb')\nfor _ in range(10240): f.write(chunk)",
        "many-files": "for i in range(1024):\n    open(f'/app/output/part{i}', 'wb').write(chunk * 10)",
        "stdout": "import sys\nfor _ in range(10240): sys.stdout.buffer.write(chunk)",
    }
    free_before = shutil.disk_usage(tmp_path).free
    run = run_script(tmp_path, "chunk = b'x' * (1024 * 1024)\n" + scripts[how])
    assert not run.result.ok
    assert run.result.output_exceeded or run.result.signal is not None
    written = tree_size(run.output, 100_000)[0] + (tmp_path / "logs" / "stdout.log").stat().st_size
    # The kernel caps each file at the limit; the watch stops the total within one look (0.1 s) of it.
    assert written < TEST_LIMITS.output_bytes + 512 * 1024 * 1024
    assert shutil.disk_usage(tmp_path).free > free_before - 1024**3
    assert len(run.result.stdout) <= TEST_LIMITS.log_tail_bytes


def test_private_tmp_is_small_and_memory_backed(tmp_path: Path) -> None:
    run = run_script(
        tmp_path,
        """
        import json
        written = 0
        try:
            with open("/tmp/fill", "wb") as f:
                while written < 10 * 1024**3:
                    f.write(b"x" * (1024 * 1024))
                    written += 1024 * 1024
        except OSError as exc:
            json.dump({"written": written, "error": exc.strerror}, open("/app/output/report.json", "w"))
        """,
    )
    assert run.result.ok, run.result.stderr
    assert run.report()["written"] <= TEST_LIMITS.tmp_bytes


def test_no_user_namespace_of_its_own(tmp_path: Path) -> None:
    """A user namespace of its own would let a program mount an unbounded memory-backed file system."""
    run = run_script(
        tmp_path,
        """
        import ctypes, json, subprocess
        libc = ctypes.CDLL(None, use_errno=True)
        report = {
            "unshare": libc.unshare(0x10000000) == 0,
            "command": subprocess.run(["unshare", "-Urm", "sh", "-c", "mount -t tmpfs x /tmp && echo mounted"],
                                      capture_output=True, text=True).stdout,
            "keyring": libc.syscall(248, b"user", b"k", b"v", 1, -3) >= 0,  # add_key to the session keyring
        }
        json.dump(report, open("/app/output/report.json", "w"))
        """,
    )
    assert run.result.ok, run.result.stderr
    report = run.report()
    assert report == {"unshare": False, "command": "", "keyring": False}
