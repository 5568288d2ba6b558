"""Who may see and do what: every route of the JSON API and every page, for each of six actors.

``TABLE`` holds one row per request: the route (method and path template, as the app declares it),
the concrete path, and the status each actor must get, in the columns

    anonymous | team A (participant) | team B (participant) | organizer of another competition |
    organizer of this competition | site admin

Besides the status, every answer (a zip's members included) is searched for the world's canaries
(see ``tests/security/world.py``); each may appear only to the actors in ``MAY_SEE``:

* gold and organizer-only resources: nobody, organizers included. No route serves them (the
  downloads service reaches only training files and public inputs; the organizers' zip holds the
  submitted files and records, not the gold), so they must never appear in any answer;
* the hidden phase's numbers: its organizers and site admins (until revealed);
* a team's uploaded file and the name it was uploaded under: that team, the organizers and site admins;
* the organizer message of a failed submission: organizers and site admins;
* a team's invite code: that team's members.

``shows`` names what an allowed actor must see, so the search is known to find what it looks for.
A request that is refused, and every GET, must leave the database as it was; a request that changes
it is followed by a restore, so no cell sees another's doing. ``test_every_route_is_in_the_table``
fails, naming the route, when the app has a route the table lacks.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from httpx import Response
from sqlalchemy import text
from starlette.routing import Mount

from app.config import Settings
from app.main import create_app
from app.storage.db import Database
from app.web.sessions import COOKIE
from scorers import register, unregister
from tests.app.builders import PASSWORD
from tests.app.labels_baselines import NAME as BASELINE
from tests.app.labels_baselines import registered
from tests.app.labels_scorer import LabelScorer
from tests.security.world import (
    ACTORS,
    ADMIN,
    ANONYMOUS,
    HIDDEN_NUMBERS,
    OPEN,
    ORGANIZER,
    PENDING,
    PUBLIC_NUMBERS,
    TEAM_A,
    TEAM_B,
    World,
    plain_run,
)

try:
    from fastapi.routing import iter_route_contexts
except ImportError:  # FastAPI before lazily included routers: ``app.routes`` is flat already
    iter_route_contexts = iter  # type: ignore[assignment]

#: Routes of FastAPI's own documentation, and static files: nothing of Podium's data.
NOT_IN_TABLE = {
    ("GET", "/openapi.json"),
    ("GET", "/docs"),
    ("GET", "/docs/oauth2-redirect"),
    ("GET", "/redoc"),
}
MOUNTS = {"/static", "/static-offline-docs"}

EVERYONE_ELSE = frozenset(ACTORS)
ORGANIZERS = frozenset({ORGANIZER, ADMIN})
MAY_SEE: dict[str, frozenset[str]] = {
    "gold": frozenset(),
    "hidden_numbers": ORGANIZERS,
    "file_a": ORGANIZERS | {TEAM_A},
    "file_b": ORGANIZERS | {TEAM_B},
    "org_message": ORGANIZERS,
    "run_log": ORGANIZERS,
    "code_log": ORGANIZERS,
    "invite_a": frozenset({TEAM_A}),
    "invite_b": frozenset({TEAM_B}),
    "public_numbers": EVERYONE_ELSE,
}

Send = Callable[[World], dict[str, Any]]


@dataclass(frozen=True)
class Row:
    method: str
    template: str
    path: str
    statuses: dict[str, int]
    send: Send | None = None
    shows: dict[str, frozenset[str]] = field(default_factory=dict)
    #: Secrets the request itself carries (an invite code sent to join), which its answer may repeat.
    carries: frozenset[str] = frozenset()

    @property
    def page(self) -> bool:
        return not self.template.startswith("/api/")

    @property
    def id(self) -> str:
        return f"{self.method} {self.path}"


def row(
    method: str,
    template: str,
    *statuses: int,
    path: str | None = None,
    send: Send | None = None,
    shows: dict[str, set[str]] | None = None,
    carries: frozenset[str] = frozenset(),
) -> Row:
    assert len(statuses) == len(ACTORS), f"{method} {template}: one status per actor"
    return Row(
        method,
        template,
        path or template,
        dict(zip(ACTORS, statuses, strict=True)),
        send,
        {actor: frozenset(kinds) for actor, kinds in (shows or {}).items()},
        carries,
    )


def organizers_see(*kinds: str) -> dict[str, set[str]]:
    return {ORGANIZER: set(kinds), ADMIN: set(kinds)}


# -- what the requests send -----------------------------------------------------------------------------


def json_body(**body: Any) -> Send:
    return lambda world: {"json": body}


def form(**fields: str) -> Send:
    return lambda world: {"data": fields}


def join_a(world: World) -> dict[str, Any]:
    return {"json": {"invite_code": world.canaries.invite_a}}


def join_a_form(world: World) -> dict[str, Any]:
    return {"data": {"invite_code": world.canaries.invite_a}}


def upload(world: World) -> dict[str, Any]:
    return {"files": {"file": ("run.json", plain_run(), "application/json")}, "data": {"method_name": "mine"}}


def program_zip(world: World) -> dict[str, Any]:
    """A program as an organizer uploads it as a baseline (the world's phases run none: refused after the check of
    who may)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("predict.py", "print('hello')\n")
    return {"files": {"file": ("program.zip", buffer.getvalue(), "application/zip")}, "data": {"name": "mine"}}


