"""Column types shared by the models."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Generic, TypeVar

from sqlalchemy import DateTime, String
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator

E = TypeVar("E", bound=StrEnum)


class UTCDateTime(TypeDecorator[datetime]):
    """A timezone-aware UTC instant on every database.

    SQLite keeps no zone and hands back naive values; PostgreSQL hands back the session's zone.
    Both come back as aware UTC datetimes, and naive values are refused on the way in, so no
    comparison ever mixes naive and aware times.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"naive datetime {value!r} given where a UTC instant is stored")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        moment: datetime = value
        return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


class EnumText(TypeDecorator[E], Generic[E]):
    """A ``StrEnum`` stored as its text (a ``VARCHAR``, checked by a constraint of the table), read
    back as the enum's member; text that names no member is refused on the way in."""

    impl = String(16)
    cache_ok = True

    def __init__(self, enum: type[E], length: int = 16) -> None:
        super().__init__(length)
        self.enum = enum

    def process_bind_param(self, value: Any, dialect: Dialect) -> str | None:
        return None if value is None else str(self.enum(value))

    def process_result_value(self, value: Any, dialect: Dialect) -> E | None:
        return None if value is None else self.enum(value)


def one_of(column: str, enum: type[StrEnum]) -> str:
    """The SQL of a check constraint: ``column`` holds one of the enum's values."""
    return f"{column} IN ({', '.join(repr(member.value) for member in enum)})"


def utcnow() -> datetime:
    """The current instant in UTC (the only clock the storage layer uses)."""
    return datetime.now(UTC)


def column_length(column: Any) -> int:
    """The most characters a model's text attribute holds (``column_length(User.email)`` is 254), so
    that checks of input use the schema's own limits."""
    length = getattr(column.property.columns[0].type, "length", None)
    assert isinstance(length, int), f"{column} has no length"
    return length
