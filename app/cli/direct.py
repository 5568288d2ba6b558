"""``podium submit``'s way for a large file: straight to the server's object storage, in parts, through the links
the server presigns (``POST .../direct-uploads``), then ``.../direct-uploads/complete``. A server that keeps its
files elsewhere says so (409 ``direct_upload_unavailable``), and the file goes to ``.../submissions`` as any other.

The parts go one at a time, each read from the file as it is sent (one part in memory), each retried like any
request; a progress bar on stderr counts them where stderr is a terminal (rich's, which typer brings).
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

from app.cli.common import fail

MB = 1024 * 1024

DirectAbove = Annotated[
    int,
    typer.Option(
        "--direct-above",
        min=1,
        help="Files of at least this many bytes go straight to the server's object storage, where it offers that.",
    ),
]
DIRECT_ABOVE = 64 * MB


def worth_it(file: Path, above: int) -> bool:
    return file.is_file() and file.stat().st_size >= above


def _sha256(file: Path) -> str:
    digest = hashlib.sha256()
    with file.open("rb") as source:
        while chunk := source.read(MB):
            digest.update(chunk)
    return digest.hexdigest()


@contextmanager
def _progress(total: int, name: str) -> Iterator[Callable[[int], None]]:
    """A function that counts bytes sent on a progress bar on stderr, shown only where stderr is a terminal."""
    if not sys.stderr.isatty():
        yield lambda _: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn, TransferSpeedColumn

    columns = (BarColumn(), DownloadColumn(), TransferSpeedColumn(), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), transient=False) as progress:
        task = progress.add_task(name, total=total)
        yield lambda sent: progress.advance(task, sent)


def _say(line: str) -> None:
    typer.echo(line, err=True)


def submit(
    api_request: Callable[..., Any],
    url: str,
    file: Path,
    headers: dict[str, str],
    *,
    key: str,
    method: str,
    description: str,
    retries: int,
) -> Any:
    """The server's answer to the completed upload, or ``None`` where it offers no direct upload."""
    import httpx

    from app.cli import retrying

    size = file.stat().st_size
    declared = {
        "size": size,
        "sha256": _sha256(file),
        "filename": file.name,
        "method_name": method,
        "method_description": description,
    }
    started = api_request("POST", f"{url}/direct-uploads", attempts=retries + 1, headers=headers, json=declared)
    if started.status_code in (404, 405) or (
        started.status_code == 409 and started.json().get("error") == "direct_upload_unavailable"
    ):
        return None
    if started.status_code != 200:
        return started
    body = started.json()
    etags = []
    with file.open("rb") as source, _progress(size, file.name) as sent:
        for number, link in enumerate(body["parts"], start=1):
            part = source.read(body["part_size"])
            try:
                answer = retrying.request("PUT", link, attempts=retries + 1, content=part, timeout=600, say=_say)
            except httpx.HTTPError as exc:
                fail(f"cannot reach the object storage at {link.split('?')[0]}: {exc}")
            if answer.status_code != 200 or "ETag" not in answer.headers:
                fail(f"the object storage refused part {number} of {file}: {answer.status_code} {answer.text[:300]}")
            etags.append(answer.headers["ETag"])
            sent(len(part))
    return api_request(
        "POST",
        body["complete_url"],
        attempts=retries + 1,
        headers={**headers, "Idempotency-Key": key},
        json={"upload": body["upload"], "etags": etags},
        timeout=3600,  # the server reads the file back to hash and check it
    )
