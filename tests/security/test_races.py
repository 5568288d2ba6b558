"""Races at the edges, through the API with the embedded scoring pool running: uploads racing for the
last slots of a quota, organizers rescoring one submission at once, and a hidden phase revealed while
teams submit. On SQLite, and on PostgreSQL when ``PODIUM_TEST_DATABASE_URL`` is set.

Each race starts its threads at one barrier, so the requests reach the server together; the
assertions are exact counts that hold whatever order the server takes them in.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from fastapi.testclient import TestClient
from httpx import Response
from sqlalchemy import func, select

from app.services.accounts import teams, users
from app.services.competitions import catalog
from app.storage.db import Database
from app.storage.models import Score, Submission, Team
from tests.app.builders import HALF, PERFECT, as_bytes, make_competition, make_user, phase_spec

PHASE = "/api/v1/competitions/comp/tasks/labels/phases/dev"
#: Uploads racing for the last slots, and the slots there are.
UPLOADS, LIMIT = 8, 3


def race(calls: list[Callable[[], Response]]) -> list[Response]:
    """Run the calls in threads of their own, released together; the answers in the calls' order."""
    start = threading.Barrier(len(calls))

    def run(call: Callable[[], Response]) -> Response:
        start.wait()
        return call()

    with ThreadPoolExecutor(len(calls)) as pool:
        return list(pool.map(run, calls))


def wait(client: TestClient) -> None:
    assert client.app.state.podium.queue.wait_idle(60)  # type: ignore[attr-defined]


def token(db: Database, name: str) -> dict[str, str]:
    with db.session() as session:
        user = users.find_user(session, name)
        assert user is not None
        issued = users.issue_token(session, user)
        session.commit()
    return {"Authorization": f"Bearer {issued}"}


def upload(client: TestClient, headers: dict[str, str], run: Any = HALF) -> Callable[[], Response]:
    return lambda: client.post(
        f"{PHASE}/submissions", headers=headers, files={"file": ("run.json", as_bytes(run), "application/json")}
    )


def scores_by_submission(db: Database) -> dict[int, list[int]]:
    """Every stored score's round, by submission."""
    with db.session(read_only=True) as session:
        rows = session.execute(select(Score.submission_id, Score.round).order_by(Score.submission_id, Score.round))
        out: dict[int, list[int]] = {}
        for submission_id, round_ in rows:
            out.setdefault(submission_id, []).append(round_)
        return out


# -- the quota's last slots -------------------------------------------------------------------------------


@pytest.mark.parametrize("who", ["a new user", "a team of two"])
def test_uploads_racing_for_the_last_slots_take_exactly_the_limit(db: Database, client: TestClient, who: str) -> None:
    """``UPLOADS`` = 8 uploads of one team at once, ``LIMIT`` = 3 slots: 3 are accepted and 8 - 3 = 5
    refused with 429, every accepted one is stored and scored exactly once (round 1), nothing else is
    stored. "A new user" has no team yet, so the uploads also race to create it (one team results)."""
    with db.session() as session:
        make_user(session, "olga", organizer=True)
        ann, amy = make_user(session, "ann"), make_user(session, "amy")
        comp = make_competition(session, organizers=("olga",), phases=(phase_spec(total_limit=LIMIT),))
        if who == "a team of two":
            team = teams.create_team(session, ann, comp, "Pair")
            teams.join_team(session, amy, comp, team.invite_code)
        session.commit()
    uploaders = [token(db, "ann")] if who == "a new user" else [token(db, "ann"), token(db, "amy")]

    answers = race([upload(client, uploaders[i % len(uploaders)]) for i in range(UPLOADS)])

    assert sorted(a.status_code for a in answers) == [202] * LIMIT + [429] * (UPLOADS - LIMIT)
    accepted = {a.json()["id"] for a in answers if a.status_code == 202}
    assert len(accepted) == LIMIT
    for refused in (a for a in answers if a.status_code == 429):
        assert refused.json()["error"] == "quota_exhausted"
    wait(client)
    with db.session(read_only=True) as session:
        stored = session.execute(select(Submission.id, Submission.status)).all()
        assert sorted(stored) == sorted((i, "scored") for i in accepted)
        assert session.scalar(select(func.count()).select_from(Team)) == 1
    assert scores_by_submission(db) == {i: [1] for i in accepted}


# -- rescoring one submission at once -----------------------------------------------------------------


