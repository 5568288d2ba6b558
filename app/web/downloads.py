"""A blob as an HTTP answer, streamed from its store in chunks: the web process never holds a file whole."""

from __future__ import annotations

from collections.abc import Iterator

from fastapi.responses import Response, StreamingResponse
from sqlalchemy.orm import Session
from starlette.background import BackgroundTask

from app.storage.blobs import blob_facts, open_stream
from app.storage.stores import CHUNK


def streamed(session: Session, name: str, blob_id: int, media_type: str = "application/octet-stream") -> Response:
    """The blob as an attachment named ``name``, streamed in chunks with its size declared."""
    size, _ = blob_facts(session, [blob_id])[blob_id]
    stream = open_stream(session, blob_id)

    def chunks() -> Iterator[bytes]:
        with stream:
            while chunk := stream.read(CHUNK):
                yield chunk

    safe = name.replace('"', "").replace("\\", "")
    headers = {"Content-Disposition": f'attachment; filename="{safe}"', "Content-Length": str(size)}
    # Closed after the answer too, should the client leave before the first chunk was read.
    return StreamingResponse(chunks(), media_type=media_type, headers=headers, background=BackgroundTask(stream.close))
