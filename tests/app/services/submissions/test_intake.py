"""Accepting uploads: validation before storage, open phases, size limits and quotas (also under a race)."""

from __future__ import annotations

import io
import threading
import zipfile
from datetime import datetime
from typing import Any

import pytest
from sqlalchemy import func, select

from app.services.accounts.users import find_user
from app.services.errors import InvalidInput, PhaseClosed, QuotaExhausted, UploadTooLarge
from app.services.scoring.gold import GoldCache
from app.services.submissions import intake
from app.services.submissions.limits import Limits
from app.storage.db import Database
from app.storage.models import Blob, Submission, Team
from tests.app.builders import HALF, PERFECT, as_bytes, make_competition, make_user, phase_spec, utc
from tests.app.labels_scorer import LabelScorer

REF = ("comp", "labels", "dev")
LIMITS = Limits(max_upload_bytes=1000, max_unzipped_bytes=10_000, max_zip_entries=4)
NOON = utc("2025-03-10T12:00Z")


def setup(db: Database, **phase: Any) -> None:
    with db.session() as session:
        make_user(session, "ada")
        make_user(session, "bob")
        make_competition(session, phases=(phase_spec(**phase),))
        session.commit()


def submit(db: Database, run: Any, *, user: str = "ada", now: datetime = NOON, cache: GoldCache | None = None) -> int:
    with db.session() as session:
        accepted = intake.submit(
            session,
            find_user(session, user),
            REF,
            intake.Upload(as_bytes(run) if not isinstance(run, bytes) else run, "run.json", "m"),
            limits=LIMITS,
            gold_cache=cache or GoldCache(),
            now=now,
        )
        session.commit()
        return accepted.submission.id


def count(db: Database, model: type = Submission) -> int:
    with db.session() as session:
        return session.scalar(select(func.count()).select_from(model)) or 0


def test_a_valid_file_is_stored_and_queued(db: Database, labels: type[LabelScorer]) -> None:
    setup(db)
    submission_id = submit(db, PERFECT)
    with db.session() as session:
        stored = session.get(Submission, submission_id)
        assert stored is not None
        assert (stored.status, stored.scoring_round, stored.attempts, stored.original_name) == (
            "queued",
            1,
            0,
            "run.json",
        )
        assert stored.created_at == NOON
        assert session.get(Blob, stored.blob_id).sha256 == stored.sha256  # type: ignore[union-attr]
        team = session.get(Team, stored.team_id)
        assert team is not None and (team.name, team.is_solo) == ("ada", True)


def test_a_bad_file_is_refused_before_anything_is_stored(db: Database, labels: type[LabelScorer]) -> None:
    setup(db)
    blobs_before = count(db, Blob)
    with pytest.raises(InvalidInput) as refused:
        submit(db, {"a": "x", "b": 3})
    assert refused.value.code == "invalid_submission"
    assert {"where": "key 'b'", "message": "label must be a string"} in refused.value.problems
    assert {"where": "key 'c'", "message": "is missing"} in refused.value.problems
    assert (count(db), count(db, Blob), count(db, Team)) == (0, blobs_before, 0)


def test_a_zip_that_unpacks_past_the_limit_is_refused(db: Database, labels: type[LabelScorer]) -> None:
    setup(db)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("run.json", b" " * 20_000 + as_bytes(PERFECT))
    assert len(buffer.getvalue()) < LIMITS.max_upload_bytes
    with pytest.raises(InvalidInput) as refused:
        submit(db, buffer.getvalue())
    (problem,) = refused.value.problems
    assert problem["where"] == "zip archive"
    assert (
        problem["message"] == f"entry 'run.json' unpacks to {20_000 + len(as_bytes(PERFECT))} bytes; the limit is 10000"
    )
    assert count(db) == 0


def test_an_oversize_file_is_refused_with_the_limit(db: Database, labels: type[LabelScorer]) -> None:
    setup(db)
    with pytest.raises(UploadTooLarge, match="at most 1000 bytes") as refused:
        submit(db, b" " * 1001)
    assert refused.value.limit == 1000


