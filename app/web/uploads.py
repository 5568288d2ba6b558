"""Reading a multipart upload with a size limit that holds while the body streams in.

The limit depends on the phase, so it cannot be a fixed setting of the route: the handler looks it
up first (``upload_limit_for``), then reads the body through ``read_form``, which stops reading as
soon as the body passes the limit (a declared ``Content-Length`` over the limit is refused before
reading anything). File parts are spooled to disk by Starlette's parser and hashed as they pass
(``_HashingParser``): an upload becomes a ``Content`` that the blob store copies in chunks, so the web
process never holds a large file whole (a file that is validated is read whole by the check that parses
it, within the phase's limit).
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass
from io import BytesIO
from typing import Any

from fastapi import Request
from starlette.datastructures import UploadFile
from starlette.formparsers import MultiPartException, MultiPartParser

from app.services.competitions import catalog
from app.services.errors import InvalidInput, UploadTooLarge
from app.services.submissions.intake import Upload
from app.services.submissions.limits import upload_limit
from app.storage.blobs import Content
from app.web.state import AppState

#: Room for the form's text fields and multipart framing on top of the file's own limit.
FORM_OVERHEAD = 256 * 1024
MAX_FIELD_BYTES = 64 * 1024


@dataclass(frozen=True)
class Form:
    fields: dict[str, str]
    #: Each file part as its file name and its contents, spooled to a temporary file and hashed as they arrived.
    contents: dict[str, tuple[str, Content]]

    @property
    def files(self) -> dict[str, tuple[str, bytes]]:
        """The file parts, each read whole at each call (a bundle, which is unpacked in memory anyway)."""
        return {name: (filename, content.read()) for name, (filename, content) in self.contents.items()}

    def upload(self) -> Upload | None:
        """The submission the form holds (the ``file`` part, ``method_name``, ``method_description``),
        or ``None`` when it has no ``file`` part."""
        if "file" not in self.contents:
            return None
        filename, content = self.contents["file"]
        return Upload(
            content,
            filename=filename,
            method_name=self.fields.get("method_name", ""),
            method_description=self.fields.get("method_description", ""),
        )


class _HashingParser(MultiPartParser):
    """Starlette's parser, which spools each file part to a temporary file, hashing each file part's bytes
    as they pass, so that storing the file later reads it once and never holds it whole."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.digests: dict[int, Any] = {}

    def on_part_data(self, data: bytes, start: int, end: int) -> None:
        part = self._current_part
        if part.file is not None:
            self.digests.setdefault(id(part.file), hashlib.sha256()).update(data[start:end])
        super().on_part_data(data, start, end)

    def content(self, file: UploadFile) -> Content:
        """The part's contents, taken from the form (so that closing the form leaves them open)."""
        spool, file.file = file.file, BytesIO()
        digest = self.digests.get(id(file), hashlib.sha256())
        return Content(spool, file.size or 0, digest.hexdigest())  # type: ignore[arg-type]


def multipart_body(file: str, description: str, **fields: dict[str, Any]) -> dict[str, Any]:
    """The OpenAPI description of a multipart body (a route's ``openapi_extra``; such a route reads
    its body with ``read_form``, not through FastAPI's parameters): the required file part ``file``
    and the optional text ``fields``."""
    part = {"type": "string", "format": "binary", "description": description}
    schema = {"type": "object", "required": [file], "properties": {file: part, **fields}}
    return {"requestBody": {"required": True, "content": {"multipart/form-data": {"schema": schema}}}}


def upload_limit_for(state: AppState, ref: tuple[str, str, str]) -> int:
    """The largest file the phase at ``ref`` accepts, read in a short transaction of its own (so that
    none is open while the body streams in)."""
    with state.db.session(read_only=True) as session:
        return upload_limit(catalog.get_phase(session, *ref), state.limits)


class _TooLarge(Exception):
    pass


async def _limited(stream: AsyncIterator[bytes], limit: int) -> AsyncGenerator[bytes, None]:
    total = 0
    async for chunk in stream:
        total += len(chunk)
        if total > limit:
            raise _TooLarge
        yield chunk


#: What to raise for a file over the limit: the error itself, or a function of the file's size
#: (``None`` when the body was cut off before its end) that makes it.
TooLarge = UploadTooLarge | Callable[[int | None], UploadTooLarge]


async def read_form(request: Request, *, file_limit: int, too_large: TooLarge) -> Form:
    """The form's text fields and files; a file over ``file_limit`` is refused with ``too_large``."""

    def refuse(size: int | None) -> UploadTooLarge:
        return too_large(size) if callable(too_large) else too_large

    content_type = request.headers.get("content-type", "")
    if not content_type.startswith("multipart/form-data"):
        raise InvalidInput(
            "send the file as multipart/form-data",
            [{"where": "content-type", "message": f"expected multipart/form-data, got {content_type or 'nothing'}"}],
        )
    body_limit = file_limit + FORM_OVERHEAD
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > body_limit:
        raise refuse(None)
    parser = _HashingParser(
        request.headers,
        _limited(request.stream(), body_limit),
        max_files=4,
        max_fields=16,
        max_part_size=MAX_FIELD_BYTES,
    )
    try:
        form = await parser.parse()
    except _TooLarge:
        raise refuse(None) from None
    except MultiPartException as exc:
        raise InvalidInput("the form could not be read", [{"where": "body", "message": exc.message}]) from None
    fields: dict[str, str] = {}
    files: dict[str, tuple[str, Content]] = {}
    try:
        for name, value in form.multi_items():
            if isinstance(value, UploadFile):
                if value.size is not None and value.size > file_limit:
                    raise refuse(value.size)
                files[name] = (value.filename or "", parser.content(value))
            else:
                fields[name] = value
    except BaseException:
        for _, content in files.values():
            content.close()
        raise
    finally:
        await form.close()
    # No text column holds a NUL character (PostgreSQL refuses it), and none belongs in a name or a description.
    problems = [
        {"where": name, "message": "contains a NUL character"} for name, value in fields.items() if "\x00" in value
    ]
    problems += [
        {"where": name, "message": "the file name contains a NUL character"}
        for name, (filename, _) in files.items()
        if "\x00" in filename
    ]
    if problems:
        raise InvalidInput("the form was refused", problems)
    return Form(fields, files)
