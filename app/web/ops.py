"""Routes for operators: ``/readyz`` (can this process do its work?) and ``/metrics`` (Prometheus).

``/healthz`` (does the process answer at all?) is among the public pages. ``/readyz`` checks the
database and, in the distributed mode, the broker, each in a thread of its own with a deadline,
so a dependency that hangs makes the answer a 503 naming it instead of a request that hangs too.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, FastAPI, Request, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from sqlalchemy import text

from app.web import routing
from app.web.deps import StateDep
from app.web.metrics import PodiumCollector
from app.web.state import AppState

router = APIRouter(include_in_schema=False)

#: Longest a readiness check waits for one dependency.
CHECK_SECONDS = 3.0


def probe(check: Callable[[], Any], timeout: float) -> str | None:
    """``None`` if ``check()`` returned within ``timeout`` seconds, else why not (one line)."""
    outcome: list[str | None] = []

    def run() -> None:
        try:
            check()
            outcome.append(None)
        except Exception as exc:  # any failure is the answer, reported by its type and first line
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            outcome.append(f"{type(exc).__name__}: {first}"[:300])

    # A daemon thread: a check stuck in a driver must not keep the process alive or hold the request.
    thread = threading.Thread(target=run, name="readiness-check", daemon=True)
    thread.start()
    thread.join(timeout)
    return outcome[0] if outcome else f"no answer within {timeout:g} s"


def _database_check(state: AppState) -> Callable[[], None]:
    def check() -> None:
        with state.db.session(read_only=True) as session:
            session.execute(text("SELECT 1"))

    return check


@router.get("/readyz")
def readyz(state: StateDep) -> JSONResponse:
    """200 when the database (and the broker, when one is configured) answer; else 503 naming which did not."""
    timeout = min(CHECK_SECONDS, state.settings.broker_timeout_seconds + 1)
    checks: dict[str, str] = {}
    problems: list[str] = []
    database = probe(_database_check(state), CHECK_SECONDS)
    checks["database"] = "ok" if database is None else "unreachable"
    if database is not None:
        problems.append(f"the database is unreachable ({database})")
    if state.broker is None:
        checks["broker"] = "not configured"
    else:
        broker = probe(state.broker.check, timeout)
        checks["broker"] = "ok" if broker is None else "unreachable"
        if broker is not None:
            problems.append(f"the broker is unreachable ({broker})")
    if problems:
        body = {"error": "not_ready", "detail": "; ".join(problems), "checks": checks}
        return JSONResponse(body, status_code=503, headers={"Retry-After": "5"})
    return JSONResponse({"status": "ready", "checks": checks})


@router.get("/metrics")
def metrics(request: Request) -> Response:
    """The Prometheus metrics of this Podium (computed from the database at scrape time)."""
    registry: CollectorRegistry = request.app.state.metrics_registry
    return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)


def install(app: FastAPI, state: AppState) -> None:
    """Add the routes and the metrics registry to ``app``."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(PodiumCollector(state, probe=probe))
    app.state.metrics_registry = registry
    routing.include(app, router)
