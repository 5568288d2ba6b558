"""A ladder board (``board: ladder``): the bundle key is read and checked, the board shows each team's score as
the Ladder does (a new score only past the paired standard error, else the last shown one), a team sees its
numbers through the board alone, and the per-document export is closed to the public."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from app.services.accounts.users import find_user
from app.services.boards.cache import BoardCache
from app.services.bundles.loader import load_bundle
from app.services.errors import NotFound
from app.services.submissions import results
from app.storage.db import Database
from app.web.pages.boards import documents_export
from tests.app.builders import HALF, PERFECT
from tests.app.labels_scorer import LabelScorer
from tests.app.services.boards.test_standings import QUARTER, board, ranking, scored, setup
from tests.app.services.bundles.test_loader import problems_of, write_bundle
from tests.app.services.bundles.test_loader_refusals import EXAMPLES, with_phase


def test_the_ladder_shows_a_new_score_only_past_the_margin(db: Database, labels: type[LabelScorer]) -> None:
    setup(db, board="ladder")
    scored(db, "ada", QUARTER, 1)  # 1 of 4 right: shown 0.25
    half = scored(db, "ada", HALF, 2)  # 2 of 4: +0.25, but the paired standard error is 0.25: not past it
    scored(db, "bob", HALF, 3)  # bob's first: shown as it is
    assert ranking(db) == [(1, "bob", 0.5), (2, "ada", 0.25)]
    answer = board(db)
    assert answer["board"] == "ladder"
    assert half not in [e["submission_id"] for e in answer["entries"]]
    perfect = scored(db, "ada", PERFECT, 4)  # 4 of 4 against 1 of 4: +0.75 past 0.25
    assert ranking(db) == [(1, "ada", 1.0), (2, "bob", 0.5)]
    assert board(db)["entries"][0]["submission_id"] == perfect
    # A team reads its numbers on the board only; its organizers read every number.
    with db.session() as session:
        own = results.show(session, find_user(session, "ada"), half)
        assert (own.metrics, own.metrics_hidden) == (None, True)
        assert results.show(session, find_user(session, "olga"), half).metrics == {"accuracy": 0.5}


def test_a_plain_board_shows_every_score(db: Database, labels: type[LabelScorer]) -> None:
    setup(db)
    scored(db, "ada", QUARTER, 1)
    half = scored(db, "ada", HALF, 2)
    scored(db, "bob", HALF, 3)
    assert ranking(db) == [(1, "ada", 0.5), (1, "bob", 0.5)]
    assert board(db)["board"] == "plain"
    with db.session() as session:
        assert results.show(session, find_user(session, "ada"), half).metrics == {"accuracy": 0.5}


def test_the_public_gets_no_per_document_scores_of_a_ladder_board(db: Database, labels: type[LabelScorer]) -> None:
    setup(db, board="ladder")
    scored(db, "ada", HALF, 1)
    snapshot = BoardCache(db).get(("comp", "labels", "dev"), "public")
    if snapshot.description.per_unit_breakdown is None:
        pytest.skip("the labels scorer keeps no per-document scores")
    with pytest.raises(NotFound, match="ladder"):
        documents_export(snapshot, "csv", db.session)


def test_the_bundle_key_is_read_and_checked(tmp_path: Path) -> None:
    assert (
        load_bundle(write_bundle(tmp_path / "ladder", with_phase(board="ladder"))).tasks[0].phases[0].board == "ladder"
    )
    assert load_bundle(write_bundle(tmp_path / "plain", with_phase())).tasks[0].phases[0].board == "plain"
    assert problems_of(write_bundle(tmp_path / "bad", with_phase(board="sideways"))) == [
        ("tasks[0].phases[0].board", "expected one of plain, ladder; found text ('sideways')")
    ]
    folder = tmp_path / "program"
    shutil.copytree(EXAMPLES / "program", folder)
    bundle = yaml.safe_load((folder / "competition.yaml").read_text())
    bundle["tasks"][0]["phases"][0]["board"] = "ladder"
    (folder / "competition.yaml").write_text(yaml.safe_dump(bundle))
    assert problems_of(folder) == [
        ("tasks[0].phases[0].board", "program scores a submission as a whole: no units to compare on")
    ]
