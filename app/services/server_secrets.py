"""Keys the server makes once and keeps in its database (``ServerSecret``), one per use: the same in every
process and after every restart (opaque ids, remote workers' lease tokens and file links)."""

from __future__ import annotations

import secrets

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.storage.models import ServerSecret


def server_key(session: Session, name: str) -> bytes:
    """The key kept under ``name``, made on first use. Two processes making it at once keep one: the loser's
    insert fails on the primary key and it reads the winner's."""
    found = session.get(ServerSecret, name)
    if found is None:
        try:
            with session.begin_nested():
                found = ServerSecret(name=name, value=secrets.token_hex(32))
                session.add(found)
        except IntegrityError:
            found = session.get(ServerSecret, name, populate_existing=True)
            assert found is not None
    return bytes.fromhex(found.value)
