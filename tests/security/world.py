"""The fixture world of the authorization matrix: two competitions, six actors, and planted canaries.

Every secret the server holds is a unique string (a canary) or a distinctive number, so a test can
tell from any answer whether it leaked:

* the gold of each phase of ``main`` labels its last id with ``GOLD-CANARY-...`` (no submission
  ever writes it), and the task's organizer-only resource holds ``RESOURCE-CANARY-...``;
* the hidden phase ``secret`` holds scored submissions of team A (5 of 13 right: 0.3846..., shown as
  38.46) and team B (7 of 13: 0.5384..., 53.85);
* the public phase ``open`` holds team A at 11 of 13 (0.8461..., 84.62) and team B at 9 of 13;
* every file team A uploads carries ``FILE-A-CANARY-...`` (as its wrong label of the last id) and
  is named ``NAME-A-CANARY-....json``; team B's files likewise;
* team A has a submission the platform failed, with the organizer message ``ORG-CANARY-...``;
* a baseline run queued by the organizers on the public phase has ``RUN-LOG-CANARY-...`` in its log;
* team A's failed submission has the run of a program whose stdout and stderr hold ``CODE-LOG-CANARY-...``
  (its phase does not show logs to teams: organizers only);
* the teams' invite codes are ``INVITE-A-...`` and ``INVITE-B-...``.

The world is built once through the services and the real scoring job, then kept as a snapshot of
every table; after a request changes anything, the snapshot is written back and a new app is
started, so no cell of the matrix sees another cell's doing. Whether anything changed is asked of
the tables only when a statement other than a SELECT ran since the last look (any engine of this
process: ``WriteWatch``), which spares the comparison after most requests. Each actor logs in once through the
login form; the signed session cookie stays valid across restores (same user ids, same password
hashes, same secret key).
"""

from __future__ import annotations

import json
import re
import uuid
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import event, select
from sqlalchemy.engine import Engine

from app.config import Settings
from app.main import create_app
from app.services.accounts import teams, users
from app.services.baselines import runs
from app.services.bundles.spec import BundleFile
from app.services.competitions import catalog, participation
from app.services.jobs.kinds import JobContext
from app.services.scoring import steps
from app.services.scoring.gold import GoldCache
from app.services.scoring.job import score_submission
from app.services.submissions import intake
from app.storage.db import Database
from app.storage.models import Base, CodeRun, RunStatus, Submission
from app.storage.types import utcnow
from app.web.sessions import COOKIE
from leaderboard.multi import BoardSpec
from tests.app.builders import PASSWORD, bundle_file, competition_spec, make_user, phase_spec
from tests.app.labels_baselines import NAME as BASELINE

ANONYMOUS, TEAM_A, TEAM_B, OTHER_ORGANIZER, ORGANIZER, ADMIN = ACTORS = (
    "anonymous",
    "team_a",
    "team_b",
    "other_organizer",
    "organizer",
    "admin",
)
#: The account of each actor (the anonymous one has none); ``pat`` asked to take part and waits.
NAMES = {TEAM_A: "ann", TEAM_B: "ben", OTHER_ORGANIZER: "oscar", ORGANIZER: "olga", ADMIN: "root"}
PENDING = "pat"
MAIN, OTHER, TASK, OPEN, HIDDEN = "main", "other", "labels", "open", "secret"
IDS = tuple(f"d{n:02d}" for n in range(1, 14))
SECRET_KEY = "a fixed key, so that session cookies outlive the app that signed them"


def _canary(kind: str) -> str:
    return f"{kind}-CANARY-{uuid.uuid4().hex}"


