"""The versioned JSON API, mounted under ``/api/v1``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends

from app.web.api import accounts, baselines, competitions, deletions, leaderboards, queues, submissions
from app.web.deps import get_optional_user, refuse_nul_characters
from app.web.schemas.common import ErrorOut, Health

PREFIX = "/api/v1"

#: Refusals any operation may answer with, all in the one error shape of ``app.web.errors``: a wrong token
#: (or an ``Authorization`` header that is no bearer token) is refused even where none is needed, and 422
#: replaces FastAPI's default validation body.
REFUSALS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorOut, "description": "the request was refused"},
    401: {"model": ErrorOut, "description": "no valid token where one is needed, or a wrong one"},
    403: {"model": ErrorOut, "description": "the token's user may not do this"},
    404: {"model": ErrorOut, "description": "no such competition, task, phase, submission or file"},
    409: {"model": ErrorOut, "description": "the current state forbids it (the name is taken, already in a team...)"},
    422: {"model": ErrorOut, "description": "invalid parameters or body: `problems` names each mistake"},
}

#: Every operation takes a token (``get_optional_user``), so a wrong one is refused everywhere; the document
#: says which operations need one (``app.web.openapi``).
router = APIRouter(
    prefix=PREFIX, responses=REFUSALS, dependencies=[Depends(refuse_nul_characters), Depends(get_optional_user)]
)
router.include_router(accounts.router)
router.include_router(competitions.router)
router.include_router(submissions.router)
router.include_router(leaderboards.router)
router.include_router(baselines.router)
router.include_router(queues.router)
router.include_router(deletions.router)


@router.get("/health", response_model=Health, tags=["server"])
def health() -> dict[str, str]:
    """Answers as soon as the server accepts requests."""
    return {"status": "ok"}
