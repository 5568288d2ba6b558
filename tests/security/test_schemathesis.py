"""Schemathesis against the app's own OpenAPI document, in process (ASGI): requests generated from
the schema, valid and invalid, sent with a participant's and with an organizer's token, never get a
server error, and every answer conforms to the schema (documented status, content type and body).

The app runs on the test database (SQLite, or PostgreSQL with ``PODIUM_TEST_DATABASE_URL``)
holding the example competitions (``podium demo``) and one queued submission; one run pins the path
parameters to those rows, so that generated bodies and queries reach the handlers' work, not only
their "not found". The scoring pool is not started: uploads stay queued, which is all the schema
promises.

The operations are walked here rather than through ``@schema.parametrize()``: the schema needs the
app, the app needs the database a fixture builds, and schemathesis' fixture-based (lazy) schemas
do not run under the pytest this project uses.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode, checks
from schemathesis.core.failures import FailureGroup

from app.config import Settings
from app.main import create_app
from app.storage.db import Database
from tests.security.seed_examples import demo_competitions, example

pytestmark = pytest.mark.slow

CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_schema_conformance,
]
#: Examples per operation, role and mode: about a minute and a half for the whole document on two cores
#: (``test_fuzz_openapi.py`` fuzzes every operation again, over HTTP, as four identities).
EXAMPLES_PER_OPERATION = settings(max_examples=6, deadline=None, database=None, suppress_health_check=list(HealthCheck))


@dataclass(frozen=True)
class Api:
    schema: Any
    tokens: dict[str, str]
    #: A submission of the participant's, queued.
    submission_id: int


@pytest.fixture(scope="module")
def api(migrated: Database) -> Iterator[Api]:
    app_settings = Settings(
        database_url=migrated.url, workers=0, secret_key="schemathesis-tests-" * 3, max_upload_bytes=256 * 1024
    )
    with demo_competitions(migrated) as tokens:
        app = create_app(app_settings)
        ex = example("svident-detection")
        queued = TestClient(app).post(  # no lifespan, so no scoring pool: it stays queued
            f"/api/v1/{ex.path}/submissions",
            headers={"Authorization": f"Bearer {tokens['participant']}"},
            files={"file": ("submission.json", ex.submission)},
        )
        assert queued.status_code == 202, queued.text
        yield Api(schemathesis.openapi.from_asgi("/openapi.json", app), tokens, queued.json()["id"])


def real_rows(api: Api, path: str) -> dict[str, Any]:
    """Path parameters that name rows of the example competitions, for the operation at ``path``."""
    competition, task, phase = example("svident-detection").ref
    known: dict[str, Any] = {
        "competition": competition,
        "task": task,
        "phase": phase,
        "submission_id": api.submission_id,
        "name": "test-inputs.tsv" if "/phases/{phase}/files/" in path else "train.tsv",
    }
    if "/participants/{name}" in path:
        known["name"] = "demo-participant"
    return {name: value for name, value in known.items() if "{" + name + "}" in path}


#: Operations that would delete the example competition or its submissions for every operation after them (each
#: would then answer only its 404): they run on generated rows, as in the other modes.
DESTRUCTIVE = {
    ("DELETE", "/api/v1/competitions/{competition}"),
    ("DELETE", "/api/v1/competitions/{competition}/tasks/{task}/phases/{phase}/submissions"),
}


def destroys(operation: Any) -> bool:
    return (operation.method.upper(), operation.path) in DESTRUCTIVE


def failures_of(api: Api, role: str, mode: GenerationMode, *, on_real_rows: bool) -> list[str]:
    """Run every operation's generated cases; return one line per operation that failed a check.
    ``on_real_rows`` pins the path parameters to rows that exist, so that bodies and queries reach
    the handlers' work rather than their 404."""
    headers = {"Authorization": f"Bearer {api.tokens[role]}"}
    failed = []
    for result in api.schema.get_all_operations():
        operation = result.ok()
        pinned = real_rows(api, operation.path) if on_real_rows and not destroys(operation) else None

        @given(case=operation.as_strategy(generation_mode=mode, path_parameters=pinned))
        @EXAMPLES_PER_OPERATION
        def run(case: schemathesis.Case[Any]) -> None:
            case.call_and_validate(headers=headers, checks=CHECKS)

        try:
            run()
        except Unsatisfiable:
            # Invalid mode only: every parameter of the operation accepts any value (a slug, say),
            # so no request can break the schema.
            assert mode is GenerationMode.NEGATIVE, operation.label
        except (AssertionError, FailureGroup) as exc:
            failed.append(f"{operation.label}: {exc}")
        except Exception as exc:  # in process, an error the app does not handle reaches the caller
            failed.append(f"{operation.label}: the app raised {type(exc).__name__}: {exc}")
    return failed


@pytest.mark.parametrize(
    ("mode", "on_real_rows"),
    [(GenerationMode.POSITIVE, False), (GenerationMode.POSITIVE, True), (GenerationMode.NEGATIVE, False)],
    ids=["valid", "valid on real rows", "invalid"],
)
@pytest.mark.parametrize("role", ["participant", "organizer"])
def test_generated_requests_get_no_server_error_and_answers_that_match_the_schema(
    api: Api, role: str, mode: GenerationMode, on_real_rows: bool
) -> None:
    failed = failures_of(api, role, mode, on_real_rows=on_real_rows)
    assert not failed, "\n\n".join(failed)
