"""The leaderboard cache: snapshots are reused until a commit changes what a board is computed from."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import insert, update

from app.config import Settings
from app.services.accounts.users import find_user
from app.services.boards.cache import BoardCache
from app.services.competitions import catalog
from app.services.errors import NotFound
from app.services.jobs.kinds import JobContext
from app.services.scoring.gold import GoldCache
from app.services.scoring.job import score_submission
from app.services.submissions import changes, intake
from app.services.submissions.limits import Limits
from app.storage.db import Database
from app.storage.models import Phase, Score, Team
from app.storage.types import utcnow
from tests.app.builders import HALF, PERFECT, as_bytes, make_competition, make_user, phase_spec
from tests.app.labels_scorer import LabelScorer

REF = ("comp", "labels", "dev")


def setup(db: Database, **phase: Any) -> None:
    with db.session() as session:
        make_user(session, "olga")
        make_user(session, "ada")
        make_competition(session, organizers=("olga",), phases=(phase_spec(**phase),))
        session.commit()


def upload(db: Database, run: dict[str, str]) -> int:
    with db.session() as session:
        accepted = intake.submit(
            session,
            find_user(session, "ada"),
            REF,
            intake.Upload(as_bytes(run), "run.json"),
            limits=Limits(10_000, 10_000, 4),
            gold_cache=GoldCache(),
        )
        session.commit()
        return accepted.submission.id


def score(db: Database, submission_id: int) -> None:
    score_submission(JobContext(db, Settings(database_url=db.url), GoldCache()), submission_id)


def accuracies(cache: BoardCache, viewers: Any = "public") -> list[float]:
    return [e.candidate.metrics["accuracy"] for e in cache.get(REF, viewers).entries]  # type: ignore[index]


def test_a_snapshot_is_reused_until_a_score_lands(db: Database, labels: type[LabelScorer]) -> None:
    setup(db)
    cache = BoardCache(db, check_every=3600)
    first = upload(db, HALF)
    score(db, first)
    snapshot = cache.get(REF, "public")
    assert accuracies(cache) == [0.5]  # HALF: 2 of 4 labels right
    second = upload(db, PERFECT)  # a new queued submission changes no board
    assert cache.get(REF, "public") is snapshot
    score(db, second)  # a score lands: the next request sees it
    assert cache.get(REF, "public") is not snapshot
    assert accuracies(cache) == [1.0]  # the team's best counts


def test_bulk_updates_and_reveals_invalidate_too(db: Database, labels: type[LabelScorer]) -> None:
    setup(db, visibility="hidden", selection="chosen")
    cache = BoardCache(db, check_every=3600)
    half, perfect = upload(db, HALF), upload(db, PERFECT)
    score(db, half)
    score(db, perfect)
    hidden = cache.get(REF, "public")
    assert hidden.hidden and hidden.entries == () and hidden.candidates == ()
    assert accuracies(cache, "organizers") == [1.0]  # without a choice, the latest (PERFECT) counts
    with db.session() as session:
        changes.choose(session, find_user(session, "ada"), half)  # an UPDATE statement, not a flush
        session.commit()
    assert accuracies(cache, "organizers") == [0.5]
    with db.session() as session:
        catalog.reveal_phase(session, find_user(session, "olga"), catalog.get_phase(session, *REF))
        session.commit()
    assert accuracies(cache) == [0.5]


def test_a_check_that_finds_nothing_changed_keeps_the_snapshot(db: Database, labels: type[LabelScorer]) -> None:
    setup(db)
    score(db, upload(db, HALF))
    cache = BoardCache(db, check_every=0)  # every request checks the fingerprint
    first = cache.get(REF, "public")
    assert cache.get(REF, "public") is first


def test_writes_of_another_process_show_at_the_next_check(db: Database, labels: type[LabelScorer]) -> None:
    setup(db, visibility="hidden")
    half = upload(db, HALF)
    score(db, half)
    later, checking = BoardCache(db, check_every=3600), BoardCache(db, check_every=0)
    assert later.get(REF, "public").hidden and checking.get(REF, "public").hidden
    # As another process would write: through a connection, so no listener of this process sees it.
    with db.engine.begin() as connection:
        connection.execute(update(Phase).values(revealed_at=utcnow()))
    assert later.get(REF, "public").hidden  # not checked yet
    assert accuracies(checking) == [0.5]
    with db.engine.begin() as connection:  # a rescore landing elsewhere: round 2 scores 4 of 4
        connection.execute(
            insert(Score).values(
                submission_id=half,
                round=2,
                scorer="test-labels",
                scorer_version="1.0",
                metrics={"accuracy": 1.0},
                breakdown={},
                units={},
                created_at=utcnow(),
            )
        )
    assert accuracies(checking) == [1.0]


def test_what_no_fingerprint_sees_shows_after_max_age(db: Database, labels: type[LabelScorer]) -> None:
    setup(db)
    score(db, upload(db, HALF))
    kept, aged = BoardCache(db, check_every=0), BoardCache(db, check_every=0, max_age=0)
    assert [e.candidate.team for e in kept.get(REF, "public").entries] == ["ada"]
    assert [e.candidate.team for e in aged.get(REF, "public").entries] == ["ada"]
    with db.engine.begin() as connection:  # a rename made in the database by hand
        connection.execute(update(Team).values(name="Ada Lab"))
    assert [e.candidate.team for e in kept.get(REF, "public").entries] == ["ada"]
    assert [e.candidate.team for e in aged.get(REF, "public").entries] == ["Ada Lab"]


def test_an_address_that_names_no_phase_leaves_nothing_behind(db: Database, labels: type[LabelScorer]) -> None:
    setup(db)
    cache = BoardCache(db)
    for n in range(3):
        with pytest.raises(NotFound, match="has no phase"):
            cache.get(("comp", "labels", f"nothing-{n}"), "public")
    assert cache._locks == {} and list(cache.snapshots()) == []
