"""A real reverse proxy in front of several ``podium serve`` processes: Debian's haproxy, balancing each
request round robin and naming the process that answered in an ``X-Podium-Backend`` header.

``Makefile``'s ``make test`` installs haproxy where it runs as root (CI); elsewhere the tests that need it
skip, saying so.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
from pathlib import Path

from tests.app.distributed.cluster import free_port, wait_for

HAPROXY = shutil.which("haproxy") or ("/usr/sbin/haproxy" if Path("/usr/sbin/haproxy").is_file() else None)
MISSING = "haproxy is not installed (make test installs it as root; else: sudo apt-get install haproxy)"
#: The response header that names the backend that answered ("web1", "web2", ...).
BACKEND = "X-Podium-Backend"


def config(port: int, backends: list[int]) -> str:
    servers = "\n".join(f"    server web{n} 127.0.0.1:{backend}" for n, backend in enumerate(backends, 1))
    return f"""global
    maxconn 256

defaults
    mode http
    timeout connect 5s
    timeout client 120s
    timeout server 120s
    # The client's address, which uvicorn takes from a proxy on 127.0.0.1 (the login throttle counts it).
    option forwardfor

frontend site
    bind 127.0.0.1:{port}
    default_backend web

backend web
    balance roundrobin
    http-response set-header {BACKEND} %[srv_name]
{servers}
"""


class HAProxy:
    """``haproxy -db`` (in the foreground) on a free port, in front of the given local ports."""

    def __init__(self, backends: list[int], folder: Path) -> None:
        assert HAPROXY is not None, MISSING
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.file = folder / "haproxy.cfg"
        self.file.write_text(config(self.port, backends), encoding="utf-8")
        self.log = folder / "haproxy.log"
        self._out = self.log.open("wb")
        self.process = subprocess.Popen(
            [HAPROXY, "-db", "-f", str(self.file)], stdout=self._out, stderr=subprocess.STDOUT
        )
        wait_for(self._listening, 20, f"haproxy on port {self.port}")

    def _listening(self) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(f"haproxy exited with {self.process.returncode}:\n{self.log.read_text()}")
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
            return True
        except OSError:
            return False

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(20)
        self._out.close()
