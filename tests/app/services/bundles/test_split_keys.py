"""A phase's private split in its bundle: ``private_share`` and ``private_board``, each mistake under its key path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.orm import Session

from app.services.bundles.loader import load_bundle
from app.services.competitions import catalog
from app.storage.db import Database
from tests.app.services.bundles.test_loader import make_bundle, make_phase, make_task, problems_of, write_bundle

PHASE = "tasks[0].phases[0]"


def _bundle(tmp_path: Path, *, scorer: str = "svident-detection", **phase: Any) -> Path:
    return write_bundle(
        tmp_path / "bundle", make_bundle(tasks=[make_task(scorer=scorer, phases=[make_phase(**phase)])])
    )


def test_a_share_and_a_private_board_are_read(tmp_path: Path) -> None:
    spec = load_bundle(_bundle(tmp_path, private_share=0.3, private_board="all"))
    phase = spec.tasks[0].phases[0]
    assert (phase.private_share, phase.private_board) == (0.3, "all")
    default = load_bundle(write_bundle(tmp_path / "plain", make_bundle())).tasks[0].phases[0]
    assert (default.private_share, default.private_board) == (None, "private")


@pytest.mark.parametrize("share", [0, 1, 1.5, -0.2, "half", True, [0.5]])
def test_a_share_outside_zero_and_one_is_refused(tmp_path: Path, share: Any) -> None:
    ((key, message),) = problems_of(_bundle(tmp_path, private_share=share))
    assert key == f"{PHASE}.private_share"
    assert "strictly between 0 and 1" in message


def test_a_private_board_is_private_or_all_and_needs_a_share(tmp_path: Path) -> None:
    ((key, message),) = problems_of(_bundle(tmp_path, private_share=0.5, private_board="public"))
    assert key == f"{PHASE}.private_board" and "private, all" in message
    ((key, message),) = problems_of(_bundle(tmp_path / "2", private_board="all"))
    assert key == f"{PHASE}.private_board" and "only a phase with a private_share" in message


def test_a_scorer_that_cannot_restrict_its_metric_to_units_refuses_the_share(tmp_path: Path) -> None:
    gold = json.dumps({"docid": "d1", "templates": []}).encode() + b"\n"
    folder = write_bundle(
        tmp_path / "cdae",
        make_bundle(
            tasks=[
                make_task(scorer="famus-cdae", phases=[make_phase(gold={"path": "data/g.jsonl"}, private_share=0.5)])
            ]
        ),
        {"data/g.jsonl": gold},
    )
    ((key, message),) = problems_of(folder)
    assert key == f"{PHASE}.private_share"
    assert "famus-cdae cannot keep units private" in message and "largest gold role" in message


def test_each_phase_gets_its_own_secret_when_put_online(tmp_path: Path, db: Database) -> None:
    with db.session() as session:
        _put_online(tmp_path, session)


def _put_online(tmp_path: Path, session: Session) -> None:
    spec = load_bundle(_bundle(tmp_path, private_share=0.5))
    competition, _ = catalog.create_competition(session, spec)
    (phase,) = competition.tasks[0].phases
    assert phase.private_share == 0.5 and phase.private_board == "private"
    assert phase.split_secret is not None and len(phase.split_secret) == 64
    plain, _ = catalog.create_competition(session, load_bundle(write_bundle(tmp_path / "p", make_bundle(slug="plain"))))
    assert plain.tasks[0].phases[0].split_secret is None


def test_final_submissions_and_a_freeze_are_read(tmp_path: Path) -> None:
    spec = load_bundle(_bundle(tmp_path, private_share=0.5, final_submissions=2, frozen_at="2026-12-10T00:00Z"))
    phase = spec.tasks[0].phases[0]
    assert phase.final_submissions == 2
    assert phase.frozen_at is not None and phase.frozen_at.isoformat() == "2026-12-10T00:00:00+00:00"


def test_final_submissions_need_a_private_share_and_a_freeze_a_time(tmp_path: Path) -> None:
    ((key, message),) = problems_of(_bundle(tmp_path, final_submissions=2))
    assert key == f"{PHASE}.final_submissions" and "give the phase a private_share too" in message
    ((key, message),) = problems_of(_bundle(tmp_path / "0", private_share=0.5, final_submissions=0))
    assert key == f"{PHASE}.final_submissions" and "at least 1" in message
    ((key, message),) = problems_of(_bundle(tmp_path / "t", frozen_at="soon"))
    assert key == f"{PHASE}.frozen_at" and "ISO 8601" in message
    early = _bundle(tmp_path / "e", starts_at="2026-12-10T00:00Z", frozen_at="2026-12-01T00:00Z")
    ((key, message),) = problems_of(early)
    assert key == f"{PHASE}.frozen_at" and "later than starts_at" in message
