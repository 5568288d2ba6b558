"""The socket ``podium serve`` listens on (``app.cli.listening``): the connections the server accepts on it
send small answers at once (``TCP_NODELAY``), as they would on a socket uvicorn had made itself."""

from __future__ import annotations

import asyncio
import socket

from app.cli.listening import listen_or_fail


async def _accepted_nodelay(listening: socket.socket) -> int:
    """``TCP_NODELAY`` of a connection that an asyncio server (as uvicorn runs one) accepts on ``listening``."""
    seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        seen.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
        writer.close()

    server = await asyncio.start_server(accepted, sock=listening)
    async with server:
        _, writer = await asyncio.open_connection(*listening.getsockname()[:2])
        nodelay = await asyncio.wait_for(seen, timeout=30)
        writer.close()
    return nodelay


def test_the_server_answers_without_waiting_for_the_clients_acknowledgement() -> None:
    # Without TCP_NODELAY, an answer's body (a second small write after its headers) waits for the client's
    # delayed ACK: about 40 ms on every request. asyncio sets it only on a socket whose protocol is TCP.
    listening = listen_or_fail("127.0.0.1", 0)
    assert listening.proto == socket.IPPROTO_TCP
    assert asyncio.run(_accepted_nodelay(listening)) != 0
