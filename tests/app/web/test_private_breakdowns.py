"""The private board's breakdown columns (SV-Ident's per-language F1) through the server: computed on the private
board's units, shown to the organizers before the reveal and to everyone after it, and before the reveal nothing a
participant sees depends on them: a phase whose gold is changed only on its private groups and rescored looks the
same to participants (the board as JSON and CSV, a further board of one language, the API, the team's own
submission)."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.storage.db import Database
from app.storage.models import Competition, Phase, Task
from leaderboard.multi import BoardSpec
from scorers.split import Split
from scorers.tasks.svident import unit_id
from tests.app.builders import bundle_file, make_competition, make_user, phase_spec
from tests.app.web.test_api import auth
from tests.app.web.test_pages import text, wait

COMPETITION, TASK = "pb", "labels"
API = f"/api/v1/competitions/{COMPETITION}/tasks/{TASK}/phases"
HEADER = "sentence\tis_variable\tvariable\tresearch_data\tdoc_id\tuuid\tlang\n"
#: 12 documents per language, 4 sentences each (the first two mention a variable).
GERMAN = BoardSpec("german", "German", ("f1",), slice=("language", "de"))
GROUPS = [(lang, f"{90000 + d}") for lang in ("de", "en") for d in range(12)]


def _gold(flipped: frozenset[str] = frozenset()) -> bytes:
    rows = []
    for lang, doc in GROUPS:
        for s in range(4):
            label = int(s < 2) ^ int(unit_id(lang, doc) in flipped)
            variable = ("exploredata-EX0001_Varq32", "EX0001") if label else ("", "")
            uuid = f"00000000-0000-4000-8000-{int(doc) * 10 + s + (0 if lang == 'de' else 5000000):012d}"
            rows.append(f"Sentence {s} of {doc}.\t{label}\t{variable[0]}\t{variable[1]}\t{doc}\t{uuid}\t{lang}\n")
    return (HEADER + "".join(rows)).encode()


def _run(sample: dict[str, Any]) -> bytes:
    """Right on the first sentence of each document, on the second of one document in three, wrong on the others:
    groups score differently, so a breakdown depends on which groups it is of."""

    def label(uuid: str) -> str:
        number = int(uuid[-12:]) % 5000000
        sentence, doc = number % 10, number // 10
        return "1" if sentence == 0 or (sentence == 1 and doc % 3 == 0) else "0"

    return json.dumps({uuid: label(uuid) for uuid in sample}).encode()


def _seen(client: TestClient, headers: dict[str, str], phase: str, sid: int) -> list[Any]:
    """What a participant (or anyone, without ``headers``) sees of the phase, its own names taken out."""
    board = client.get(f"{API}/{phase}/leaderboard", headers=headers).json()
    for entry in board["entries"]:
        entry.pop("submission_id")
        entry.pop("submitted_at")
    board.pop("phase")
    own = client.get(f"/api/v1/submissions/{sid}", headers=headers).json() if headers else {}
    keys = ("status", "metrics", "breakdown", "interval", "private_metrics", "private_board")
    page = f"/c/{COMPETITION}/{TASK}/{phase}"
    exported = client.get(f"{page}/leaderboard.json").json()
    for entry in exported["entries"]:
        entry.pop("submitted_at")
    rows = list(csv.reader(io.StringIO(client.get(f"{page}/leaderboard.csv").text)))
    german = client.get(f"{page}/boards/german.json").json()
    for entry in german["entries"]:
        entry.pop("submission_id")
        entry.pop("submitted_at")
    return [board, {k: own.get(k) for k in keys}, exported, [row[:3] + row[4:] for row in rows], german]


def test_the_private_board_breaks_down_on_its_own_units_and_participants_see_nothing_of_it_before_the_reveal(
    db: Database, client: TestClient
) -> None:
    with db.session() as session:
        make_user(session, "olga", organizer=True)
        make_user(session, "ada")
        phase = phase_spec(
            "a", gold=bundle_file("gold.tsv", _gold()), public_files=(), private_share=0.5, boards=(GERMAN,)
        )
        make_competition(session, COMPETITION, organizers=("olga",), scorer="svident-detection", phases=(phase,))
        session.flush()
        row = session.scalar(select(Phase).join(Task).join(Competition).where(Competition.slug == COMPETITION))
        assert row is not None and row.split_secret
        private = Split(0.5, row.split_secret).private_units(unit_id(lang, doc) for lang, doc in GROUPS)
        session.commit()
    assert 4 < len(private) < 20
    ada, olga = auth(db, "ada"), auth(db, "olga")
    sample = client.get(f"{API}/a/sample").json()
    files = {"file": ("submission.json", _run(sample), "application/json")}
    answer = client.post(f"{API}/a/submissions", headers=ada, files=files)
    assert answer.status_code == 202, answer.text
    sid = answer.json()["id"]
    wait(client)

    seen = {name: _seen(client, headers, "a", sid) for name, headers in (("anyone", {}), ("ada", ada))}
    first = client.get(f"{API}/a/leaderboard", headers=olga).json()["private_board"][0]["columns"]["language"]
    # The phase's gold again with every private group's labels flipped (the same phase: the same split and the same
    # resampling seed), rescored: participants see the same as before, the organizers another private board.
    from app.storage.blobs import put_blob

    with db.session() as session:
        row = session.scalar(select(Phase).join(Task).join(Competition).where(Competition.slug == COMPETITION))
        assert row is not None
        row.gold_blob_id = put_blob(session, _gold(frozenset(private))).id
        session.commit()
    assert client.post(f"{API}/a/rescore", headers=olga).status_code == 202
    wait(client)
    for name, headers in (("anyone", {}), ("ada", ada)):
        assert _seen(client, headers, "a", sid) == seen[name], f"what {name} sees depends on the private groups"
        assert client.get(f"{API}/a/leaderboard", headers=headers).json()["private_board"] is None
    assert "private-board" not in client.get(f"/c/{COMPETITION}/{TASK}/a").text
    public_columns = client.get(f"{API}/a/leaderboard").json()["entries"][0]["columns"]["language"]
    german = [g for g in GROUPS if g[0] == "de"]
    private_german = sum(1 for g in german if unit_id(*g) in private)
    shown = client.get(f"/c/{COMPETITION}/{TASK}/a/boards/german.json").json()["entries"][0]
    assert (shown["score"], shown["interval"]["units"]) == (public_columns["de"]["f1"], len(german) - private_german)

    # The organizers see the private board with its per-language columns: the private groups' (they changed with
    # the private gold), not the public board's.
    move = client.get(f"{API}/a/leaderboard", headers=olga).json()["private_board"][0]
    private_columns = move["columns"]["language"]
    assert set(private_columns) == {"de", "en"} and private_columns not in (public_columns, first)
    assert move["metrics"]["f1"] == pytest.approx((private_columns["de"]["f1"] + private_columns["en"]["f1"]) / 2)

    # After the reveal everyone sees the private board, breakdown columns included, and the main board's columns
    # are the private board's too.
    assert client.post(f"{API}/a/reveal", headers=olga).status_code == 200
    revealed = client.get(f"{API}/a/leaderboard").json()
    assert revealed["private_board"][0]["columns"]["language"] == private_columns
    assert revealed["entries"][0]["columns"]["language"] == private_columns
    # The board of German documents ranks the private German groups' F1, and resamples those groups.
    shown = client.get(f"/c/{COMPETITION}/{TASK}/a/boards/german.json").json()["entries"][0]
    assert (shown["score"], shown["interval"]["units"]) == (private_columns["de"]["f1"], private_german)
    shown = text(client.get(f"/c/{COMPETITION}/{TASK}/a"))
    assert "Shake-up: the private board" in shown
    assert f"{private_columns['de']['f1'] * 100:.2f}" in shown and "break the primary metric down on" in shown
