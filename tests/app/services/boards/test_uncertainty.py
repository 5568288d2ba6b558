"""Intervals and comparisons on boards built from stored scores: computed once when a submission is
scored and stored beside its score, computed from the units for scores stored without one (the same
numbers), a rescore stores one again, nothing for the public of a hidden phase, nothing when turned off."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select, update

from app.config import Settings
from app.services.accounts.users import find_user
from app.services.boards.cache import BoardCache
from app.services.competitions import catalog
from app.services.jobs.kinds import JobContext
from app.services.scoring.gold import GoldCache
from app.services.scoring.job import score_submission
from app.services.submissions import changes
from app.storage.db import Database
from app.storage.models import Score
from leaderboard.uncertainty import REPLICATES
from tests.app.builders import HALF, PERFECT
from tests.app.labels_scorer import LabelScorer
from tests.app.services.boards.test_standings import QUARTER, board, scored, setup

REF = ("comp", "labels", "dev")


def stored(db: Database, submission_id: int) -> list[dict[str, Any] | None]:
    """The interval stored with each round's score, oldest round first."""
    with db.session() as session:
        query = select(Score.interval).where(Score.submission_id == submission_id).order_by(Score.round)
        return list(session.scalars(query))


def test_scoring_stores_the_interval_the_board_shows(db: Database, labels: type[LabelScorer]) -> None:
    setup(db)
    half = scored(db, "ada", HALF, 1)
    quarter = scored(db, "bob", QUARTER, 2)
    (record,) = stored(db, half)
    assert record is not None
    assert (record["metric"], record["units"], record["replicates"], record["method"]) == (
        "accuracy",
        4,
        REPLICATES,
        "bca-expanded",
    )
    assert record["estimate"] == 0.5 and record["low"] < 0.5 < record["high"]
    answer = board(db)
    first, second = answer["entries"]
    assert first["submission_id"] == half and second["submission_id"] == quarter
    assert first["interval"] == {
        "low": record["low"],
        "high": record["high"],
        "level": 0.95,
        "method": "bca-expanded",
        "units": 4,
        "few_units": True,
        "zero_width": False,
        "too_few_units": True,
        "reliable": False,
        "label": "rough: from 4 units, such intervals hold the true score less often than 95%",
        "notes": ["few_units", "too_few_units"],
        "mc_error": record["mc_error"],
        "selected_from": 1,
    }
    assert answer["few_units"] and answer["intervals"]
    (comparison,) = answer["comparisons"]
    assert (comparison["better"], comparison["worse"]) == (half, quarter)
    # Four labels are too few to compare 2 right with 1 right: not compared, no tied groups, and said so.
    assert comparison["too_few_units"] and not comparison["significant"] and comparison["p_value"] is None
    assert answer["too_few_units"] and [e["tied_group"] for e in answer["entries"]] == [None, None]


def test_a_score_stored_without_an_interval_gets_the_same_one_from_its_units(
    db: Database, labels: type[LabelScorer]
) -> None:
    setup(db)
    half = scored(db, "ada", HALF, 1)
    scored(db, "bob", PERFECT, 2)
    before = board(db)["entries"]
    with db.session() as session:  # a score recorded before intervals were stored
        session.execute(update(Score).values(interval=None).execution_options(synchronize_session=False))
        session.commit()
    assert stored(db, half) == [None]
    assert board(db)["entries"] == before
    # Rescoring stores one again, in the new round; the old score is left as it was.
    with db.session() as session:
        changes.rescore(session, find_user(session, "olga"), half)
        session.commit()
    score_submission(JobContext(db, Settings(database_url=db.url), GoldCache()), half)
    old, new = stored(db, half)
    assert old is None and new is not None and new["low"] == before[1]["interval"]["low"]


def test_the_public_of_a_hidden_phase_gets_no_interval_nor_comparison(db: Database, labels: type[LabelScorer]) -> None:
    setup(db, visibility="hidden")
    half = scored(db, "ada", HALF, 1)
    scored(db, "bob", PERFECT, 2)
    public = board(db)
    assert (public["entries"], public["comparisons"], public["few_units"]) == ([], [], False)
    organizers = board(db, "olga")
    assert [e["interval"] is not None for e in organizers["entries"]] == [True, True]
    assert len(organizers["comparisons"]) == 1
    with db.session() as session:
        catalog.reveal_phase(session, find_user(session, "olga"), catalog.get_phase(session, "comp", "labels", "dev"))
        session.commit()
    revealed = board(db)
    assert revealed["entries"] == organizers["entries"] and revealed["comparisons"] == organizers["comparisons"]
    assert stored(db, half)[0] is not None


def test_a_phase_without_intervals_stores_and_shows_none(db: Database, labels: type[LabelScorer]) -> None:
    setup(db, intervals=False)
    half = scored(db, "ada", HALF, 1)
    scored(db, "bob", PERFECT, 2)
    answer = board(db)
    assert stored(db, half) == [None]
    assert [e["interval"] for e in answer["entries"]] == [None, None]
    assert [e["tied_group"] for e in answer["entries"]] == [None, None]
    assert (answer["comparisons"], answer["intervals"], answer["few_units"]) == ([], False, False)


def test_a_new_score_tests_only_the_pairs_it_changed(db: Database, labels: type[LabelScorer]) -> None:
    setup(db)
    scored(db, "ada", PERFECT, 1)
    scored(db, "bob", QUARTER, 2)
    cache = BoardCache(db)
    first = cache.get(REF, "public").uncertainty
    assert first is not None and first.tested == 1
    scored(db, "cy", HALF, 3)  # ranked between the two: both pairs are new
    second = cache.get(REF, "public").uncertainty
    assert second is not None and second.tested == 2
    bumped = scored(db, "cy", HALF, 4)  # the same numbers again: the board's entries do not change
    third = cache.get(REF, "public").uncertainty
    assert third is not None and third.tested == 0
    # What the kept tests give is what a board computed from nothing gives.
    fresh = BoardCache(db).get(REF, "public").uncertainty
    assert fresh is not None and fresh.tested == 2
    assert (third.comparisons, third.groups, third.intervals) == (fresh.comparisons, fresh.groups, fresh.intervals)
    assert bumped not in third.intervals  # cy's earlier upload still counts (the same score, earlier)


def test_under_selection_best_an_entry_picked_from_several_says_so(db: Database, labels: type[LabelScorer]) -> None:
    # ada submitted three times and her best counts: her interval is widened to the Bonferroni level for the best
    # of 3 and says so; bob's single submission is not; under "latest" nobody is picked by score.
    setup(db)
    for minute, run in enumerate((QUARTER, HALF, QUARTER), start=1):
        scored(db, "ada", run, minute)
    scored(db, "bob", QUARTER, 5)
    first, second = board(db)["entries"]
    assert (first["interval"]["selected_from"], second["interval"]["selected_from"]) == (3, 1)
    assert "widened for the choice of the best of 3 submissions" in first["interval"]["label"]
    (record,) = stored(db, first["submission_id"])
    assert record is not None and record["selected_from"] == 1  # the score stores its own interval
    assert first["interval"]["high"] - 0.5 > record["high"] - 0.5
    with db.session() as session:
        catalog.get_phase(session, *REF).selection = "latest"  # type: ignore[assignment]
        session.commit()
    assert all(e["interval"]["selected_from"] == 1 for e in board(db)["entries"])