@dataclass(frozen=True)
class Canaries:
    """The planted secrets, fresh for each world (so a stale copy elsewhere cannot match)."""

    gold_open: str = field(default_factory=lambda: _canary("GOLD"))
    gold_hidden: str = field(default_factory=lambda: _canary("GOLD"))
    resource: str = field(default_factory=lambda: _canary("RESOURCE"))
    file_a: str = field(default_factory=lambda: _canary("FILE-A"))
    file_b: str = field(default_factory=lambda: _canary("FILE-B"))
    #: The names the teams' files were uploaded under, shown like the files themselves.
    name_a: str = field(default_factory=lambda: _canary("NAME-A"))
    name_b: str = field(default_factory=lambda: _canary("NAME-B"))
    org_message: str = field(default_factory=lambda: _canary("ORG"))
    run_log: str = field(default_factory=lambda: _canary("RUN-LOG"))
    code_log: str = field(default_factory=lambda: _canary("CODE-LOG"))
    # Invite codes are at most 32 characters.
    invite_a: str = field(default_factory=lambda: f"INVITE-A-{uuid.uuid4().hex[:20]}")
    invite_b: str = field(default_factory=lambda: f"INVITE-B-{uuid.uuid4().hex[:20]}")


def _number(fraction: float) -> tuple[re.Pattern[str], ...]:
    """How a score shows: as a fraction (JSON, CSV: ``0.384615...``) and as a percentage (``38.46``)."""
    digits = repr(fraction)[:8]  # cut, not rounded: 11/13 is 0.846153846...
    percent = f"{fraction * 100:.2f}"
    return (re.compile(re.escape(digits)), re.compile(r"(?<![\d.])" + re.escape(percent) + r"(?!\d)"))


#: A further board of each phase (``boards``), which shows its numbers as the phase's board does. Ranked by ranks,
#: so that it shows no interval: at 13 units an interval's end can be 5/13, a hidden number, by coincidence.
BOARDS = (BoardSpec("all", "All", ("accuracy", "accuracy"), ranking="mean_of_ranks"),)
#: Numbers of the hidden phase (5/13 and 7/13) and of the public one (11/13 and 9/13).
HIDDEN_NUMBERS = _number(5 / 13) + _number(7 / 13)
PUBLIC_NUMBERS = _number(11 / 13) + _number(9 / 13)


def gold(canary: str) -> dict[str, str]:
    """Labels x and y in turn, the last id labelled with the canary (which no submission writes)."""
    labels = {key: "xy"[n % 2] for n, key in enumerate(IDS)}
    labels[IDS[-1]] = canary
    return labels


def _gold_file(canary: str) -> BundleFile:
    return bundle_file("gold.json", json.dumps(gold(canary)).encode())


def run(right: int, canary: str) -> bytes:
    """A submission with the first ``right`` ids right, the rest wrong; the last carries ``canary``."""
    truth = gold("")
    labels = {key: truth[key] if n < right else "z" for n, key in enumerate(IDS)}
    labels[IDS[-1]] = canary
    return json.dumps(labels).encode()


def plain_run() -> bytes:
    """A valid submission that holds no canary (for the actors' own uploads)."""
    return json.dumps(dict.fromkeys(IDS, "x")).encode()


def _snapshot(db: Database) -> dict[str, list[dict[str, Any]]]:
    """Every row of every table, in primary key order."""
    out: dict[str, list[dict[str, Any]]] = {}
    with db.engine.connect() as connection:
        for table in Base.metadata.sorted_tables:
            rows = connection.execute(select(table).order_by(*table.primary_key.columns))
            out[table.name] = [dict(row._mapping) for row in rows]
    return out


def _clear(db: Database) -> None:
    with db.engine.begin() as connection:
        for table in reversed(Base.metadata.sorted_tables):
            connection.execute(table.delete())


def _restore(db: Database, snapshot: dict[str, list[dict[str, Any]]]) -> None:
    _clear(db)
    with db.engine.begin() as connection:
        for table in Base.metadata.sorted_tables:
            if snapshot[table.name]:
                connection.execute(table.insert(), snapshot[table.name])


