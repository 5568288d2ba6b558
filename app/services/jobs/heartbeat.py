"""The heartbeat of a job that holds a lease: a thread renews it every third of its length while the
slow part runs (a scorer, a scoring program, a participant's program), until the body ends or a renewal
finds the lease taken over."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from sqlalchemy.orm import Session

from app.services.jobs.kinds import JobContext

log = logging.getLogger(__name__)


@contextmanager
def heartbeats(ctx: JobContext, renew: Callable[[Session, int], bool], what: str) -> Iterator[None]:
    """Call ``renew(session, lease_seconds)`` in a transaction of its own every third of the lease while the
    body runs; a renewal that answers False (the lease is no longer this attempt's) ends the beats. ``what``
    names the row in the thread's name and the log ("submission 12", "code run 3")."""
    stop = threading.Event()
    seconds = ctx.settings.lease_seconds

    def beat() -> None:
        while not stop.wait(max(1.0, seconds / 3)):
            try:
                if not ctx.write(lambda s: renew(s, seconds)):
                    return
            except Exception:  # a missed beat is not fatal; the next one may get through
                log.warning("heartbeat for %s failed", what, exc_info=True)

    thread = threading.Thread(target=beat, name=f"heartbeat-{what.replace(' ', '-')}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