def test_a_phase_may_set_its_own_size_limit(db: Database, labels: type[LabelScorer]) -> None:
    setup(db, max_upload_bytes=10)
    with pytest.raises(UploadTooLarge, match="at most 10 bytes"):
        submit(db, PERFECT)


def test_closed_phases_say_when_they_open_or_closed(db: Database, labels: type[LabelScorer]) -> None:
    setup(db, starts_at=utc("2025-03-10T13:00Z"), ends_at=utc("2025-03-20T00:00Z"))
    with pytest.raises(PhaseClosed, match="not open yet; it opens at 2025-03-10 13:00 UTC") as early:
        submit(db, PERFECT, now=utc("2025-03-10T12:59Z"))
    assert early.value.opens_at == utc("2025-03-10T13:00Z")
    with pytest.raises(PhaseClosed, match="closed at 2025-03-20 00:00 UTC") as late:
        submit(db, PERFECT, now=utc("2025-03-20T00:00Z"))
    assert late.value.closed_at == utc("2025-03-20T00:00Z")
    submit(db, PERFECT, now=utc("2025-03-10T13:00Z"))
    assert count(db) == 1


def test_the_daily_limit_resets_at_utc_midnight(db: Database, labels: type[LabelScorer]) -> None:
    setup(db, daily_limit=2)
    submit(db, PERFECT, now=utc("2025-03-10T00:00Z"))
    submit(db, HALF, now=utc("2025-03-10T23:00Z"))
    with pytest.raises(QuotaExhausted, match="resets at 2025-03-11 00:00 UTC") as refused:
        submit(db, PERFECT, now=utc("2025-03-10T23:59Z"))
    assert refused.value.resets_at == utc("2025-03-11T00:00Z")
    submit(db, PERFECT, now=utc("2025-03-11T00:00Z"))  # a new day: 1 of 2 used
    assert count(db) == 3


def test_limits_are_per_team(db: Database, labels: type[LabelScorer]) -> None:
    setup(db, total_limit=1)
    submit(db, PERFECT, user="ada")
    submit(db, PERFECT, user="bob")
    with pytest.raises(QuotaExhausted, match="all 1 submissions allowed in phase 'dev'; this limit does not reset"):
        submit(db, PERFECT, user="ada")


def test_a_refused_file_costs_no_quota(db: Database, labels: type[LabelScorer]) -> None:
    setup(db, total_limit=1)
    with pytest.raises(InvalidInput):
        submit(db, {"nope": "x"})
    submit(db, PERFECT)
    assert count(db) == 1


def test_a_submission_the_platform_failed_gives_its_slot_back(db: Database, labels: type[LabelScorer]) -> None:
    setup(db, total_limit=1)
    first = submit(db, PERFECT)
    with db.session() as session:
        session.get(Submission, first).quota_refunded = True  # type: ignore[union-attr]
        session.commit()
    submit(db, PERFECT)
    assert count(db) == 2


def test_the_gold_is_parsed_once_per_process(db: Database, labels: type[LabelScorer]) -> None:
    setup(db)
    cache = GoldCache()
    submit(db, PERFECT, cache=cache)
    (key,) = cache._entries
    parsed = cache._entries[key]
    submit(db, HALF, cache=cache)
    assert cache._entries[key] is parsed


@pytest.mark.parametrize("existing_team", [False, True])
def test_of_two_uploads_racing_for_the_last_slot_exactly_one_wins(
    db: Database, labels: type[LabelScorer], existing_team: bool
) -> None:
    setup(db, total_limit=2 if existing_team else 1)
    if existing_team:
        submit(db, PERFECT)  # the team exists and has one slot left
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def race() -> None:
        barrier.wait()
        try:
            submit(db, HALF)
            outcomes.append("accepted")
        except QuotaExhausted:
            outcomes.append("refused")

    threads = [threading.Thread(target=race) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["accepted", "refused"]
    assert count(db) == (2 if existing_team else 1)
    assert count(db, Team) == 1
