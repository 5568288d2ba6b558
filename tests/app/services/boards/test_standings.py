"""Leaderboards from stored scores: selection per team, failures, rescoring, hidden phases."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import update

from app.config import Settings
from app.services.accounts.users import find_user
from app.services.boards.cache import BoardCache
from app.services.competitions import catalog
from app.services.jobs.kinds import JobContext
from app.services.scoring.gold import GoldCache
from app.services.scoring.job import score_submission
from app.services.submissions import changes, intake, results
from app.services.submissions.limits import Limits
from app.storage.db import Database
from app.storage.models import Score, Submission
from app.storage.types import utcnow
from app.web.schemas.boards import LeaderboardOut
from tests.app.builders import GOLD, HALF, PERFECT, as_bytes, make_competition, make_user, phase_spec
from tests.app.labels_scorer import LabelScorer

#: 1 of 4 labels right: 0.25.
QUARTER = {"a": "x", "b": "x", "c": "y", "d": "x"}
START = utcnow() - timedelta(hours=1)


def setup(db: Database, **phase: Any) -> None:
    with db.session() as session:
        make_user(session, "olga")
        for name in ("ada", "bob", "cy"):
            make_user(session, name)
        make_competition(session, organizers=("olga",), phases=(phase_spec(**phase),))
        session.commit()


def scored(db: Database, user: str, run: dict[str, str], minutes: int, method: str = "") -> int:
    """Submit ``run`` as ``user`` at START + ``minutes`` and score it."""
    with db.session() as session:
        accepted = intake.submit(
            session,
            find_user(session, user),
            ("comp", "labels", "dev"),
            intake.Upload(as_bytes(run), "run.json", method),
            limits=Limits(10_000, 10_000, 4),
            gold_cache=GoldCache(),
            now=START + timedelta(minutes=minutes),
        )
        session.commit()
        submission_id = accepted.submission.id
    score_submission(JobContext(db, Settings(database_url=db.url), GoldCache()), submission_id)
    return submission_id


def board(db: Database, viewer: str | None = None) -> dict[str, Any]:
    """The leaderboard as the JSON API answers ``viewer``: read through the cache, shaped by the schema."""
    with db.session() as session:
        user = find_user(session, viewer) if viewer else None
    snapshot = BoardCache(db).for_viewer(("comp", "labels", "dev"), user)
    return LeaderboardOut.of(snapshot).model_dump()


def ranking(db: Database, viewer: str | None = None) -> list[tuple[int, str, float]]:
    return [(e["rank"], e["team"], e["metrics"]["accuracy"]) for e in board(db, viewer)["entries"]]


def test_each_team_is_ranked_by_its_best_submission(db: Database, labels: type[LabelScorer]) -> None:
    setup(db)
    scored(db, "ada", QUARTER, 1)
    scored(db, "ada", PERFECT, 2, "v2")
    scored(db, "ada", HALF, 3)
    scored(db, "bob", HALF, 4)
    entries = board(db)["entries"]
    assert [(e["rank"], e["team"], e["metrics"]["accuracy"]) for e in entries] == [(1, "ada", 1.0), (2, "bob", 0.5)]
    assert (entries[0]["system"], entries[0]["scored_submissions"], entries[0]["baseline"]) == ("v2", 3, False)


def test_latest_selection_and_shared_ranks(db: Database, labels: type[LabelScorer]) -> None:
    setup(db, selection="latest")
    scored(db, "ada", PERFECT, 1)
    scored(db, "ada", HALF, 2)
    scored(db, "bob", HALF, 3)
    scored(db, "cy", QUARTER, 4)
    # ada's latest (0.5) ties with bob's: both rank 1, and cy is third, not second.
    assert ranking(db) == [(1, "ada", 0.5), (1, "bob", 0.5), (3, "cy", 0.25)]


def test_failed_and_unscored_submissions_are_never_ranked(db: Database, labels: type[LabelScorer]) -> None:
    setup(db)
    scored(db, "ada", HALF, 1)
    failed = scored(db, "bob", PERFECT, 2)
    with db.session() as session:
        session.execute(update(Submission).where(Submission.id == failed).values(status="failed"))
        accepted = intake.submit(
            session,
            find_user(session, "cy"),
            ("comp", "labels", "dev"),
            intake.Upload(as_bytes(GOLD), "run.json"),
            limits=Limits(10_000, 10_000, 4),
            gold_cache=GoldCache(),
        )
        session.commit()
    assert accepted.submission.status == "queued"
    assert ranking(db) == [(1, "ada", 0.5)]


def test_a_submission_being_rescored_keeps_its_place(db: Database, labels: type[LabelScorer]) -> None:
    setup(db)
    submission_id = scored(db, "ada", HALF, 1)
    with db.session() as session:
        changes.rescore(session, find_user(session, "olga"), submission_id)
        session.commit()
    assert ranking(db) == [(1, "ada", 0.5)]


def test_a_hidden_phase_shows_numbers_only_to_organizers_until_revealed(
    db: Database, labels: type[LabelScorer]
) -> None:
    setup(db, visibility="hidden")
    submission_id = scored(db, "ada", HALF, 1)
    assert board(db)["hidden"] is True
    assert ranking(db) == []
    assert ranking(db, "ada") == []
    assert ranking(db, "olga") == [(1, "ada", 0.5)]
    with db.session() as session:
        mine = results.show(session, find_user(session, "ada"), submission_id)
        assert (mine.status, mine.metrics, mine.metrics_hidden, mine.breakdown) == (
            "scored",
            None,
            True,
            None,
        )
        theirs = results.show(session, find_user(session, "olga"), submission_id)
        assert theirs.metrics == {"accuracy": 0.5}
        catalog.reveal_phase(session, find_user(session, "olga"), catalog.get_phase(session, "comp", "labels", "dev"))
        session.commit()
    assert ranking(db) == [(1, "ada", 0.5)]
    assert board(db)["hidden"] is False


def test_a_baseline_is_ranked_among_the_teams_and_marked(db: Database, labels: type[LabelScorer]) -> None:
    setup(db)
    scored(db, "ada", HALF, 1)
    with db.session() as session:
        phase = catalog.get_phase(session, "comp", "labels", "dev")
        baseline = Submission(
            phase_id=phase.id,
            team_id=None,
            blob_id=phase.gold_blob_id,
            sha256="0" * 64,
            size=1,
            original_name="baseline.json",
            status="scored",
            is_baseline=True,
            baseline_name="majority",
            baseline_version="1",
            created_at=START,
        )
        session.add(baseline)
        session.flush()
        session.add(
            Score(
                submission_id=baseline.id,
                round=1,
                scorer="test-labels",
                scorer_version="1.0",
                metrics={"accuracy": 0.25},
                breakdown={},
                units={},
            )
        )
        session.commit()
    entries = board(db)["entries"]
    assert [(e["rank"], e["team"], e["baseline"]) for e in entries] == [(1, "ada", False), (2, "majority", True)]
