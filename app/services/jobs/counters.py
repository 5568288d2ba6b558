"""Counters of what the sweepers did, summed over every process in the database (``JobCounter``).

``RESUMED``: jobs sent again because their worker died (running, lease expired; or queued, its
message taken by a worker that never claimed it). ``RESENT``: jobs
sent again because their message never left (the broker was down, or the process that committed
them died before sending) or was lost with the broker. ``BROKER_LOSSES``: times a sweeper found the
broker without its marker (``app.worker.broker_marker``). A counter is bumped in the transaction
that takes the rows, so it counts what was taken, once, whichever process took it.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from app.storage.models.operations import JobCounter

RESUMED, RESENT, BROKER_LOSSES = "resumed", "resent", "broker_losses"
NAMES = (RESUMED, RESENT, BROKER_LOSSES)


def bump(session: Session, name: str, kind: str = "", by: int = 1) -> None:
    """Add ``by`` to the counter ``name`` of ``kind`` (created at zero when missing)."""
    if by <= 0:
        return
    # An upsert: the first bump of a counter creates its row, and two processes bumping at once
    # neither lose an increment nor fail on the primary key.
    dialect = session.get_bind().dialect.name
    insert = pg_insert if dialect == "postgresql" else sqlite_insert
    statement = insert(JobCounter).values(name=name, kind=kind, value=by)
    session.execute(
        statement.on_conflict_do_update(
            index_elements=[JobCounter.name, JobCounter.kind], set_={"value": JobCounter.value + by}
        )
    )


def totals(session: Session) -> dict[tuple[str, str], int]:
    """Every counter's value by (name, kind)."""
    rows = session.execute(select(JobCounter.name, JobCounter.kind, JobCounter.value)).all()
    return {(name, kind): int(value) for name, kind, value in rows}
