"""A phase's further boards through the server: the bundle's ``boards`` reach the phase, the leaderboard page
links each, and each has a page, a CSV and a JSON ranked as ``leaderboard.multi`` ranks (checked by hand)."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import yaml
from fastapi.testclient import TestClient
from markdown_it import MarkdownIt
from scipy.stats import rankdata

from app.services.bundles.loader import load_bundle
from app.services.competitions import catalog
from app.services.submissions.results import current_scores
from app.storage.db import Database
from leaderboard.multi import BoardSpec
from leaderboard.rank_uncertainty import rank_uncertainty
from leaderboard.uncertainty import phase_seed
from scorers import get_scorer
from tests.app.builders import HALF, PERFECT, make_user, phase_spec
from tests.app.services.boards.test_standings import QUARTER
from tests.app.web.test_api import auth
from tests.app.web.test_pages import BOARD, login, setup, submit, text, wait
from tests.conftest import ROOT

EXAMPLES = ROOT / "examples"

ACCURACY = BoardSpec("accuracy", "By accuracy", ("accuracy",))
RANKS = BoardSpec("ranks", "Mean of ranks", ("accuracy", "accuracy"), ranking="mean_of_ranks")


def test_further_boards_have_pages_and_exports(db: Database, client: TestClient) -> None:
    setup(db, "ada", "bob", "cy", phases=(phase_spec(boards=(ACCURACY, RANKS)),))
    for user, run in (("ada", HALF), ("bob", PERFECT), ("cy", HALF)):
        login(client, user)
        submit(client, run)
        wait(client)
    login(client, "cy")
    submit(client, QUARTER)  # cy's best stays HALF (the main board's choice is the one the boards re-rank)
    wait(client)
    client.cookies.clear()
    page = client.get(BOARD).text
    assert f'href="{BOARD}/boards/accuracy"' in page and f'href="{BOARD}/boards/ranks"' in page

    board = client.get(f"{BOARD}/boards/accuracy")
    assert board.status_code == 200
    assert "entry on the main board, on all units, ranked by accuracy ↑" in text(board)
    rows = list(csv.DictReader(io.StringIO(client.get(f"{BOARD}/boards/accuracy.csv").text)))
    assert [(r["rank"], r["team"], r["score"]) for r in rows] == [
        ("1", "bob", "1.0"),
        ("2", "ada", "0.5"),
        ("2", "cy", "0.5"),
    ]

    # By hand: accuracy ranks bob 1, ada and cy 2.5 each (fractional); twice the same metric: the same means.
    ranked = client.get(f"{BOARD}/boards/ranks.json").json()
    assert ranked["board"]["ranking"] == "mean_of_ranks"
    assert [(e["rank"], e["team"], e["score"]) for e in ranked["entries"]] == [
        (1, "bob", 1.0),
        (2, "ada", 2.5),
        (2, "cy", 2.5),
    ]
    assert ranked["entries"][1]["ranks"] == {"accuracy": 2.5}
    assert "Mean rank" in text(client.get(f"{BOARD}/boards/ranks"))
    # Four documents: the mean ranks' intervals are rough, and no pair is compared (too few, not tied).
    assert ranked["interval_of"] == "mean_rank" and ranked["too_few_units"] is True
    assert all(e["interval"]["label"].startswith(("rough", "zero width")) for e in ranked["entries"])
    assert all(e["tied_group"] is None for e in ranked["entries"]) and ranked["comparisons"][0]["p_value"] is None
    assert "Too few documents to compare entries" in text(client.get(f"{BOARD}/boards/ranks"))
    # The board ranked by one metric has intervals (four labels: rough) and says the entries are too few to compare.
    assert "Too few documents to compare entries" in text(board) and "†" in text(board)
    assert rows[0]["interval_label"].startswith("zero width") and rows[1]["interval_label"].startswith("rough")
    # As a paper's table: a Markdown table of the same rows, a booktabs table with a column per header cell.
    markdown = client.get(f"{BOARD}/boards/ranks.md").text
    html = MarkdownIt("commonmark").enable("table").render(markdown)
    assert html.count("<tr>") == 4 and "Mean rank" in html and "2.50" in html
    latex = client.get(f"{BOARD}/boards/accuracy.tex").text
    assert "\\toprule" in latex and latex.count(" & ") >= 4 * 4 and "By accuracy" in latex
    assert client.get(f"{BOARD}/boards/nothing").status_code == 404
    assert client.get(f"{BOARD}/boards/accuracy.xlsx").status_code == 404


def test_one_board_per_svident_language_and_a_mean_of_ranks_board(
    db: Database, client: TestClient, tmp_path: Path
) -> None:
    folder = tmp_path / "svident"
    shutil.copytree(EXAMPLES / "svident", folder)
    bundle = yaml.safe_load((folder / "competition.yaml").read_text())
    bundle["tasks"][0]["phases"][0]["boards"] = [
        {"name": "german", "title": "German", "metrics": ["f1"], "slice": {"language": "de"}},
        {"name": "english", "title": "English", "metrics": ["f1"], "slice": {"language": "en"}},
        {"name": "ranks", "metrics": ["precision", "recall"], "ranking": "mean_of_ranks"},
    ]
    (folder / "competition.yaml").write_text(yaml.safe_dump(bundle))
    with db.session() as session:
        for name in ("ada", "bob", "cy"):
            make_user(session, name)
        catalog.create_competition(session, load_bundle(folder))
        session.commit()
    api = "/api/v1/competitions/svident/tasks/detection/phases/test"
    sample = client.get(f"{api}/sample").json()
    uuids = sorted(sample)
    runs = {
        "ada": {u: "1" for u in uuids},
        "bob": {u: str(i % 2) for i, u in enumerate(uuids)},
        "cy": {u: str(int(i % 3 == 0)) for i, u in enumerate(uuids)},
    }
    for name, run in runs.items():
        files = {"file": ("submission.json", json.dumps(run).encode(), "application/json")}
        assert client.post(f"{api}/submissions", headers=auth(db, name), files=files).status_code == 202
        wait(client)
    entries = client.get(f"{api}/leaderboard").json()["entries"]
    assert len(entries) == 3
    page = "/c/svident/detection/test"
    for board, language in (("german", "de"), ("english", "en")):
        shown = client.get(f"{page}/boards/{board}.json").json()["entries"]
        # By hand: the entries' stored f1 on the language, best first (ties in the main board's order).
        f1 = {e["team"]: e["columns"]["language"][language]["f1"] for e in entries}
        assert [e["team"] for e in shown] == sorted(f1, key=lambda t: (-f1[t], [x["team"] for x in entries].index(t)))
        assert [e["score"] for e in shown] == [f1[e["team"]] for e in shown]
        # Each entry's interval of f1 on the language's documents only, and the tied groups of this board.
        intervals = [e["interval"] for e in shown]
        assert all(i["low"] <= e["score"] <= i["high"] for i, e in zip(intervals, shown, strict=True))
        assert all(0 < i["units"] < entries[0]["interval"]["units"] for i in intervals)  # one language's groups
        assert all(e["tied_group"] is None or e["tied_group"] >= 1 for e in shown)
    # By hand: fractional ranks on precision and on recall (higher is better), then their mean, lowest first.
    shown = client.get(f"{page}/boards/ranks.json").json()["entries"]
    ranks = {}
    for metric in ("precision", "recall"):
        values = [-e["metrics"][metric] for e in entries]
        for e, r in zip(entries, rankdata(values, method="average"), strict=True):
            ranks.setdefault(e["team"], []).append(float(r))
    means = {team: sum(r) / 2 for team, r in ranks.items()}
    assert [e["score"] for e in shown] == sorted(means.values())
    assert all(e["score"] == means[e["team"]] for e in shown)
    assert "German" in client.get(page).text
    # The mean ranks' intervals and tied groups: the board's units resampled with the phase's seed, every metric
    # and rank recomputed on each resample (leaderboard.rank_uncertainty, checked by hand in tests/leaderboard).
    ranked = client.get(f"{page}/boards/ranks.json").json()
    with db.session() as session:
        stored = current_scores(session, [e["submission_id"] for e in shown], units=True)
        task = catalog.get_phase(session, "svident", "detection", "test").task
        expected = rank_uncertainty(
            get_scorer(task.scorer, dict(task.scorer_options or {})),
            [(e["submission_id"], e["score"], e["values"], stored[e["submission_id"]].units) for e in shown],
            ("precision", "recall"),
            {"precision": True, "recall": True},
            "average",
            seed=phase_seed("svident", "detection", "test"),
        )
    assert expected is not None and ranked["interval_of"] == "mean_rank"
    for e in ranked["entries"]:
        interval = expected.intervals[e["submission_id"]]
        assert (e["interval"]["low"], e["interval"]["high"]) == (interval.low, interval.high)
        assert e["interval"]["units"] == entries[0]["interval"]["units"]  # all the phase's groups
        assert e["tied_group"] == expected.group_of(e["submission_id"])
    assert [c["p_value"] for c in ranked["comparisons"]] == [c.p_value for c in expected.comparisons]
    rows = list(csv.DictReader(io.StringIO(client.get(f"{page}/boards/ranks.csv").text)))
    assert [float(r["interval_low"]) for r in rows] == [e["interval"]["low"] for e in ranked["entries"]]
    board_page = text(client.get(f"{page}/boards/ranks"))
    assert "95% interval of the mean rank" in board_page
    low, high = ranked["entries"][0]["interval"]["low"], ranked["entries"][0]["interval"]["high"]
    assert f"{low:.2f}–{high:.2f}" in board_page
    assert "95% CI" in client.get(f"{page}/boards/ranks.md").text


def test_nothing_of_a_hidden_phase_shows_on_its_further_boards(db: Database, client: TestClient) -> None:
    setup(db, "ada", phases=(phase_spec(boards=(ACCURACY, RANKS), visibility="hidden"),))
    login(client, "ada")
    submit(client, HALF)
    wait(client)
    for path in ("boards/accuracy", "boards/accuracy.csv", "boards/ranks.json"):
        assert client.get(f"{BOARD}/{path}").status_code == 404  # a participant
    client.cookies.clear()
    assert client.get(f"{BOARD}/boards/accuracy").status_code == 404  # anyone
    login(client, "olga")
    assert client.get(f"{BOARD}/boards/accuracy.json").json()["entries"][0]["team"] == "ada"  # its organizers
