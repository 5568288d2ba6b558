"""The declarative base and the constraint naming convention the migrations rely on."""

from __future__ import annotations

from typing import Any

from sqlalchemy import MetaData, String, Text, event
from sqlalchemy.orm import DeclarativeBase

# Named constraints let Alembic (and SQLite's batch mode) find and change them later.
NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    """Base class of every model."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class TextRefused(ValueError):
    """A text value that its column cannot hold as sent: longer than the column, or holding a NUL
    (PostgreSQL refuses those, SQLite would keep them). ``where`` is ``table.column``."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where
        self.message = message


def check_text_columns(obj: object) -> None:
    """Refuse, before it reaches the database, any text attribute of ``obj`` that its column cannot
    hold. The web layer checks every input first and names the field; this is the floor under those
    checks, so that no input they miss is a 500 on PostgreSQL or stored cut or as sent on SQLite."""
    table = getattr(obj, "__table__", None)
    if table is None:
        return
    for column in table.columns:
        if not isinstance(column.type, String | Text):
            continue
        value = getattr(obj, column.key, None)
        if not isinstance(value, str):
            continue
        length = getattr(column.type, "length", None)
        where = f"{table.name}.{column.name}"
        if "\x00" in value:
            raise TextRefused(where, "contains a NUL character")
        if length is not None and len(value) > length:
            raise TextRefused(where, f"at most {length} characters")


@event.listens_for(Base, "before_insert", propagate=True)
@event.listens_for(Base, "before_update", propagate=True)
def _check_text(mapper: Any, connection: Any, target: object) -> None:
    check_text_columns(target)
