"""The application factory: ``create_app(settings)`` builds the FastAPI app; nothing happens at import.

In the embedded mode (no ``broker_url``) the app's lifespan starts the scoring pool, which first
resumes every submission left queued or interrupted in the database. In the distributed mode the
app sends jobs to Celery and runs only the sweeper (``app.worker.sweeper``); workers score.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi_offline import FastAPIOffline

from app.config import Settings
from app.services.accounts import users
from app.services.accounts.throttle import LoginThrottle
from app.services.boards.cache import BoardCache
from app.services.jobs.kinds import JobContext
from app.services.scoring.gold import GoldCache
from app.services.scoring.handoff import ParsedSubmissions
from app.storage.db import Database
from app.web import errors, openapi, ops, pages, routing
from app.web.api import router as api_router
from app.web.api import worker as worker_api
from app.web.state import AppState
from app.worker.embedded import EmbeddedPool

log = logging.getLogger(__name__)

VERSION = "0.1.0"


def board_check_seconds(settings: Settings) -> float:
    """How long a board is served before its fingerprint is read again. In the distributed mode every score is
    committed by a worker process, which this process's own counter never sees: each read then asks the
    database (one small query), so that a board read through any web process shows every score already
    reported as scored."""
    if settings.board_check_seconds is not None:
        return settings.board_check_seconds
    return 0.0 if settings.broker_url else 2.0


def create_app(settings: Settings) -> FastAPI:
    """A ready-to-serve app on ``settings`` (the database must be migrated already)."""
    users.use_password_profile(settings.password_hash_profile)
    db = Database.from_settings(settings)
    state = AppState(
        settings=settings,
        db=db,
        gold_cache=GoldCache(settings.gold_cache_size),
        boards=BoardCache(db, check_every=board_check_seconds(settings)),
        throttle=LoginThrottle(db),
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        stop = _start_distributed(state) if settings.broker_url else _start_embedded(state)
        try:
            yield
        finally:
            state.queue = None
            state.broker = None
            stop()
            state.db.dispose()

    # FastAPI's /docs loads Swagger UI from a CDN; this serves the same from the installed package
    # (/static-offline-docs), so the documentation works on a machine without the internet.
    app = FastAPIOffline(
        title="Podium",
        version=VERSION,
        summary="A shared-task evaluation server: submissions, exact scorers, leaderboards.",
        lifespan=lifespan,
        # Swagger UI would send the document to an online validator for its badge; ReDoc's page loads
        # its logo from its CDN, so only Swagger UI is served.
        swagger_ui_parameters={"validatorUrl": None},
        redoc_url=None,
    )
    app.state.podium = state
    errors.install(app)
    routing.include(app, api_router)
    routing.include(app, worker_api.router)
    ops.install(app, state)
    pages.install(app, state)
    openapi.install(app)
    return app


def _start_embedded(state: AppState) -> Callable[[], None]:
    """The in-process scoring pool (none with ``workers=0``); returns how to stop it."""
    if state.settings.workers == 0:
        return lambda: None
    state.handoff = ParsedSubmissions()
    context = JobContext(state.db, state.settings, state.gold_cache, handoff=state.handoff)
    pool = EmbeddedPool(context, state.settings.workers)
    pool.start()
    state.queue = pool
    return pool.stop


def _start_distributed(state: AppState) -> Callable[[], None]:
    """Jobs go to Celery; this process only sweeps. Nothing connects to the broker until a send."""
    from app.worker.broker_marker import Marker
    from app.worker.celery_app import make_celery
    from app.worker.celery_queue import CeleryQueue
    from app.worker.sweeper import Sweeper

    celery = make_celery(state.settings)
    queue = CeleryQueue(celery, state.db, state.settings)
    sweeper = Sweeper(state.db, queue.send, state.settings, marker=Marker(celery, state.settings))
    state.queue = state.broker = queue
    sweeper.start()

    def stop() -> None:
        sweeper.stop()
        queue.close()

    return stop
