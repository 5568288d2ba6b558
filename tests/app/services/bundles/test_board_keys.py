"""The bundle's ``boards`` of a phase: read into board specs (one per SV-Ident language, a mean-of-ranks board),
and every mistake named under its key path; a bundle with boards loads them onto its phase."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.services.bundles.board_keys import read_boards
from app.services.bundles.checks import KeyPathChecker
from app.services.bundles.loader import load_bundle
from leaderboard.multi import BoardSpec
from scorers import get_scorer
from tests.app.services.bundles.test_loader import write_bundle
from tests.app.services.bundles.test_loader_refusals import with_phase

SVIDENT = get_scorer("svident-detection")


def _read(boards: Any) -> tuple[tuple[BoardSpec, ...], list[tuple[str, str]]]:
    checks = KeyPathChecker()
    return read_boards(checks, {"boards": boards}, "tasks[0].phases[0]", SVIDENT), checks.problems


def test_one_board_per_language_and_a_mean_of_ranks() -> None:
    boards, problems = _read(
        [
            {"name": "german", "title": "German", "metrics": ["f1"], "slice": {"language": "de"}},
            {"name": "english", "metrics": ["f1", "precision"], "slice": {"language": "en"}, "by": "precision"},
            {"name": "ranks", "metrics": ["precision", "recall"], "ranking": "mean_of_ranks"},
        ]
    )
    assert problems == []
    assert boards == (
        BoardSpec("german", "German", ("f1",), slice=("language", "de")),
        BoardSpec("english", "english", ("f1", "precision"), by="precision", slice=("language", "en")),
        BoardSpec("ranks", "ranks", ("precision", "recall"), ranking="mean_of_ranks"),
    )


def test_every_mistake_is_named_under_its_key_path() -> None:
    at = "tasks[0].phases[0].boards"
    boards, problems = _read(
        [
            {"name": "Bad Name", "metrics": ["f1"]},
            {"name": "a", "metrics": ["accuracy"]},
            {"name": "b", "metrics": ["f1"], "ranking": "rank_of_ranks"},
            {"name": "c", "metrics": ["f1"], "slice": {"document": "d1"}},
            {"name": "d", "metrics": ["f1"], "ranking": "vibes", "colour": "red"},
            {"name": "e", "metrics": ["f1"]},
            {"name": "e", "metrics": ["recall"]},
            "german",
        ]
    )
    assert [b.name for b in boards] == ["e"]
    assert problems == [
        (f"{at}[0].name", "expected lower-case letters, digits and dashes (at most 40), found text ('Bad Name')"),
        (f"{at}[1].metrics", "svident-detection has no metric 'accuracy' (it has: f1, precision, recall)"),
        (f"{at}[2].ranking", "rank_of_ranks ranks by several metrics: name at least two"),
        (
            f"{at}[3].slice",
            "the board can slice by what the scorer breaks its board down by (language), not 'document'",
        ),
        (f"{at}[4].colour", "unknown key (a board takes by, metrics, name, ranking, slice, title)"),
        (f"{at}[4].ranking", "expected one of metric, mean_of_ranks, rank_of_ranks; found text ('vibes')"),
        (f"{at}[6].name", "another board is named 'e'"),
        (f"{at}[7]", "expected a mapping, found text ('german')"),
    ]


def test_a_bundle_with_boards_loads_them(tmp_path: Path) -> None:
    folder = write_bundle(tmp_path / "boards", with_phase(boards=[{"name": "all", "metrics": ["f1"]}]))
    (phase,) = load_bundle(folder).tasks[0].phases
    assert phase.boards == (BoardSpec("all", "all", ("f1",)),)