def test_organizers_rescoring_one_submission_at_once_add_one_round_per_accepted_request(
    db: Database, client: TestClient
) -> None:
    """Six rescore requests at once while the pool scores: each accepted one (202) adds exactly one
    round, the others are refused (409: the submission is queued or running); every round from 1 to
    the last is scored exactly once, and the submission ends ``scored`` with its newest round current."""
    with db.session() as session:
        make_user(session, "olga", organizer=True)
        make_user(session, "root", admin=True)
        make_user(session, "ann")
        make_competition(session, organizers=("olga",))
        session.commit()
    first = upload(client, token(db, "ann"))()
    assert first.status_code == 202
    submission_id = first.json()["id"]
    wait(client)
    organizers = [token(db, "olga"), token(db, "root")]

    def rescore(headers: dict[str, str]) -> Callable[[], Response]:
        return lambda: client.post(f"/api/v1/submissions/{submission_id}/rescore", headers=headers)

    answers = race([rescore(organizers[i % 2]) for i in range(6)])

    codes = [a.status_code for a in answers]
    assert set(codes) <= {202, 409}, [a.text for a in answers]
    accepted = codes.count(202)
    assert accepted >= 1
    wait(client)
    with db.session(read_only=True) as session:
        submission = session.get(Submission, submission_id)
        assert submission is not None
        assert (submission.status, submission.scoring_round) == ("scored", 1 + accepted)
    assert scores_by_submission(db) == {submission_id: list(range(1, accepted + 2))}
    shown = client.get(f"/api/v1/submissions/{submission_id}", headers=organizers[0]).json()
    assert (shown["status"], shown["organizer"]["score_round"]) == ("scored", 1 + accepted)


def test_rescoring_a_whole_phase_twice_at_once_queues_each_submission_once(db: Database, client: TestClient) -> None:
    """Two "rescore the phase" requests at once over three scored submissions: together they queue
    each submission once per accepted round; nothing is scored twice in one round."""
    with db.session() as session:
        make_user(session, "olga", organizer=True)
        for name in ("ann", "bob", "cid"):
            make_user(session, name)
        make_competition(session, organizers=("olga",))
        session.commit()
    ids = [upload(client, token(db, name))().json()["id"] for name in ("ann", "bob", "cid")]
    wait(client)
    olga = token(db, "olga")

    answers = race([lambda: client.post(f"{PHASE}/rescore", headers=olga) for _ in range(2)])

    assert [a.status_code for a in answers] == [202, 202]
    queued = sum(a.json()["queued"] for a in answers)
    wait(client)
    with db.session(read_only=True) as session:
        rounds = dict(session.execute(select(Submission.id, Submission.scoring_round)).all())
        assert set(session.scalars(select(Submission.status))) == {"scored"}
    # Each queued submission gained one round: 3 first rounds plus one per queued rescore.
    assert sum(rounds.values()) == len(ids) + queued
    assert scores_by_submission(db) == {i: list(range(1, rounds[i] + 1)) for i in ids}


# -- revealing while teams submit -------------------------------------------------------------------------


def test_revealing_a_hidden_phase_while_teams_submit_loses_nothing(db: Database, client: TestClient) -> None:
    """The organizer reveals while three participants upload the same file (one blob, raced for): every
    request succeeds, every upload is scored once, and the public board then ranks all three at 4/4."""
    names = ("ann", "bob", "cid")
    with db.session() as session:
        make_user(session, "olga", organizer=True)
        for name in names:
            make_user(session, name)
        make_competition(session, organizers=("olga",), phases=(phase_spec(visibility="hidden"),))
        session.commit()
    olga = token(db, "olga")

    answers = race(
        [lambda: client.post(f"{PHASE}/reveal", headers=olga)] + [upload(client, token(db, n), PERFECT) for n in names]
    )

    assert [a.status_code for a in answers] == [200, 202, 202, 202]
    ids = {a.json()["id"] for a in answers[1:]}
    wait(client)
    assert scores_by_submission(db) == {i: [1] for i in ids}
    board = client.get(f"{PHASE}/leaderboard").json()
    assert board["hidden"] is False
    assert sorted((e["team"], e["metrics"]["accuracy"], e["submission_id"] in ids) for e in board["entries"]) == [
        (name, 1.0, True) for name in names
    ]
    page = client.get("/c/comp/labels/dev/leaderboard.json")  # the pages' cached board agrees
    assert page.status_code == 200
    assert sorted(entry["team"] for entry in page.json()["entries"]) == list(names)
    with db.session(read_only=True) as session:
        phase = catalog.get_phase(session, "comp", "labels", "dev")
        assert phase.revealed_at is not None
