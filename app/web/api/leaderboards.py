"""Leaderboards (public, no login) and revealing a hidden phase."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from app.services.boards import standings
from app.services.competitions import catalog
from app.web.deps import CurrentUser, OptionalUser, SessionDep
from app.web.pages.render import get_pages
from app.web.schemas import LeaderboardOut

router = APIRouter(tags=["leaderboards"])

PHASE = "/competitions/{competition}/tasks/{task}/phases/{phase}"


@router.get(PHASE + "/leaderboard", response_model=LeaderboardOut)
def leaderboard(
    competition: str, task: str, phase: str, request: Request, session: SessionDep, user: OptionalUser
) -> dict[str, Any]:
    """The phase's ranking: one entry per team (and per baseline), best first. Empty for everyone but
    the organizers while the phase is hidden."""
    found = catalog.get_phase(session, competition, task, phase)
    # Served from the same per-phase cache as the pages: ranking every submission on each request
    # would let anyone keep the server busy; the cache drops a copy as soon as a score lands.
    return get_pages(request).boards.api_leaderboard(session, user, found)


@router.post(PHASE + "/reveal", response_model=LeaderboardOut)
def reveal(competition: str, task: str, phase: str, session: SessionDep, user: CurrentUser) -> dict[str, Any]:
    """Make a hidden phase's results public (organizers); answers with the now public leaderboard."""
    found = catalog.get_phase(session, competition, task, phase)
    catalog.reveal_phase(session, user, found)
    return standings.leaderboard(session, None, found)
