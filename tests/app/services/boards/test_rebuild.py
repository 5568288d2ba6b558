"""Boards built again after a score lands: readers are served the board before while the next one builds, a new
score redoes only its own share of the work (the cache's counts), and what is kept gives what a board built from
nothing gives."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from app.config import Settings
from app.services.accounts.users import find_user
from app.services.boards import uncertainty
from app.services.boards.cache import BoardCache
from app.services.boards.snapshot import BoardSnapshot
from app.services.jobs.kinds import JobContext
from app.services.scoring.gold import GoldCache
from app.services.scoring.job import score_submission
from app.services.submissions import intake
from app.services.submissions.limits import Limits
from app.storage.db import Database
from scorers import register, unregister
from tests.app.builders import as_bytes, bundle_file, make_competition, make_user, phase_spec
from tests.app.labels_scorer import LabelScorer

REF = ("comp", "labels", "dev")
IDS = [f"u{n:02d}" for n in range(16)]
GOLD = dict.fromkeys(IDS, "x")
TEAMS = ("ada", "bob", "cy", "dee", "eve", "fay")


def run(right: int) -> dict[str, str]:
    """A run with the first ``right`` of the 16 labels right."""
    return {key: "x" if n < right else "y" for n, key in enumerate(IDS)}


class HoldingScorer(LabelScorer):
    """The test scorer, whose ``aggregate`` waits while ``hold`` is closed (a board computing an interval or a
    test calls it): a rebuild that stays in progress for as long as a test needs."""

    hold: threading.Event | None = None
    entered = threading.Event()

    def aggregate(self, stats: Sequence[Any]) -> dict[str, Any]:
        hold = type(self).hold
        if hold is not None:
            type(self).entered.set()
            hold.wait(timeout=60)
        return super().aggregate(stats)


@pytest.fixture
def holding() -> Iterator[type[HoldingScorer]]:
    register(HoldingScorer)
    HoldingScorer.hold = None
    HoldingScorer.entered.clear()
    yield HoldingScorer
    HoldingScorer.hold = None
    unregister(HoldingScorer.name)


def setup(db: Database, **phase: Any) -> None:
    inputs = bundle_file("inputs.txt", "\n".join(IDS).encode())
    with db.session() as session:
        make_user(session, "olga")
        for name in TEAMS:
            make_user(session, name)
        gold = bundle_file("gold.json", as_bytes(GOLD))
        make_competition(
            session, organizers=("olga",), phases=(phase_spec(gold=gold, public_files=(inputs,), **phase),)
        )
        session.commit()


def scored(db: Database, user: str, right: int) -> int:
    with db.session() as session:
        accepted = intake.submit(
            session,
            find_user(session, user),
            REF,
            intake.Upload(as_bytes(run(right)), "run.json"),
            limits=Limits(10_000, 10_000, 4),
            gold_cache=GoldCache(),
        )
        session.commit()
        submission_id = accepted.submission.id
    score_submission(JobContext(db, Settings(database_url=db.url), GoldCache()), submission_id)
    return submission_id


def board_facts(snapshot: BoardSnapshot) -> tuple[Any, ...]:
    """What a board shows: its entries and their numbers, intervals, comparisons and groups."""
    numbers = snapshot.uncertainty
    assert numbers is not None
    entries = [
        (e.rank, e.candidate.submission_id, e.candidate.team, dict(e.candidate.metrics or {})) for e in snapshot.entries
    ]
    return (entries, dict(numbers.intervals), numbers.comparisons, numbers.groups)


def test_readers_are_served_the_board_before_while_the_next_one_builds(
    db: Database, holding: type[HoldingScorer]
) -> None:
    setup(db)
    scored(db, "ada", 15)
    scored(db, "bob", 9)
    cache = BoardCache(db)
    before = cache.get(REF, "public")
    assert [e.candidate.team for e in before.entries] == ["ada", "bob"]
    scored(db, "cy", 12)
    holding.hold = threading.Event()  # closed: the next board's tests wait in the scorer
    built: list[BoardSnapshot] = []
    builder = threading.Thread(target=lambda: built.append(cache.get(REF, "public")))
    builder.start()
    assert holding.entered.wait(timeout=60), "the rebuild did not start"
    read: list[BoardSnapshot] = []
    reader = threading.Thread(target=lambda: read.append(cache.get(REF, "public")))
    reader.start()
    reader.join(timeout=30)
    rebuilding = not holding.hold.is_set() and builder.is_alive()
    holding.hold.set()
    builder.join(timeout=60)
    assert not reader.is_alive(), "a reader waited for the rebuild"
    assert rebuilding and read == [before]  # served at once, while the rebuild was still held
    assert [e.candidate.team for e in built[0].entries] == ["ada", "cy", "bob"]
    assert cache.get(REF, "public") is built[0]


def test_the_first_board_is_waited_for(db: Database, holding: type[HoldingScorer]) -> None:
    setup(db)
    scored(db, "ada", 15)
    scored(db, "bob", 9)
    cache = BoardCache(db)
    holding.hold = threading.Event()
    first: list[BoardSnapshot] = []
    builder = threading.Thread(target=lambda: first.append(cache.get(REF, "public")))
    builder.start()
    assert holding.entered.wait(timeout=60)
    read: list[BoardSnapshot] = []
    reader = threading.Thread(target=lambda: read.append(cache.get(REF, "public")))
    reader.start()
    reader.join(timeout=1)
    waiting = reader.is_alive()  # nothing to serve before the first board
    holding.hold.set()
    builder.join(timeout=60)
    reader.join(timeout=60)
    assert waiting and read == first


def test_a_new_score_redoes_only_its_own_share(db: Database, holding: type[HoldingScorer]) -> None:
    setup(db)
    for name, right in zip(TEAMS, (16, 14, 12, 10, 8, 6), strict=True):
        scored(db, name, right)
    cache = BoardCache(db)
    cache.get(REF, "public")
    counts = dict(cache.kept.counts)
    assert counts == {"scores read": 6, "units read": 6, "pairs tested": 5}
    scored(db, "eve", 11)  # eve moves up between cy (12) and dee (10)
    after = cache.get(REF, "public")
    done = {kind: cache.kept.counts[kind] - counts.get(kind, 0) for kind in cache.kept.counts}
    # One score read; the units of eve's new entry and of its two new neighbours (cy, dee), and of fay, whose
    # neighbour above changed from eve to dee; three new pairs (cy-eve, eve-dee, dee-fay). No interval computed.
    assert done == {"scores read": 1, "units read": 4, "pairs tested": 3}
    assert [e.candidate.team for e in after.entries] == ["ada", "bob", "cy", "eve", "dee", "fay"]
    assert board_facts(after) == board_facts(BoardCache(db).get(REF, "public"))


def test_a_board_built_window_by_window_is_the_board_built_at_once(
    db: Database, holding: type[HoldingScorer], monkeypatch: pytest.MonkeyPatch
) -> None:
    setup(db)
    for name, right in zip(TEAMS, (16, 13, 13, 10, 9, 4), strict=True):
        scored(db, name, right)
    at_once = BoardCache(db).get(REF, "public")
    monkeypatch.setattr(uncertainty, "WINDOW", 2)
    windowed = BoardCache(db)
    by_windows = windowed.get(REF, "public")
    assert windowed.kept.counts["pairs tested"] == 5
    assert board_facts(by_windows) == board_facts(at_once)
    assert by_windows.uncertainty is not None and by_windows.uncertainty.comparisons


def test_a_ladder_board_climbs_again_only_for_the_team_that_submitted(
    db: Database, holding: type[HoldingScorer]
) -> None:
    setup(db, board="ladder")
    for name, right in zip(TEAMS[:3], (8, 10, 12), strict=True):
        scored(db, name, right)
    scored(db, "ada", 9)
    cache = BoardCache(db)
    cache.get(REF, "public")
    before = cache.kept.counts["units read"]
    scored(db, "bob", 16)
    after = cache.get(REF, "public")
    # bob's climb is redone over his two submissions; ada's and cy's are kept. The board then reads the units of
    # the pairs that changed (bob, now first, and the two below him).
    assert cache.kept.counts["units read"] - before == 2 + 3
    assert board_facts(after) == board_facts(BoardCache(db).get(REF, "public"))
