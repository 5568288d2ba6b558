"""Leaderboards (public, no login) and revealing a hidden phase, both read from the leaderboard cache."""

from __future__ import annotations

from fastapi import APIRouter

from app.services.competitions import catalog
from app.web.deps import CurrentUser, OptionalUser, SessionDep, StateDep
from app.web.schemas.boards import LeaderboardOut

router = APIRouter(tags=["leaderboards"])

PHASE = "/competitions/{competition}/tasks/{task}/phases/{phase}"


@router.get(PHASE + "/leaderboard", response_model=LeaderboardOut)
def leaderboard(competition: str, task: str, phase: str, state: StateDep, user: OptionalUser) -> LeaderboardOut:
    """The phase's ranking: one entry per team (and per baseline), best first. Empty for everyone but
    the organizers while the phase is hidden."""
    # Served from the same per-phase cache as the pages: ranking every submission on each request
    # would let anyone keep the server busy; the cache drops a copy as soon as a score lands.
    snapshot = state.boards.for_viewer((competition, task, phase), user)
    board: LeaderboardOut = snapshot.derived("api", lambda: LeaderboardOut.of(snapshot))
    return board


@router.post(PHASE + "/reveal", response_model=LeaderboardOut)
def reveal(
    competition: str, task: str, phase: str, state: StateDep, session: SessionDep, user: CurrentUser
) -> LeaderboardOut:
    """Make a hidden phase's results public (organizers); answers with the now public leaderboard."""
    catalog.reveal_phase(session, user, catalog.get_phase(session, competition, task, phase))
    session.commit()  # the cache recomputes the public board from what is committed
    snapshot = state.boards.get((competition, task, phase), "public")
    board: LeaderboardOut = snapshot.derived("api", lambda: LeaderboardOut.of(snapshot))
    return board