class WriteWatch:
    """Notes every SQL statement of any engine in this process that is not a plain SELECT: what could have
    changed a row. Statements are classed by their first word, so a write can only be over-counted."""

    def __init__(self) -> None:
        self.wrote = False
        event.listen(Engine, "before_cursor_execute", self._note)

    def _note(self, conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if not statement.lstrip().upper().startswith("SELECT"):
            self.wrote = True

    def close(self) -> None:
        if event.contains(Engine, "before_cursor_execute", self._note):
            event.remove(Engine, "before_cursor_execute", self._note)


class World:
    """The fixture world on ``db``, with a running app (no scoring pool: nothing moves by itself)."""

    def __init__(self, db: Database, data_dir: Path) -> None:
        self.db = db
        self.settings = Settings(database_url=db.url, workers=0, data_dir=data_dir, secret_key=SECRET_KEY)
        self.canaries = Canaries()
        self.ids: dict[str, int] = {}
        self.tokens: dict[str, str] = {}
        #: Per actor: the session cookie and its CSRF token.
        self.sessions: dict[str, tuple[str, str]] = {}
        self._stack = ExitStack()
        self._watch = WriteWatch()
        _clear(db)
        try:
            self._build()
            self._pristine = _snapshot(db)
            self._watch.wrote = False
            self.client = self._start()
            self._log_in()
        except BaseException:
            self.close()  # the tests after these start from empty tables
            raise

    # -- building ---------------------------------------------------------------------------------
    def _build(self) -> None:
        c = self.canaries
        with self.db.session() as session:
            people = {actor: make_user(session, name) for actor, name in NAMES.items()}
            people[OTHER_ORGANIZER].is_organizer = people[ORGANIZER].is_organizer = True
            people[ADMIN].is_admin = True
            pending = make_user(session, PENDING)
            inputs = bundle_file("inputs.txt", "\n".join(IDS).encode())
            main_spec = competition_spec(
                MAIN,
                organizers=(NAMES[ORGANIZER],),
                participation="approval",
                phases=(
                    # No intervals on the open phase: over its 13 units an interval's end is a multiple of 1/13, and
                    # 5/13 or 7/13 (the hidden phase's numbers) can be one by coincidence, not by a leak.
                    phase_spec(
                        OPEN, gold=_gold_file(c.gold_open), public_files=(inputs,), boards=BOARDS, intervals=False
                    ),
                    phase_spec(
                        HIDDEN,
                        visibility="hidden",
                        gold=_gold_file(c.gold_hidden),
                        public_files=(inputs,),
                        boards=BOARDS,
                    ),
                ),
            )
            task = replace(main_spec.tasks[0], resources=(bundle_file("notes.txt", c.resource.encode()),))
            main, _ = catalog.create_competition(session, replace(main_spec, tasks=(task,)))
            catalog.create_competition(session, competition_spec(OTHER, organizers=(NAMES[OTHER_ORGANIZER],)))
            for user in (people[TEAM_A], people[TEAM_B], pending):
                participation.request_participation(session, user, main)
            for user in (people[TEAM_A], people[TEAM_B]):
                participation.approve_participant(session, people[ORGANIZER], main, user.name)
            for actor, name, code in ((TEAM_A, "Team A", c.invite_a), (TEAM_B, "Team B", c.invite_b)):
                teams.create_team(session, people[actor], main, name).invite_code = code
            open_phase = catalog.get_phase(session, MAIN, TASK, OPEN)
            baseline_run = runs.start_run(session, people[ORGANIZER], open_phase, BASELINE)
            baseline_run.log_tail = c.run_log
            self.tokens = {actor: users.issue_token(session, user) for actor, user in people.items()}
            session.commit()
            self.ids["run_id"] = baseline_run.id

        ctx = JobContext(self.db, self.settings, GoldCache(4))
        plan = {
            "a_open": (TEAM_A, OPEN, run(11, c.file_a)),
            "b_open": (TEAM_B, OPEN, run(9, c.file_b)),
            "a_hidden": (TEAM_A, HIDDEN, run(5, c.file_a)),
            "b_hidden": (TEAM_B, HIDDEN, run(7, c.file_b)),
            "a_failed": (TEAM_A, HIDDEN, run(3, c.file_a)),
        }
        for key, (actor, phase, data) in plan.items():
            name = f"{c.name_a if actor == TEAM_A else c.name_b}.json"
            self.ids[key] = self._submit(ctx, actor, phase, data, name=name, method=f"method-{key}")
            if key == "a_failed":
                self._fail(ctx, self.ids[key], c.org_message)
            else:
                score_submission(ctx, self.ids[key])
        self._code_run(self.ids["a_failed"], c.code_log)

    def _submit(self, ctx: JobContext, actor: str, phase: str, data: bytes, *, name: str, method: str) -> int:
        with self.db.session() as session:
            user = users.find_user(session, NAMES[actor])
            upload = intake.Upload(data=data, filename=name, method_name=method)
            accepted = intake.submit(
                session, user, (MAIN, TASK, phase), upload, limits=ctx.limits, gold_cache=ctx.gold_cache
            )
            session.commit()
            return accepted.submission.id

    def _fail(self, ctx: JobContext, submission_id: int, message: str) -> None:
        """Fail the submission as a crashing worker would, with ``message`` for the organizers."""
        with self.db.session() as session:
            found = steps.claim(session, submission_id, worker="test", now=utcnow(), lease_seconds=60, max_attempts=3)
            assert found is not None
            steps.record_failure(session, found, now=utcnow(), organizer_message=message)
            session.commit()

    def _code_run(self, submission_id: int, log: str) -> None:
        """A program's run with ``log`` as its stdout and stderr, on the submission."""
        with self.db.session() as session:
            found = session.get(Submission, submission_id)
            assert found is not None
            outcome = "Your program failed: it exited with status 1."
            session.add(
                CodeRun(
                    submission_id=submission_id,
                    program_blob_id=found.blob_id,
                    status=RunStatus.FAILED,
                    exit_code=1,
                    outcome=outcome,
                    stdout=log,
                    stderr=log,
                )
            )
            session.commit()

    def _start(self) -> TestClient:
        client = TestClient(create_app(self.settings))
        return self._stack.enter_context(client)

    def _log_in(self) -> None:
        """Each actor logs in through the form once; the anonymous one only gets a CSRF token."""
        for actor in ACTORS:
            self.client.cookies.clear()
            if actor != ANONYMOUS:
                form = self.client.get("/login")
                answer = self.client.post(
                    "/login",
                    data={"csrf_token": csrf_of(form.text), "name": NAMES[actor], "password": PASSWORD},
                    follow_redirects=False,
                )
                assert answer.status_code == 303, f"{actor} could not log in: {answer.text}"
            page = self.client.get("/login")  # a fresh session has no CSRF token until a form is shown
            self.sessions[actor] = (self.client.cookies[COOKIE], csrf_of(page.text))
        self.client.cookies.clear()

    # -- keeping it pristine ------------------------------------------------------------------------
    def changed(self) -> bool:
        """Whether any row differs from the world as built; the tables are compared only after a write."""
        if not self._watch.wrote:
            return False
        self._watch.wrote = _snapshot(self.db) != self._pristine  # compared again until it is restored
        return self._watch.wrote

    def restore(self) -> None:
        """Put every row back as built and start a new app (its caches knew the changed world)."""
        self._stack.close()
        _restore(self.db, self._pristine)
        assert _snapshot(self.db) == self._pristine
        self._watch.wrote = False
        self.client = self._start()

    def params(self) -> dict[str, Any]:
        """What path templates are filled with: slugs, submission ids, the pending user's name."""
        return {"competition": MAIN, "task": TASK, "phase": HIDDEN, "name": PENDING, **self.ids}

    def close(self) -> None:
        self._stack.close()
        self._watch.close()
        _clear(self.db)


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert found, "the page has no form with a CSRF token"
    return found.group(1)
