"""The versioned JSON API, mounted under ``/api/v1``."""

from __future__ import annotations

from fastapi import APIRouter

from app.web.api import accounts, competitions, leaderboards, submissions
from app.web.schemas import ErrorOut, Health

PREFIX = "/api/v1"

router = APIRouter(prefix=PREFIX, responses={400: {"model": ErrorOut}, 404: {"model": ErrorOut}})
router.include_router(accounts.router)
router.include_router(competitions.router)
router.include_router(submissions.router)
router.include_router(leaderboards.router)


@router.get("/health", response_model=Health, tags=["server"])
def health() -> dict[str, str]:
    """Answers as soon as the server accepts requests."""
    return {"status": "ok"}
