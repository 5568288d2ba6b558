"""``PODIUM_PLUGINS=tests.app.plugins.labels,tests.app.plugins.die_before_send``: the process kills
itself (SIGKILL) right after a transaction that stored jobs commits, before it sends them: what a
web process killed between its commit and its send leaves behind. Only the crash tests load it."""

from __future__ import annotations

import os
import signal

from sqlalchemy import event
from sqlalchemy.orm import Session

from app.services.jobs import enqueue


def _die_before_sending(session: Session) -> None:
    if session.info.get(enqueue._PENDING) and not session.in_nested_transaction():
        os.kill(os.getpid(), signal.SIGKILL)


# insert=True: before the listener that sends the committed jobs.
event.listen(Session, "after_commit", _die_before_sending, insert=True)
