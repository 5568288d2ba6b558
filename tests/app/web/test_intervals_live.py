"""Intervals and tied groups end to end: a real ``podium serve`` holding the example competitions, two teams
uploading over HTTP to the example phase of every registered scorer (a perfect file and a worse one), then
the JSON API, the CSV export and the page in a real browser (Debian's chromium through Playwright). Also a
hidden phase (nothing before the reveal, for anyone but its organizers) and a phase whose bundle turns
intervals off.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from app.services.accounts import users
from app.storage.db import Database
from leaderboard.exports import UNCERTAINTY_FIELDS
from scorers import get_scorer
from tests.app.builders import bundle_file, make_competition, make_user, phase_spec
from tests.app.web.browser import CHROMIUM, open_browser, upload, wait_scored
from tests.security.live_server import TIMEOUT, LiveServer, serve
from tests.security.seed_examples import example, seed_scorers

pytestmark = pytest.mark.slow

LEADERBOARD = "competitions/{}/tasks/{}/phases/{}/leaderboard"


def resampled_scorers() -> list[str]:
    """The scorers whose boards carry intervals: all but those that score a submission as a whole (a
    scoring program, whose phases have intervals off; tests/app/services/bundles checks that)."""
    return [name for name in seed_scorers() if not get_scorer(name).raw_submission]


def _every_other(keys: list[str]) -> set[str]:
    return set(sorted(keys)[::2])


def _json_object(change: Callable[[Any, str, dict[str, Any]], Any]) -> Callable[[bytes], bytes]:
    """A worse file: ``change(value, key, whole)`` applied to every other key (``...`` drops the key)."""

    def worse(perfect: bytes) -> bytes:
        run = json.loads(perfect)
        chosen = _every_other(list(run))
        out = {k: (change(v, k, run) if k in chosen else v) for k, v in run.items()}
        return json.dumps({k: v for k, v in out.items() if v is not ...}).encode()

    return worse


def _scier(perfect: bytes) -> bytes:
    docs = [json.loads(line) for line in perfect.decode().splitlines() if line.strip()]
    for doc in docs[::2]:
        doc["predicted_relations"] = [[] for _ in doc["predicted_relations"]]
    return "\n".join(json.dumps(d) for d in docs).encode()


def _trec(perfect: bytes) -> bytes:
    """Every other query ranked upside down."""
    lines = [line.split() for line in perfect.decode().splitlines() if line.strip()]
    flipped = _every_other(sorted({q for q, *_ in lines}))
    out = []
    for query, q0, doc, rank, score, tag in lines:
        out.append(" ".join([query, q0, doc, rank, str(-float(score) if query in flipped else score), tag]))
    return "\n".join(out).encode()


def _other_label(value: str, key: str, run: dict[str, str]) -> str:
    return next(label for label in sorted(set(run.values())) if label != value)


#: A file worse than the perfect one, per scorer.
WORSE: dict[str, Callable[[bytes], bytes]] = {
    "svident-detection": _json_object(lambda v, k, run: "0" if v == "1" else "1"),
    "svident-disambiguation": _json_object(lambda v, k, run: ...),
    "scier-ere": _scier,
    "scier-re": _scier,
    "famus-cdae": _json_object(lambda v, k, run: []),
    "famus-sv": _json_object(lambda v, k, run: 1 - v),
    "trec": _trec,
    "classification": _json_object(_other_label),
    "regression": _json_object(lambda v, k, run: v + (3.0 if v < 3 else -3.0)),
}

#: The extra competition: a famus-sv phase that is hidden and one whose bundle turns intervals off.
EXTRA = ("uncertain", "labels")
INSTANCES = 24  # at least 20: no interval of these phases is flagged as resting on few units
GOLD = [{"instance_id": f"i{i:02d}", "valid_source": i % 2 == 0, "frame": "Arriving"} for i in range(INSTANCES)]
PERFECT = {row["instance_id"]: int(row["valid_source"]) for row in GOLD}
#: Wrong on a third of the instances.
POOR = {k: (1 - v if i % 3 == 0 else v) for i, (k, v) in enumerate(PERFECT.items())}


@dataclass(frozen=True)
class Setup:
    server: LiveServer
    rival_token: str
    #: Per phase (competition, task, phase): the submission ids (perfect, worse).
    submitted: dict[tuple[str, str, str], tuple[int, int]]

    def get(self, path: str, token: str | None = None) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.get(self.server.api(path), headers=headers, timeout=TIMEOUT)

    def board(self, ref: tuple[str, str, str], token: str | None = None) -> dict[str, Any]:
        answer = self.get(LEADERBOARD.format(*ref), token)
        assert answer.status_code == 200, answer.text
        return dict(answer.json())

    def page(self, ref: tuple[str, str, str], part: str = "") -> str:
        return f"{self.server.url}/c/{'/'.join(ref)}{part}"


@pytest.fixture(scope="module")
def live(migrated: Database, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    with serve(migrated, tmp_path_factory.mktemp("intervals")) as server:
        gold = "".join(json.dumps(row) + "\n" for row in GOLD).encode()
        with migrated.session() as session:
            rival = make_user(session, "rival")
            rival_token = users.issue_token(session, rival, "test")
            make_competition(
                session,
                EXTRA[0],
                organizers=("demo-organizer",),
                scorer="famus-sv",
                phases=(
                    phase_spec("hidden", gold=bundle_file("gold.jsonl", gold), visibility="hidden"),
                    phase_spec("off", gold=bundle_file("gold.jsonl", gold), intervals=False),
                ),
            )
            session.commit()
        files: dict[tuple[str, str, str], tuple[bytes, bytes]] = {}
        for name in resampled_scorers():
            found = example(name)
            files[found.ref] = (found.submission, WORSE[name](found.submission))
        for phase in ("hidden", "off"):
            files[(*EXTRA, phase)] = (json.dumps(PERFECT).encode(), json.dumps(POOR).encode())
        submitted = {}
        for ref, (perfect, worse) in files.items():
            ids = (
                upload(server.url, server.token, ref, perfect, "perfect"),
                upload(server.url, rival_token, ref, worse, "worse"),
            )
            submitted[ref] = ids
        for first, second in submitted.values():
            wait_scored(server.url, server.token, first)
            wait_scored(server.url, rival_token, second)
        yield Setup(server, rival_token, submitted)


def test_every_scorer_has_a_worse_file() -> None:
    assert set(resampled_scorers()) <= set(WORSE)


@pytest.mark.parametrize("name", resampled_scorers())
def test_the_api_and_the_csv_carry_intervals_and_the_comparison(live: Setup, name: str) -> None:
    ref = example(name).ref
    perfect, worse = live.submitted[ref]
    board = live.board(ref)
    assert board["intervals"] is True
    entries = board["entries"]
    assert [e["submission_id"] for e in entries] == [perfect, worse], "the perfect file ranks first"
    primary = board["primary_metric"]
    units = {e["interval"]["units"] for e in entries}
    assert len(units) == 1 and min(units) > 0, "both are resampled over the same units"
    for entry in entries:
        interval = entry["interval"]
        assert set(interval) == {
            "low",
            "high",
            "level",
            "method",
            "units",
            "few_units",
            "zero_width",
            "too_few_units",
            "reliable",
            "label",
            "notes",
            "mc_error",
            "selected_from",
        }
        assert (interval["level"], interval["method"]) == (0.95, "bca-expanded")
        assert interval["low"] <= entry["metrics"][primary] <= interval["high"]
        assert interval["few_units"] == (interval["units"] < 20)
        assert interval["zero_width"] == (interval["low"] == interval["high"])
    assert board["few_units"] == any(e["interval"]["few_units"] for e in entries)
    (comparison,) = board["comparisons"]
    assert (comparison["better"], comparison["worse"]) == (perfect, worse)
    assert comparison["method"] == "paired bootstrap test of equal means, Holm-corrected"
    groups = [e["tied_group"] for e in entries]
    if min(units) <= 5:  # too few to compare: no p-value, no groups, and the board says so
        assert (comparison["p_value"], comparison["too_few_units"], board["too_few_units"]) == (None, True, True)
        assert groups == [None, None] and all(e["interval"]["too_few_units"] for e in entries)
    else:
        assert 0 < comparison["p_value"] <= 1
        assert comparison["too_few_units"] is False and board["too_few_units"] is False
        assert groups == ([1, 2] if comparison["significant"] else [1, 1])
    # The same numbers on every reload, and the submission's own answer has the interval stored with its score.
    assert live.board(ref) == board
    own = live.get(f"submissions/{perfect}", live.server.token).json()
    assert own["interval"] == entries[0]["interval"]

    exported = httpx.get(live.page(ref, "/leaderboard.csv"), timeout=TIMEOUT)
    rows = list(csv.DictReader(io.StringIO(exported.text)))
    assert list(rows[0])[-len(UNCERTAINTY_FIELDS) :] == list(UNCERTAINTY_FIELDS)
    for row, entry in zip(rows, entries, strict=True):
        assert float(row["interval_low"]) == entry["interval"]["low"]
        assert float(row["interval_high"]) == entry["interval"]["high"]
        assert int(row["interval_units"]) == entry["interval"]["units"]
        assert row["interval_few_units"] == str(entry["interval"]["few_units"]).lower()
        assert row["tied_group"] == str(entry["tied_group"] or "")
        assert row["interval_label"] == entry["interval"]["label"]


def test_a_perfect_file_on_every_instance_has_a_zero_width_interval(live: Setup) -> None:
    ref = example("famus-sv").ref
    perfect = live.board(ref)["entries"][0]
    assert perfect["metrics"]["f1"] == 1.0
    assert perfect["interval"]["zero_width"] and perfect["interval"]["low"] == perfect["interval"]["high"] == 1.0


def test_nothing_of_a_hidden_phase_shows_before_the_reveal(live: Setup) -> None:
    ref = (*EXTRA, "hidden")
    for token in (None, live.server.token, live.rival_token):
        board = live.board(ref, token)
        assert (board["hidden"], board["entries"], board["comparisons"], board["few_units"]) == (True, [], [], False)
    assert httpx.get(live.page(ref, "/leaderboard.csv"), timeout=TIMEOUT).status_code == 404
    assert httpx.get(live.page(ref, "/leaderboard.json"), timeout=TIMEOUT).status_code == 404
    for paper in ("/leaderboard.tex", "/leaderboard.md"):
        assert httpx.get(live.page(ref, paper), timeout=TIMEOUT).status_code == 404
    page = httpx.get(live.page(ref), timeout=TIMEOUT).text
    assert "whisker" not in page and "95% interval" not in page and "Tied group" not in page
    perfect, worse = live.submitted[ref]
    own = live.get(f"submissions/{perfect}", live.server.token).json()
    assert (own["status"], own["metrics_hidden"], own["metrics"], own["interval"]) == ("scored", True, None, None)

    organizers = live.board(ref, live.server.organizer_token)
    assert [e["submission_id"] for e in organizers["entries"]] == [perfect, worse]
    assert all(e["interval"] and not e["interval"]["few_units"] for e in organizers["entries"])
    assert organizers["entries"][0]["interval"]["units"] == INSTANCES
    assert [(c["better"], c["worse"]) for c in organizers["comparisons"]] == [(perfect, worse)]

    revealed = httpx.post(
        live.server.api(LEADERBOARD.format(*ref).replace("/leaderboard", "/reveal")),
        headers={"Authorization": f"Bearer {live.server.organizer_token}"},
        timeout=TIMEOUT,
    )
    assert revealed.status_code == 200, revealed.text
    public = live.board(ref)
    assert public["entries"] == organizers["entries"] and public["comparisons"] == organizers["comparisons"]
    assert live.get(f"submissions/{perfect}", live.server.token).json()["interval"] == public["entries"][0]["interval"]
    assert "whisker" in httpx.get(live.page(ref), timeout=TIMEOUT).text


def test_a_phase_with_intervals_off_shows_none(live: Setup) -> None:
    ref = (*EXTRA, "off")
    board = live.board(ref)
    assert (board["intervals"], board["comparisons"], board["few_units"]) == (False, [], False)
    assert [(e["interval"], e["tied_group"]) for e in board["entries"]] == [(None, None), (None, None)]
    header = httpx.get(live.page(ref, "/leaderboard.csv"), timeout=TIMEOUT).text.splitlines()[0]
    assert "interval_low" not in header and "tied_group" not in header
    assert "interval" not in httpx.get(live.page(ref, "/leaderboard.json"), timeout=TIMEOUT).json()["entries"][0]
    page = httpx.get(live.page(ref), timeout=TIMEOUT).text
    assert "whisker" not in page and "Tied group" not in page
    phase = live.get("competitions/{}/tasks/{}/phases/{}".format(*ref)).json()
    assert phase["intervals"] is False
    own = live.get(f"submissions/{live.submitted[ref][0]}", live.server.token).json()
    assert own["metrics"] is not None and own["interval"] is None


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")
def test_the_page_draws_a_whisker_per_entry_and_the_groups(live: Setup) -> None:
    from playwright.sync_api import expect

    refs = [example(name).ref for name in resampled_scorers()] + [(*EXTRA, "off")]
    with open_browser() as browser:
        page = browser.new_page()
        for ref in refs:
            board = live.board(ref)
            page.goto(live.page(ref))
            rows = page.locator("table.board tbody tr")
            expect(rows).to_have_count(2)
            if not board["intervals"]:
                expect(page.locator(".whisker")).to_have_count(0)
                expect(page.locator(".uncertainty-note")).to_have_count(0)
                continue
            for row, entry in zip(rows.all(), board["entries"], strict=True):
                whisker = row.locator(".whisker")
                expect(whisker).to_have_count(1)
                expect(whisker.locator("svg line")).to_have_count(3)
                title = whisker.get_attribute("title") or ""
                interval = entry["interval"]
                # The whisker says what the interval is: its label (a 95% interval, or why it is not one).
                assert title.startswith(interval["label"]) and f"{interval['units']} units" in title
                assert title.startswith("95% interval") == interval["reliable"]
                # Its flags are said where the whisker is, and marked with a dagger.
                assert ("says little" in title or "rough" in title) == interval["few_units"]
                assert ("zero width" in title) == interval["zero_width"]
                if interval["zero_width"]:  # not drawn as an interval [est, est]
                    expect(whisker.locator(".interval-text")).to_have_text("zero width")
                flagged = interval["few_units"] or interval["zero_width"]
                expect(whisker.locator("abbr")).to_have_count(1 if flagged else 0)
                expect(row.locator("td.group")).to_have_text(str(entry["tied_group"] or "–"))
                # The whisker is drawn: it has a width on the page.
                box = whisker.locator("svg").bounding_box()
                assert box is not None and box["width"] > 50
            separated = page.locator("table.board tbody tr.group-start")
            expect(separated).to_have_count(max(0, len({e["tied_group"] for e in board["entries"]} - {None}) - 1))
            note = page.locator(".uncertainty-note")
            expect(note).to_be_visible()
            expect(note.locator(".too-few")).to_have_count(1 if board["too_few_units"] else 0)
            expect(note.locator(".few-units")).to_have_count(1 if board["few_units"] else 0)
