"""The application factory: ``create_app(settings)`` builds the FastAPI app; nothing happens at import.

In the embedded mode (no ``broker_url``) the app's lifespan starts the scoring pool, which first
resumes every submission left queued or interrupted in the database.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from app.config import Settings
from app.services.gold import GoldCache
from app.storage.db import Database
from app.web import errors, pages
from app.web.api import router as api_router
from app.web.state import AppState
from app.worker.embedded import EmbeddedPool
from app.worker.jobs import JobContext

log = logging.getLogger(__name__)

VERSION = "0.1.0"


def create_app(settings: Settings) -> FastAPI:
    """A ready-to-serve app on ``settings`` (the database must be migrated already)."""
    if settings.broker_url:
        raise ValueError(
            "PODIUM_BROKER_URL is set, but this version runs scoring jobs only in the server process; unset it"
        )
    state = AppState(
        settings=settings, db=Database(settings.database_url), gold_cache=GoldCache(settings.gold_cache_size)
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        pool: EmbeddedPool | None = None
        if settings.workers > 0:
            pool = EmbeddedPool(JobContext(state.db, settings, state.gold_cache), settings.workers)
            pool.start()
            state.queue = pool
        try:
            yield
        finally:
            state.queue = None
            if pool is not None:
                pool.stop()
            state.db.dispose()

    app = FastAPI(
        title="Podium",
        version=VERSION,
        summary="A shared-task evaluation server: submissions, exact scorers, leaderboards.",
        lifespan=lifespan,
    )
    app.state.podium = state
    errors.install(app)
    app.include_router(api_router)
    pages.install(app, state)
    return app
