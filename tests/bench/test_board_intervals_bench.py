"""The application's interval benchmark runs end to end on a small board: each scorer's stored units seed a
phase whose board, built with stored intervals and without, shows the same intervals."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from app.services.boards.snapshot import compute_snapshot
from app.storage.db import Database
from app.storage.migrate import upgrade
from app.storage.models import Phase
from bench.board_intervals_bench import GOLDS, measure, seed
from bench.uncertainty_bench import SCORERS
from scorers import get_scorer

ARGS = argparse.Namespace(units=40, entries=4, repeat=1)


def test_every_scorer_of_the_benchmark_has_a_gold() -> None:
    assert set(SCORERS) == set(GOLDS)


@pytest.mark.parametrize("name", ["svident-detection", "famus-cdae"])
def test_the_seeded_board_shows_the_stored_intervals(name: str, tmp_path: Path) -> None:
    database = Database(f"sqlite:///{tmp_path / 'bench.sqlite3'}")
    upgrade(database.engine)
    try:
        phase_id = seed(database, name, get_scorer(name), ARGS)
        with database.session(read_only=True) as session:
            phase = session.get(Phase, phase_id)
            assert phase is not None
            snapshot = compute_snapshot(session, phase, "public", 0)
        assert snapshot.uncertainty is not None
        assert len(snapshot.entries) == len(snapshot.uncertainty.intervals) == ARGS.entries
        assert snapshot.uncertainty.computed == 0  # every interval was read from its score
        assert {i.units for i in snapshot.uncertainty.intervals.values()} == {ARGS.units}
    finally:
        database.dispose()


def test_a_row_of_the_table(tmp_path: Path) -> None:
    row = measure("famus-sv", ARGS, tmp_path)
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[:2] == ["famus-sv", "40"] and len(cells) == 9
    assert cells[2].endswith(")") and cells[7].endswith("µs") and int(cells[8]) >= 1
