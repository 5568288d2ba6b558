"""Real processes for the distributed tests: ``podium worker`` subprocesses, a private
``redis-server`` that a test may stop and start, and a TCP proxy that cuts the database off.

Nothing here touches the machine's shared services: a test stops only what it started.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from tests.conftest import ROOT, environment_without_settings

#: The ``podium`` command of this environment (what the Dockerfile and compose.yaml run).
PODIUM = str(Path(sys.executable).with_name("podium"))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for(condition: Callable[[], bool], timeout: float, what: str, interval: float = 0.1) -> None:
    """Poll ``condition`` until it holds; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)


def pids_of(worker: str) -> tuple[int, int]:
    """The worker process and its pool child in a ``worker`` column of a Celery worker
    (``host:workerpid/childpid``)."""
    main, child = worker.rsplit(":", 1)[1].split("/")
    return int(main), int(child)


def pid_of(worker: str) -> int:
    """The worker process in a ``worker`` column of a Celery worker."""
    return pids_of(worker)[0]


def podium_env(settings: Mapping[str, str]) -> dict[str, str]:
    """This environment without any ``PODIUM_*`` of its own, plus ``settings`` (``PODIUM_...`` names);
    the checkout is on the path so that the test plugins import."""
    env = environment_without_settings()
    env.update(settings)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    return env


class WorkerProcess:
    """``podium worker ARGS`` in a session of its own (so SIGKILL reaches its pool children too),
    its output in a log file."""

    def __init__(self, args: list[str], env: Mapping[str, str], log: Path) -> None:
        self.log = log
        self._out = log.open("wb")
        self.process = subprocess.Popen(
            [PODIUM, "worker", *args],
            cwd=ROOT,
            env=dict(env),
            stdout=self._out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    @property
    def pid(self) -> int:
        return self.process.pid

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def wait_ready(self, timeout: float = 90) -> WorkerProcess:
        """Wait for Celery's "ready." line (the sweeper starts then too)."""

        def ready() -> bool:
            if self.process.poll() is not None:
                raise AssertionError(f"the worker exited with {self.process.returncode}:\n{self.output()[-4000:]}")
            return " ready." in self.output()

        wait_for(ready, timeout, f"the worker to be ready; its log:\n{self.output()[-4000:]}")
        return self

    def owns(self, pid: int) -> bool:
        """Whether ``pid`` is this worker or one of its pool's children."""
        try:
            return os.getpgid(pid) == self.process.pid
        except ProcessLookupError:
            return False

    def kill(self) -> None:
        """SIGKILL to the worker and its children at once: no warm shutdown, no acknowledgement."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(30)
        self._out.close()

    def terminate(self) -> None:
        """SIGTERM: Celery's warm shutdown (running jobs finish); ``stop`` waits for it."""
        if self.process.poll() is None:
            self.process.terminate()

    def stop(self) -> None:
        """SIGTERM (Celery's warm shutdown), then SIGKILL to whatever is left of the group."""
        if self.process.poll() is None:
            self.process.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(30)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        if self.process.poll() is None:
            self.process.wait(30)
        self._out.close()


class RedisServer:
    """A private ``redis-server`` on a free port, without persistence: stopping it loses its messages."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        args = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        self.process = subprocess.Popen(
            [*args, "--dir", str(self.folder)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        wait_for(self._answers, 20, f"redis-server on port {self.port}")

    def _answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as connection:
                connection.sendall(b"PING\r\n")
                return connection.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(20)
        self.process = None


class ServeProcess:
    """``podium serve --host 127.0.0.1 --port PORT --no-migrate`` (compose's web command) as a real
    process, its output in a log file."""

    def __init__(self, env: Mapping[str, str], log: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        self._out = log.open("wb")
        self.process = subprocess.Popen(
            [PODIUM, "serve", "--host", "127.0.0.1", "--port", str(self.port), "--no-migrate"],
            cwd=ROOT,
            env=dict(env),
            stdout=self._out,
            stderr=subprocess.STDOUT,
        )

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def wait_ready(self, timeout: float = 90) -> ServeProcess:
        def up() -> bool:
            if self.process.poll() is not None:
                raise AssertionError(f"podium serve exited with {self.process.returncode}:\n{self.output()[-4000:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as connection:
                    connection.sendall(b"GET /healthz HTTP/1.0\r\n\r\n")
                    return b" 200 " in connection.recv(64)
            except OSError:
                return False

        wait_for(up, timeout, "podium serve to answer /healthz", interval=0.2)
        return self

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(30)
        self._out.close()


class TcpProxy:
    """A TCP relay from a local port to ``target``; ``cut()`` drops every connection and refuses new
    ones (the database is unreachable), ``restore()`` listens again on the same port. With
    ``lose_answers=N`` the first N answers never arrive: when the target first answers on one of the
    first N connections, both ends of that connection are closed instead (the request was handled,
    the client never hears how).

    Written by hand because it is a few threads copying bytes; what matters is that the client sees a
    real refused or broken connection, as it would when the database's machine goes away.
    """

    def __init__(self, target: tuple[str, int], *, lose_answers: int = 0) -> None:
        self.target = target
        self.lose_answers = lose_answers
        self.port = free_port()
        self._lock = threading.Lock()
        self._sockets: set[socket.socket] = set()
        self._listener: socket.socket | None = None
        self.restore()

    def restore(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), name="proxy-accept", daemon=True).start()

    def cut(self) -> None:
        with self._lock:
            listener, self._listener = self._listener, None
            doomed = list(self._sockets)
            self._sockets.clear()
        if listener is not None:
            listener.close()
        for sock in doomed:
            _close(sock)

    def close(self) -> None:
        self.cut()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:  # the listener was closed by cut()
                return
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                _close(client)
                continue
            upstream.settimeout(None)
            with self._lock:
                if self._listener is not listener:  # cut meanwhile
                    _close(client)
                    _close(upstream)
                    return
                self._sockets.update((client, upstream))
                lose = self.lose_answers > 0
                self.lose_answers -= int(lose)
            threading.Thread(target=self._pump, args=(client, upstream), name="proxy-pump", daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, lose), name="proxy-pump", daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, lose: bool = False) -> None:
        try:
            while data := source.recv(65536):
                if lose:  # the answer is lost: close both ends (finally) without passing it on
                    break
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                with self._lock:
                    self._sockets.discard(sock)
                _close(sock)


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()
