"""The socket ``podium serve`` listens on, bound before anything else so that a port in use is said in
one line (exit 2) before the database is touched or anything is announced."""

from __future__ import annotations

import errno
import socket

from app.cli.common import fail


def listen_or_fail(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` as uvicorn binds one (``SO_REUSEADDR``), so that a port in use is
    said in one line before anything else happens; the server then listens on this very socket."""
    # IPPROTO_TCP named, as getaddrinfo would: asyncio sets TCP_NODELAY on the connections it accepts only
    # for a socket whose protocol says TCP. Without it every answer's body waited for the client's delayed
    # ACK (Nagle's algorithm): about 40 ms per request.
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listening = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listening.bind((host, port))
    except OSError as exc:
        listening.close()
        if exc.errno == errno.EADDRINUSE:
            fail(
                f"port {port} on {host} is in use; choose another with `make serve PORT={port + 1}` "
                f"(or `podium serve --port {port + 1}`)"
            )
        fail(f"cannot listen on {host} port {port}: {exc.strerror or exc}")
    return listening