def bundle(slug: str) -> Send:
    """A valid bundle zip; with the slug of an existing competition it must not replace that one."""
    return lambda world: {"files": {"bundle": ("bundle.zip", _bundle_zip(slug), "application/zip")}}


def _bundle_zip(slug: str) -> bytes:
    document = {
        "slug": slug,
        "title": slug.title(),
        "tasks": [
            {
                "slug": "labels",
                "title": "Labels",
                "scorer": "test-labels",
                "phases": [{"slug": "dev", "title": "Dev", "gold": {"path": "gold.json"}}],
            }
        ],
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("competition.yaml", yaml.safe_dump(document))
        archive.writestr("gold.json", plain_run())
    return buffer.getvalue()


CONFIRMED = form(confirmed="yes")
DIRECT = json_body(size=100, sha256="0" * 64, filename="run.json")
PHASE_FORM = {"starts_at": "", "ends_at": "", "daily_limit": "4", "total_limit": "", "visibility": "hidden"}
INVITE_A = frozenset({"invite_a"})
NEW_PASSWORD = "another long password"
new_password_json = json_body(current_password=PASSWORD, new_password=NEW_PASSWORD)
new_password_form = form(current_password=PASSWORD, new_password=NEW_PASSWORD, new_password_again=NEW_PASSWORD)
NEWCOMER = {"name": "newcomer", "password": PASSWORD}

# -- the table ------------------------------------------------------------------------------------------

API = "/api/v1"
C = API + "/competitions/{competition}"
T = C + "/tasks/{task}"
PH = T + "/phases/{phase}"
OPEN_PH = f"{API}/competitions/main/tasks/labels/phases/{OPEN}"
S = API + "/submissions/{submission_id}"
PAGE = "/c/{competition}/{task}/{phase}"
QP = "/c/{competition}/organize/queues"
OPEN_PAGE = f"/c/main/labels/{OPEN}"
MISSING = 987654321

# fmt: off
TABLE: tuple[Row, ...] = (
    #                                                    anon  A    B  other org admin
    # accounts, tokens, teams
    row("POST", API + "/users",                          201, 201, 201, 201, 201, 201, send=json_body(**NEWCOMER)),
    row("POST", API + "/tokens",                         201, 201, 201, 201, 201, 201,
        send=json_body(name="ann", password=PASSWORD)),
    row("GET", API + "/me",                              401, 200, 200, 200, 200, 200),
    row("GET", API + "/me/submissions",                  401, 200, 200, 200, 200, 200,
        shows={TEAM_A: {"file_a"}, TEAM_B: {"file_b"}}),
    row("POST", API + "/me/password",                    401, 200, 200, 200, 200, 200, send=new_password_json),
    row("POST", API + "/users/{name}/sign-out",          401, 403, 403, 403, 403, 200,
        path=API + "/users/ann/sign-out"),
    row("GET", C + "/team",                              401, 200, 200, 404, 404, 404,
        shows={TEAM_A: {"invite_a"}, TEAM_B: {"invite_b"}}),
    row("POST", C + "/teams",                            401, 409, 409, 201, 201, 201, send=json_body(name="Fresh")),
    row("POST", C + "/teams/join",                       401, 200, 409, 200, 200, 200, send=join_a, carries=INVITE_A),
    row("PATCH", C + "/team",                            401, 200, 200, 404, 404, 404, send=json_body(name="Renamed"),
        shows={TEAM_A: {"invite_a"}, TEAM_B: {"invite_b"}}),
    row("POST", C + "/team/leave",                       401, 200, 200, 404, 404, 404),
    row("DELETE", C + "/team/members/{name}",            401, 404, 409, 404, 404, 404,
        path=API + "/competitions/main/team/members/ben"),
    # competitions, tasks, phases and their files
    row("GET", API + "/competitions",                    200, 200, 200, 200, 200, 200),
    row("POST", API + "/competitions",                   401, 403, 403, 201, 201, 201, send=bundle("fresh")),
    row("POST", API + "/competitions",                   401, 403, 403, 409, 409, 409, send=bundle("main")),
    row("GET", C,                                        200, 200, 200, 200, 200, 200),
    row("GET", T,                                        200, 200, 200, 200, 200, 200),
    row("GET", PH,                                       200, 200, 200, 200, 200, 200),
    row("PATCH", PH,                                     401, 403, 403, 403, 200, 200, send=json_body(daily_limit=7)),
    row("PATCH", PH,                                     401, 403, 403, 200, 403, 200,
        path=API + "/competitions/other/tasks/labels/phases/dev", send=json_body(ends_at=None)),
    row("GET", PH + "/changes",                          401, 403, 403, 403, 200, 200),
    row("GET", T + "/files/{name}",                      200, 200, 200, 200, 200, 200, path=T + "/files/train.json"),
    row("GET", T + "/files/{name}",                      404, 404, 404, 404, 404, 404, path=T + "/files/notes.txt"),
    row("GET", PH + "/files/{name}",                     200, 200, 200, 200, 200, 200, path=PH + "/files/inputs.txt"),
    row("GET", PH + "/files/{name}",                     404, 404, 404, 404, 404, 404, path=PH + "/files/gold.json"),
    row("GET", PH + "/sample",                           200, 200, 200, 200, 200, 200),
    # participation
    row("POST", C + "/participation",                    401, 200, 200, 200, 200, 200),
    row("GET", C + "/participants",                      401, 403, 403, 403, 200, 200),
    row("GET", C + "/participants",                      401, 403, 403, 200, 403, 200,
        path=API + "/competitions/other/participants"),
    row("GET", C + "/usage",                             401, 403, 403, 403, 200, 200),
    row("GET", C + "/usage",                             401, 403, 403, 200, 403, 200,
        path=API + "/competitions/other/usage"),
    row("POST", C + "/participants/{name}/approve",      401, 403, 403, 403, 200, 200),
    row("POST", C + "/participants/{name}/refuse",       401, 403, 403, 403, 200, 200),
    row("DELETE", C + "/participants/{name}",            401, 403, 403, 403, 204, 204),
    # submissions
    row("POST", PH + "/submissions",                     401, 202, 202, 403, 202, 202, send=upload),
    row("POST", PH + "/baseline-programs",               401, 403, 403, 403, 409, 409, send=program_zip),
    # direct uploads: who may is checked before the answer that this world's store offers none
    row("POST", PH + "/direct-uploads",                  401, 409, 409, 403, 409, 409, send=DIRECT),
    row("POST", PH + "/direct-uploads/complete",         401, 409, 409, 409, 409, 409,
        send=json_body(upload="t", etags=["e"])),
    row("GET", PH + "/submissions",                      401, 200, 200, 200, 200, 200,
        shows={TEAM_A: {"file_a"}, TEAM_B: {"file_b"}}),
    row("GET", PH + "/submissions",                      401, 403, 403, 403, 200, 200,
        path=PH + "/submissions?all=true",
        shows=organizers_see("hidden_numbers", "org_message")),
    row("POST", PH + "/rescore",                         401, 403, 403, 403, 202, 202),
    row("GET", S,                                        401, 200, 404, 404, 200, 200,
        path=API + "/submissions/{a_hidden}",
        shows={**organizers_see("hidden_numbers", "file_a"), TEAM_A: {"file_a"}}),
    row("GET", S,                                        401, 404, 200, 404, 200, 200,
        path=API + "/submissions/{b_open}", shows={TEAM_B: {"file_b"}}),
    row("GET", S,                                        401, 200, 404, 404, 200, 200,
        path=API + "/submissions/{a_failed}",
        shows=organizers_see("org_message", "code_log")),
    row("GET", S,                                        401, 404, 404, 404, 404, 404,
        path=f"{API}/submissions/{MISSING}"),
    row("POST", S + "/rescore",                          401, 403, 404, 404, 202, 202,
        path=API + "/submissions/{a_hidden}/rescore"),
    row("POST", S + "/choose",                           401, 200, 404, 404, 200, 200,
        path=API + "/submissions/{a_hidden}/choose"),
    row("POST", S + "/unchoose",                         401, 200, 404, 404, 200, 200,
        path=API + "/submissions/{a_hidden}/unchoose"),
    row("DELETE", S,                                     401, 204, 404, 404, 403, 403,
        path=API + "/submissions/{a_hidden}"),
    # organizers deleting a phase's submissions or a competition, site admins an account
    row("DELETE", PH + "/submissions",                   401, 403, 403, 403, 200, 200),
    row("DELETE", C,                                     401, 403, 403, 403, 200, 200),
    row("DELETE", C,                                     401, 403, 403, 200, 403, 200,
        path=API + "/competitions/other"),
    row("DELETE", API + "/users/{name}",                 401, 403, 403, 403, 403, 200, path=f"{API}/users/{PENDING}"),
    # leaderboards
    row("GET", PH + "/leaderboard",                      200, 200, 200, 200, 200, 200,
        shows=organizers_see("hidden_numbers")),
    row("GET", PH + "/leaderboard",                      200, 200, 200, 200, 200, 200, path=OPEN_PH + "/leaderboard",
        shows={actor: {"public_numbers"} for actor in ACTORS}),
    row("POST", PH + "/reveal",                          401, 403, 403, 403, 200, 200),
    # hosted baselines
    row("GET", API + "/baselines",                       200, 200, 200, 200, 200, 200),
    row("POST", PH + "/baseline-runs",                   401, 403, 403, 403, 202, 202,
        send=json_body(baseline=BASELINE)),
    row("GET", PH + "/baseline-runs",                    401, 403, 403, 403, 200, 200, path=OPEN_PH + "/baseline-runs",
        shows=organizers_see("run_log")),
    row("GET", API + "/baseline-runs/{run_id}",          401, 404, 404, 404, 200, 200, shows=organizers_see("run_log")),
    row("POST", API + "/baseline-runs/{run_id}/cancel",  401, 404, 404, 404, 202, 202),
    # a competition's own queues (organizers; the world's phases run no code) and the remote worker protocol (a
    # worker credential only: no API token, no session opens it; a file link is signed)
    row("POST", C + "/queues",                           401, 403, 403, 403, 201, 201, send=json_body(name="lab")),
    row("GET", C + "/queues",                            401, 403, 403, 403, 200, 200),
    row("GET", C + "/queues/{name}",                     401, 403, 403, 403, 404, 404, path=C + "/queues/lab"),
    row("POST", C + "/queues/{name}/credentials",        401, 403, 403, 403, 404, 404,
        path=C + "/queues/lab/credentials", send=json_body(label="box")),
    row("POST", C + "/queues/{name}/credentials/{credential_id}/revoke", 401, 403, 403, 403, 404, 404,
        path=C + "/queues/lab/credentials/1/revoke"),
    row("POST", C + "/queues/{name}/credentials/{credential_id}/rotate", 401, 403, 403, 403, 404, 404,
        path=C + "/queues/lab/credentials/1/rotate"),
    row("PUT", PH + "/queue",                            401, 403, 403, 403, 409, 409, send=json_body(queue=None)),
    row("PUT", PH + "/queue",                            401, 403, 403, 403, 409, 409,
        send=json_body(queue=None, scoring=True)),
    row("DELETE", C + "/queues/{name}",                  401, 403, 403, 403, 404, 404, path=C + "/queues/lab"),
    row("POST", API + "/worker/claim",                   401, 401, 401, 401, 401, 401),
    row("POST", API + "/worker/runs/{run_id}/heartbeat", 401, 401, 401, 401, 401, 401,
        path=API + "/worker/runs/1/heartbeat", send=json_body(lease="1.1.0")),
    row("POST", API + "/worker/runs/{run_id}/result",    401, 401, 401, 401, 401, 401,
        path=API + "/worker/runs/1/result"),
    row("GET", API + "/worker/files/{token}",            403, 403, 403, 403, 403, 403,
        path=API + "/worker/files/forged"),
    row("POST", API + "/worker/scorings/{submission_id}/heartbeat", 401, 401, 401, 401, 401, 401,
        path=API + "/worker/scorings/1/heartbeat", send=json_body(lease="1.1.0")),
    row("POST", API + "/worker/scorings/{submission_id}/result", 401, 401, 401, 401, 401, 401,
        path=API + "/worker/scorings/1/result"),
    row("GET", API + "/health",                          200, 200, 200, 200, 200, 200),

    # -- pages -------------------------------------------------------------------------------------------
    row("GET", "/readyz",                                200, 200, 200, 200, 200, 200),
    row("GET", "/metrics",                               200, 200, 200, 200, 200, 200),
    row("GET", "/healthz",                               200, 200, 200, 200, 200, 200),
    row("GET", "/favicon.ico",                           200, 200, 200, 200, 200, 200),
    row("GET", "/",                                      200, 200, 200, 200, 200, 200),
    row("GET", "/c/{competition}",                       200, 200, 200, 200, 200, 200),
    row("GET", PAGE,                                     200, 200, 200, 200, 200, 200,
        shows=organizers_see("hidden_numbers")),
    row("GET", PAGE,                                     200, 200, 200, 200, 200, 200, path=OPEN_PAGE,
        shows={actor: {"public_numbers"} for actor in ACTORS}),
    row("GET", PAGE + "/leaderboard.{extension}",        404, 404, 404, 404, 200, 200, path=PAGE + "/leaderboard.csv",
        shows=organizers_see("hidden_numbers")),
    row("GET", PAGE + "/leaderboard.{extension}",        200, 200, 200, 200, 200, 200,
        path=OPEN_PAGE + "/leaderboard.json", shows={actor: {"public_numbers"} for actor in ACTORS}),
    row("GET", PAGE + "/leaderboard.{extension}",        404, 404, 404, 404, 404, 404,
        path=OPEN_PAGE + "/leaderboard.xml"),
    row("GET", PAGE + "/documents.{extension}",         404, 404, 404, 404, 200, 200, path=PAGE + "/documents.json"),
    row("GET", PAGE + "/documents.{extension}",         200, 200, 200, 200, 200, 200,
        path=OPEN_PAGE + "/documents.csv"),
    row("GET", PAGE + "/progress.svg",                   404, 404, 404, 404, 200, 200),
    row("GET", PAGE + "/progress.svg",                   200, 200, 200, 200, 200, 200,
        path=OPEN_PAGE + "/progress.svg"),
    row("GET", PAGE + "/boards/{name}",                  404, 404, 404, 404, 200, 200, path=PAGE + "/boards/all",
        shows=organizers_see("hidden_numbers")),
    row("GET", PAGE + "/boards/{name}",                  200, 200, 200, 200, 200, 200,
        path=OPEN_PAGE + "/boards/all", shows={actor: {"public_numbers"} for actor in ACTORS}),
    row("GET", PAGE + "/boards/{name}",                  404, 404, 404, 404, 404, 404, path=OPEN_PAGE + "/boards/none"),
    row("GET", PAGE + "/boards/{name}.{extension}",      404, 404, 404, 404, 200, 200, path=PAGE + "/boards/all.json",
        shows=organizers_see("hidden_numbers")),
    row("GET", PAGE + "/boards/{name}.{extension}",      200, 200, 200, 200, 200, 200,
        path=OPEN_PAGE + "/boards/all.csv", shows={actor: {"public_numbers"} for actor in ACTORS}),
    row("GET", "/login",                                 200, 200, 200, 200, 200, 200),
    row("POST", "/login",                                303, 303, 303, 303, 303, 303,
        send=form(name="ann", password=PASSWORD)),
    row("POST", "/logout",                               303, 303, 303, 303, 303, 303),
    row("GET", "/register",                              200, 200, 200, 200, 200, 200),
    row("GET", "/account",                               303, 200, 200, 200, 200, 200),
    row("POST", "/account/password",                     401, 303, 303, 303, 303, 303, send=new_password_form),
    row("POST", "/account/sign-out",                     401, 403, 403, 403, 403, 303, send=form(name="ben")),
    row("GET", "/reset/{token}",                         404, 404, 404, 404, 404, 404, path="/reset/not-a-link"),
    row("POST", "/reset/{token}",                        404, 404, 404, 404, 404, 404, path="/reset/not-a-link",
        send=new_password_form),
    row("POST", "/register",                             303, 303, 303, 303, 303, 303,
        send=form(**NEWCOMER, password_again=PASSWORD)),
    row("GET", "/c/{competition}/team",                  303, 200, 200, 200, 200, 200,
        shows={TEAM_A: {"invite_a"}, TEAM_B: {"invite_b"}}),
    row("POST", "/c/{competition}/team/create",          401, 303, 303, 303, 303, 303, send=form(name="Fresh")),
    row("POST", "/c/{competition}/team/rename",          401, 303, 303, 303, 303, 303, send=form(name="Renamed")),
    row("POST", "/c/{competition}/team/leave",           401, 303, 303, 303, 303, 303),
    row("POST", "/c/{competition}/team/remove",          401, 303, 303, 303, 303, 303, send=form(member="ben")),
    row("POST", "/c/{competition}/team/join",            401, 303, 303, 303, 303, 303, send=join_a_form,
        carries=INVITE_A),
    row("POST", "/c/{competition}/participate",          401, 303, 303, 303, 303, 303),
    row("GET", PAGE + "/submit",                         303, 200, 200, 200, 200, 200),
    row("POST", PAGE + "/submit",                        401, 303, 303, 403, 303, 303, send=upload),
    row("GET", PAGE + "/submissions",                    303, 200, 200, 200, 200, 200),
    row("GET", "/submissions",                           303, 200, 200, 200, 200, 200),
    row("GET", "/submissions/{submission_id}",           404, 200, 404, 404, 200, 200, path="/submissions/{a_hidden}",
        shows=organizers_see("hidden_numbers")),
    row("GET", "/submissions/{submission_id}",           200, 200, 200, 200, 200, 200, path="/submissions/{b_open}"),
    row("GET", "/submissions/{submission_id}",           404, 200, 404, 404, 200, 200, path="/submissions/{a_failed}",
        shows=organizers_see("code_log")),
    row("GET", "/submissions/{submission_id}",           404, 404, 404, 404, 404, 404, path=f"/submissions/{MISSING}"),
    row("GET", "/submissions/{submission_id}/status.json", 404, 200, 404, 404, 200, 200,
        path="/submissions/{a_hidden}/status.json"),
    row("GET", "/submissions/{submission_id}/status.json", 200, 200, 200, 200, 200, 200,
        path="/submissions/{b_open}/status.json"),
    row("GET", "/submissions/{submission_id}/documents.svg", 404, 200, 404, 404, 200, 200,
        path="/submissions/{a_hidden}/documents.svg"),
    row("GET", "/submissions/{submission_id}/documents.svg", 200, 200, 200, 200, 200, 200,
        path="/submissions/{b_open}/documents.svg"),
    row("POST", "/submissions/{submission_id}/choose",   401, 303, 404, 404, 303, 303,
        path="/submissions/{a_hidden}/choose"),
    row("POST", "/submissions/{submission_id}/unchoose", 401, 303, 404, 404, 303, 303,
        path="/submissions/{a_hidden}/unchoose"),
    # Deleting asks its team first (200, nothing done), then acts.
    row("POST", "/submissions/{submission_id}/delete",   401, 200, 404, 404, 403, 403,
        path="/submissions/{a_hidden}/delete"),
    row("POST", "/submissions/{submission_id}/delete",   401, 303, 404, 404, 403, 403,
        path="/submissions/{a_hidden}/delete", send=CONFIRMED),
    # Deleting a phase's submissions, a competition or an account asks first (200, nothing done), then acts.
    row("POST", PAGE + "/organize/delete-submissions",   401, 403, 403, 403, 200, 200),
    row("POST", PAGE + "/organize/delete-submissions",   401, 403, 403, 403, 303, 303, send=CONFIRMED),
    row("POST", "/c/{competition}/organize/delete",      401, 403, 403, 403, 200, 200),
    row("POST", "/c/{competition}/organize/delete",      401, 403, 403, 403, 303, 303, send=CONFIRMED),
    row("POST", "/c/{competition}/organize/delete",      401, 403, 403, 303, 403, 303, path="/c/other/organize/delete",
        send=CONFIRMED),
    row("POST", "/account/delete-user",                  401, 403, 403, 403, 403, 200, send=form(name=PENDING)),
    row("POST", "/account/delete-user",                  401, 403, 403, 403, 403, 303,
        send=form(name=PENDING, confirmed="yes")),
    row("GET", PAGE + "/organize",                       303, 403, 403, 403, 200, 200,
        shows=organizers_see("hidden_numbers", "org_message")),
    row("GET", PAGE + "/organize",                       303, 403, 403, 200, 403, 200,
        path="/c/other/labels/dev/organize"),
    # Rescoring everything, revealing and cancelling a run ask first (200, nothing done), then act.
    row("POST", PAGE + "/organize/rescore",              401, 403, 403, 403, 200, 200),
    row("POST", PAGE + "/organize/rescore",              401, 403, 403, 403, 303, 303, send=CONFIRMED),
    row("POST", PAGE + "/organize/reveal",               401, 403, 403, 403, 200, 200),
    row("POST", PAGE + "/organize/reveal",               401, 403, 403, 403, 303, 303, send=CONFIRMED),
    row("POST", PAGE + "/organize/phase",                401, 403, 403, 403, 303, 303, send=form(**PHASE_FORM)),
    row("GET", "/competitions/new",                      303, 403, 403, 200, 200, 200),
    row("POST", "/competitions/new",                     401, 403, 403, 303, 303, 303, send=bundle("fresh")),
    row("POST", "/competitions/new",                     401, 403, 403, 409, 409, 409, send=bundle("main")),
    row("GET", "/c/{competition}/organize",              303, 403, 403, 403, 200, 200),
    row("GET", "/c/{competition}/organize",              303, 403, 403, 200, 403, 200, path="/c/other/organize"),
    row("POST", "/c/{competition}/organize/participants/{action}", 401, 403, 403, 403, 303, 303,
        path="/c/{competition}/organize/participants/approve", send=form(name=PENDING)),
    row("POST", "/c/{competition}/organize/participants/{action}", 401, 403, 403, 403, 303, 303,
        path="/c/{competition}/organize/participants/refuse", send=form(name=PENDING)),
    row("POST", "/c/{competition}/organize/participants/{action}", 401, 403, 403, 403, 303, 303,
        path="/c/{competition}/organize/participants/remove", send=form(name=PENDING)),
    row("GET", PAGE + "/organize/everything.zip",        303, 403, 403, 403, 200, 200,
        shows=organizers_see("hidden_numbers", "org_message", "file_a", "file_b")),
    row("POST", PAGE + "/organize/baseline-runs",        401, 403, 403, 403, 303, 303, send=form(baseline=BASELINE)),
    row("POST", PAGE + "/organize/baseline-programs",    401, 403, 403, 403, 409, 409, send=program_zip),
    row("GET", "/baseline-runs/{run_id}/status.json",    303, 404, 404, 404, 200, 200),
    row("POST", "/baseline-runs/{run_id}/cancel",        401, 404, 404, 404, 200, 200),
    row("POST", "/baseline-runs/{run_id}/cancel",        401, 404, 404, 404, 303, 303, send=CONFIRMED),
    # a competition's own queues (the world has none, and its phases run no code)
    row("GET", QP,                                       303, 403, 403, 403, 200, 200),
    row("POST", QP,                                      401, 403, 403, 403, 303, 303, send=form(name="lab")),
    row("POST", QP + "/{name}/credentials",              401, 403, 403, 403, 404, 404, path=QP + "/lab/credentials",
        send=form(label="box")),
    row("POST", QP + "/{name}/credentials/{credential_id}/rotate", 401, 403, 403, 403, 404, 404,
        path=QP + "/lab/credentials/1/rotate"),
    row("POST", QP + "/{name}/credentials/{credential_id}/revoke", 401, 403, 403, 403, 404, 404,
        path=QP + "/lab/credentials/1/revoke"),
    row("POST", QP + "/route",                           401, 403, 403, 403, 409, 409,
        send=form(phase=f"labels/{OPEN}", queue="")),
    row("POST", QP + "/{name}/delete",                   401, 403, 403, 403, 404, 404, path=QP + "/lab/delete"),
    row("POST", QP + "/{name}/delete",                   401, 403, 403, 403, 404, 404, path=QP + "/lab/delete",
        send=CONFIRMED),
    row("POST", "/submissions/{submission_id}/rescore",  401, 403, 404, 404, 303, 303,
        path="/submissions/{a_hidden}/rescore"),
)
# fmt: on


# -- the world and the checks ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def world(migrated: Database, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    register(LabelScorer)
    try:
        with registered():
            built = World(migrated, tmp_path_factory.mktemp("matrix-data"))
            try:
                yield built
            finally:
                built.close()
    finally:
        unregister(LabelScorer.name)


def secrets_of(world: World) -> dict[str, tuple[str | re.Pattern[str], ...]]:
    c = world.canaries
    return {
        "gold": (c.gold_open, c.gold_hidden, c.resource),
        "hidden_numbers": HIDDEN_NUMBERS,
        "file_a": (c.file_a, c.name_a),
        "file_b": (c.file_b, c.name_b),
        "org_message": (c.org_message,),
        "run_log": (c.run_log,),
        "code_log": (c.code_log,),
        "invite_a": (c.invite_a,),
        "invite_b": (c.invite_b,),
        "public_numbers": PUBLIC_NUMBERS,
    }


def readable(answer: Response) -> str:
    """The answer's headers and body as text; a zip's member names and contents are read out."""
    data = answer.content
    if data[:4] == b"PK\x03\x04":
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            data = b"\n".join(name.encode() + b"\n" + archive.read(name) for name in archive.namelist())
    headers = "\n".join(f"{key}: {value}" for key, value in answer.headers.items())
    return headers + "\n\n" + data.decode("utf-8", "replace")


def found(text: str, needles: tuple[str | re.Pattern[str], ...]) -> list[str]:
    hits = []
    for needle in needles:
        if isinstance(needle, str):
            if needle in text:
                hits.append(needle)
        elif match := needle.search(text):
            hits.append(match.group(0))
    return hits


def send(world: World, actor: str, entry: Row) -> Response:
    client = world.client
    client.cookies.clear()
    kwargs = entry.send(world) if entry.send else {}
    headers: dict[str, str] = {}
    if entry.page:
        cookie, csrf = world.sessions[actor]
        headers["Cookie"] = f"{COOKIE}={cookie}"
        if entry.method == "POST":
            kwargs["data"] = {**kwargs.get("data", {}), "csrf_token": csrf}
    elif actor != ANONYMOUS:
        headers["Authorization"] = f"Bearer {world.tokens[actor]}"
    path = entry.path.format(**world.params())
    return client.request(entry.method, path, headers=headers, follow_redirects=False, **kwargs)


def check_cell(world: World, actor: str, entry: Row) -> list[str]:
    """What is wrong with one actor's answer to one row. A GET, a refusal or a server error must leave
    the database as it was; whatever changed it, the world is restored for the next cell."""
    answer: Response | None = None
    try:
        answer = send(world, actor, entry)
    except Exception as exc:  # a server error: reported with the other problems, the matrix goes on
        problems = [f"the server raised {exc!r}"]
    else:
        problems = check_answer(world, actor, entry, answer)
    if world.changed():
        if entry.method == "GET" or answer is None or answer.status_code >= 400:
            problems.append("changed the database although it only read, was refused or failed")
        world.restore()
    return [f"{entry.id} as {actor}: {p}" for p in problems]


def check_answer(world: World, actor: str, entry: Row, answer: Response) -> list[str]:
    """The status, the secrets the actor may not see, and those the row says the actor must see."""
    problems = []
    expected = entry.statuses[actor]
    if answer.status_code != expected:
        problems.append(f"status {answer.status_code}, expected {expected}: {answer.text[:300]!r}")
    text = readable(answer)
    secrets = secrets_of(world)
    for kind, allowed in MAY_SEE.items():
        if actor not in allowed and kind not in entry.carries and (leaked := found(text, secrets[kind])):
            problems.append(f"leaks {kind}: {leaked}")
    for kind in entry.shows.get(actor, ()):
        if not found(text, secrets[kind]):
            problems.append(f"does not show {kind}, which this actor may see here")
    return problems


@pytest.mark.parametrize("entry", TABLE, ids=[f"{r.id}" for r in TABLE])
def test_each_actor_gets_the_expected_answer_and_no_secret(world: World, entry: Row) -> None:
    problems = [p for actor in ACTORS for p in check_cell(world, actor, entry)]
    assert not problems, "\n".join(problems)


def test_a_change_made_through_the_app_or_any_engine_is_seen_and_undone(world: World) -> None:
    """The world compares its tables only after a statement that could write: both kinds must be noticed."""
    assert not world.changed()
    world.client.cookies.clear()
    created = world.client.post(API + "/users", json=NEWCOMER)
    assert created.status_code == 201, created.text
    assert world.changed()
    world.restore()
    assert not world.changed()
    with world.db.engine.begin() as connection:
        connection.execute(text("UPDATE users SET email = 'changed@example.org' WHERE name = 'ann'"))
    assert world.changed()
    world.restore()
    assert not world.changed()


# -- the table covers the app ---------------------------------------------------------------------------


def app_routes(tmp_path: Path, database_url: str) -> set[tuple[str, str]]:
    """Every (method, path template) the app serves, documentation and static files left out."""
    app = create_app(Settings(database_url=database_url, workers=0, data_dir=tmp_path, secret_key="x"))
    routes: set[tuple[str, str]] = set()
    for route in iter_route_contexts(app.routes):
        if isinstance(getattr(route, "original_route", route), Mount):
            assert route.path in MOUNTS, f"a new mount {route.path}: add it to MOUNTS if it serves only static files"
            continue
        for method in sorted(set(route.methods or ()) - {"HEAD"}):
            routes.add((method, str(route.path)))
    return routes - NOT_IN_TABLE


def test_every_route_is_in_the_table(tmp_path: Path, database_url: str) -> None:
    served = app_routes(tmp_path, database_url)
    covered = {(r.method, r.template) for r in TABLE}
    missing = sorted(served - covered)
    stale = sorted(covered - served)
    assert not missing, "routes missing from the authorization table: " + ", ".join(f"{m} {p}" for m, p in missing)
    assert not stale, "rows of the table for routes the app no longer has: " + ", ".join(f"{m} {p}" for m, p in stale)


# -- the two kinds of credentials do not stand in for each other ------------------------------------------


def test_a_session_cookie_does_not_open_the_api_and_a_token_does_not_open_the_pages(world: World) -> None:
    client = world.client
    client.cookies.clear()
    cookie, _ = world.sessions[ORGANIZER]
    by_cookie = client.get(API + "/me", headers={"Cookie": f"{COOKIE}={cookie}"})
    assert by_cookie.status_code == 401
    by_token = client.get(
        "/c/main/labels/secret/organize",
        headers={"Authorization": f"Bearer {world.tokens[ORGANIZER]}"},
        follow_redirects=False,
    )
    assert (by_token.status_code, by_token.headers["location"]) == (
        303,
        "/login?next=%2Fc%2Fmain%2Flabels%2Fsecret%2Forganize",
    )
