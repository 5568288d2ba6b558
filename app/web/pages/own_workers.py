"""What a phase's pages say when its runs go to its competition's own queue and no worker of that queue called
lately (``workers.queues.phase_unserved``): how many runs wait and for how long, and, for its organizers, a button
that moves the phase back to the platform's workers (the queues page's route form, returning to this page).

The phase's leaderboard page answers anonymous readers without the database where it can; what it found of the
phase's queue is kept ``CACHE_SECONDS`` per app for them (a logged-in reader, whose page reads the database anyway,
is told the state of this moment).
"""

from __future__ import annotations

import threading
import time
from typing import Any

from fastapi import Request
from fastapi.concurrency import run_in_threadpool
from sqlalchemy.orm import Session

from app.services.accounts.access import is_organizer
from app.services.competitions import catalog
from app.services.workers import queues
from app.storage.models import Phase, User
from app.storage.types import utcnow
from app.web.pages import urls
from app.web.pages.render import get_pages
from app.web.schemas.workers import OwnWorkersOut

CACHE_SECONDS = 2.0
_CACHE = "own_workers_notices"
_LOCK = threading.Lock()


def notice(session: Session, phase: Phase, viewer: User | None, back: str) -> dict[str, Any]:
    """The template's variables (``_own_workers.html``) for ``phase``, whose page is ``back``."""
    now = utcnow()
    view = queues.phase_unserved(session, phase.id, now=now)
    competition = phase.task.competition
    return {
        "own_workers": None if view is None else OwnWorkersOut.of(view, now),
        "own_workers_organizer": view is not None and is_organizer(session, viewer, competition.id),
        "own_workers_ref": (competition.slug, phase.task.slug, phase.slug),
        "own_workers_back": back,
    }


async def phase_page_notice(request: Request, ref: tuple[str, str, str], viewer: User | None) -> dict[str, Any]:
    """``notice`` for the phase's leaderboard page; kept a moment for anonymous readers."""
    state = get_pages(request).state
    cache: dict[tuple[str, str, str], tuple[float, dict[str, Any]]] | None = getattr(request.app.state, _CACHE, None)
    if cache is None:
        cache = {}
        setattr(request.app.state, _CACHE, cache)
    if viewer is None:
        with _LOCK:
            kept = cache.get(ref)
        if kept is not None and kept[0] > time.monotonic():
            return kept[1]

    def look() -> dict[str, Any]:
        with state.db.session(read_only=True) as session:
            return notice(session, catalog.get_phase(session, *ref), viewer, urls.phase(ref))

    found = await run_in_threadpool(look)
    if viewer is None:
        with _LOCK:
            cache[ref] = (time.monotonic() + CACHE_SECONDS, found)
    return found
