"""Leaderboards (public, no login) and revealing a hidden phase."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from app.services import competitions, leaderboards
from app.web.deps import CurrentUser, OptionalUser, SessionDep
from app.web.schemas import LeaderboardOut

router = APIRouter(tags=["leaderboards"])

PHASE = "/competitions/{competition}/tasks/{task}/phases/{phase}"


@router.get(PHASE + "/leaderboard", response_model=LeaderboardOut)
def leaderboard(competition: str, task: str, phase: str, session: SessionDep, user: OptionalUser) -> dict[str, Any]:
    """The phase's ranking: one entry per team (and per baseline), best first. Empty for everyone but
    the organizers while the phase is hidden."""
    found = competitions.get_phase(session, competition, task, phase)
    return leaderboards.leaderboard(session, user, found)


@router.post(PHASE + "/reveal", response_model=LeaderboardOut)
def reveal(competition: str, task: str, phase: str, session: SessionDep, user: CurrentUser) -> dict[str, Any]:
    """Make a hidden phase's results public (organizers); answers with the now public leaderboard."""
    found = competitions.get_phase(session, competition, task, phase)
    competitions.reveal_phase(session, user, found)
    return leaderboards.leaderboard(session, None, found)
