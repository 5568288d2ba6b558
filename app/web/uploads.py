"""Reading a multipart upload with a size limit that holds while the body streams in.

The limit depends on the phase, so it cannot be a fixed setting of the route: the handler looks it
up first (``upload_limit_for``), then reads the body through ``read_form``, which stops reading as
soon as the body passes the limit (a declared ``Content-Length`` over the limit is refused before
reading anything). File parts are spooled to disk by Starlette's parser, so an upload is held in
memory only once accepted.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from fastapi import Request
from starlette.datastructures import UploadFile
from starlette.formparsers import MultiPartException, MultiPartParser

from app.services.competitions import catalog
from app.services.errors import InvalidInput, UploadTooLarge
from app.services.submissions.intake import Upload
from app.services.submissions.limits import upload_limit
from app.web.state import AppState

#: Room for the form's text fields and multipart framing on top of the file's own limit.
FORM_OVERHEAD = 256 * 1024
MAX_FIELD_BYTES = 64 * 1024


@dataclass(frozen=True)
class Form:
    fields: dict[str, str]
    files: dict[str, tuple[str, bytes]]

    def upload(self) -> Upload | None:
        """The submission the form holds (the ``file`` part, ``method_name``, ``method_description``),
        or ``None`` when it has no ``file`` part."""
        if "file" not in self.files:
            return None
        filename, data = self.files["file"]
        return Upload(
            data=data,
            filename=filename,
            method_name=self.fields.get("method_name", ""),
            method_description=self.fields.get("method_description", ""),
        )


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
    parser = MultiPartParser(
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
    files: dict[str, tuple[str, bytes]] = {}
    try:
        for name, value in form.multi_items():
            if isinstance(value, UploadFile):
                if value.size is not None and value.size > file_limit:
                    raise refuse(value.size)
                data = await value.read()
                if len(data) > file_limit:
                    raise refuse(len(data))
                files[name] = (value.filename or "", data)
            else:
                fields[name] = value
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
