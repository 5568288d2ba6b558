"""What every part of the API shares: text a client sends, refusals, the health answer."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, Field
from sqlalchemy.orm import InstrumentedAttribute

from app.services.accounts.users import MAX_PASSWORD_LENGTH
from app.services.errors import ServiceError
from app.storage.types import column_length, utcnow

#: What every text a client sends must match: no NUL, which no text column holds (PostgreSQL refuses
#: it even in a comparison, SQLite would store it).
NO_NUL = r"^[^\x00]*$"

#: Text a client sends: anything but NUL.
Text = Annotated[str, Field(pattern=NO_NUL)]


def text_for(column: InstrumentedAttribute[Any], **field: Any) -> Any:
    """The type of a field stored in ``column``: no NUL, and no longer than the column, so a refusal
    names the field instead of the database failing on it (``name: text_for(User.name)``)."""
    return Annotated[str, Field(max_length=column_length(column), pattern=NO_NUL, **field)]


def text_of(max_length: int) -> Any:
    """Text of at most ``max_length`` characters, without NUL, where no column sets the limit."""
    return Annotated[str, Field(max_length=max_length, pattern=NO_NUL)]


#: A time as people type it (``2026-12-01T00:00Z``), or a choice among a few words.
ShortText = text_of(64)

#: A password as sent (it is hashed, so its limit is the accounts' own, not a column's).
Password = Annotated[str, Field(max_length=MAX_PASSWORD_LENGTH, pattern=NO_NUL)]


class Problem(BaseModel):
    where: str | None = None
    key: str | None = None
    message: str


class ErrorOut(BaseModel):
    """Every 4xx answer: a short code, a message for people, and for refused input the problems."""

    error: str = Field(examples=["quota_exhausted"])
    detail: str | None = None
    problems: list[Problem] | None = None
    total: int | None = None
    resets_at: datetime | None = None
    opens_at: datetime | None = None
    closed_at: datetime | None = None
    limit_bytes: int | None = None
    retry_after: int | None = Field(None, description="seconds to wait before trying again (login throttling)")


def wait_headers(exc: ServiceError) -> dict[str, str]:
    """The ``Retry-After`` header of a refusal that waiting lifts (login throttling, a daily limit), else none;
    the API's handler and the pages both answer with it."""
    wait = exc.retry_after(utcnow())
    return {} if wait is None else {"Retry-After": str(wait)}


def retry_after_header(*, required: bool) -> dict[str, dict[str, object]]:
    """The ``Retry-After`` header of a 429 or 503, as the document declares it."""
    schema = {"type": "string", "pattern": "^[1-9][0-9]*$"}
    return {
        "Retry-After": {"description": "seconds to wait before trying again", "required": required, "schema": schema}
    }


class Health(BaseModel):
    status: str
