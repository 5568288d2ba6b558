"""What every part of the API shares: text a client sends, refusals, the health answer."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, Field

#: Text a client sends: anything but NUL, which no text column holds (PostgreSQL refuses it).
Text = Annotated[str, Field(pattern=r"^[^\x00]*$")]


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


class Health(BaseModel):
    status: str
