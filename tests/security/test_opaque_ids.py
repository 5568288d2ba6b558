"""Opaque ids: a phase whose release ids give the answers away publishes ids of its own.

The attack: in the FAMuS source-validation release every valid pair is ``EN-...-frame-...`` and every
invalid one ``report-...-source-...``, and the invalid pairs all come first; a phase that published the
release's inputs as they are gave every answer away with the file. Here a bundle with such ids (invented,
in the release's shape) and ``opaque_ids: true`` is sent over the API, and a participant gets only ids that
say nothing: in the inputs, in the order of their lines, in every refusal and in the scores. The scores are
those of the same predictions under the release ids, scored offline by ``podium score`` on the release
file; and the ids are the same in another process and after the competition is loaded anew.
"""

from __future__ import annotations

import io
import itertools
import json
import re
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from fastapi.testclient import TestClient
from sqlalchemy import delete

from app.config import Settings
from app.main import create_app
from app.services.accounts import users
from app.services.bundles.loader import load_bundle
from app.services.competitions import catalog
from app.services.competitions.opaque_ids import opaque_id, server_key
from app.storage.blobs import read_blob
from app.storage.db import Database
from app.storage.models import Competition
from scorers import get_scorer
from tests.app.builders import make_user
from tests.conftest import ROOT, require_shared

pytestmark = pytest.mark.slow

PAIRS = 24
REF = ("fam", "sv", "dev")
PHASE = "/api/v1/competitions/fam/tasks/sv/phases/dev"


def release_gold() -> list[dict[str, Any]]:
    """Release-shaped lines: the invalid pairs first, named ``report-...-source-...``; then the valid ones."""
    lines = []
    for k in range(PAIRS):
        valid = k >= PAIRS // 2
        frame = f"Frame_{k % 5}"
        ident = f"EN-{k:04d}-{k}-frame-{frame}" if valid else f"report-EN-{k:04d}-{k}-{frame}-source-EN-{k + 1:04d}"
        report = {"doctext": f"Report {k} about {frame}.", "frame-trigger-span": ["about", 9, 13, 2, 2, ""]}
        lines.append(
            {
                "instance_id": ident,
                "frame": frame,
                "report_dict": report,
                "source_dict": {"doctext": f"Source {k}."},
                "valid_source": valid,
                "bool_generated": False,
            }
        )
    return lines


def as_jsonl(lines: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


LINES = release_gold()
LABELS = {line["instance_id"]: int(line["valid_source"]) for line in LINES}
RELEASE_PATTERN = re.compile(r"report-|-source-|-frame-|EN-")


def bundle_document(slug: str = "fam") -> dict[str, Any]:
    phases = [
        {
            "slug": phase,
            "title": phase.title(),
            "gold": {"path": "sv.jsonl"},
            "opaque_ids": True,
            "public_files": [{"derive": "inputs", "from": "gold"}],
        }
        for phase in ("dev", "test")
    ]
    task = {"slug": "sv", "title": "Source validation", "scorer": "famus-sv", "phases": phases}
    return {"slug": slug, "title": "FAMuS-like", "tasks": [task]}


def write_bundle(folder: Path) -> Path:
    (folder / "competition.yaml").write_text(yaml.safe_dump(bundle_document()))
    (folder / "sv.jsonl").write_bytes(as_jsonl(LINES))
    return folder


def bundle_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("competition.yaml", yaml.safe_dump(bundle_document()))
        archive.writestr("sv.jsonl", as_jsonl(LINES))
    return buffer.getvalue()


@pytest.fixture
def app_client(db: Database, tmp_path: Path) -> Iterator[TestClient]:
    settings = Settings(database_url=db.url, workers=1, data_dir=tmp_path, secret_key="opaque-ids-tests-" * 3)
    with TestClient(create_app(settings)) as client:
        yield client


def token(db: Database, name: str, **roles: bool) -> dict[str, str]:
    with db.session() as session:
        user = users.find_user(session, name) or make_user(session, name, **roles)
        issued = users.issue_token(session, user)
        session.commit()
    return {"Authorization": f"Bearer {issued}"}


def created(db: Database, client: TestClient) -> dict[str, str]:
    """The competition, sent by an organizer; returns the participant's authorization."""
    organizer = token(db, "olga", organizer=True)
    answer = client.post("/api/v1/competitions", headers=organizer, files={"bundle": ("b.zip", bundle_zip())})
    assert answer.status_code == 201, answer.text
    return token(db, "ada")


def inputs(client: TestClient, phase: str = "dev") -> bytes:
    answer = client.get(f"/api/v1/competitions/fam/tasks/sv/phases/{phase}/files/{phase}-inputs.jsonl")
    assert answer.status_code == 200, answer.text
    return answer.content


def ids_of(data: bytes) -> list[str]:
    return [json.loads(line)["instance_id"] for line in data.decode().splitlines()]


def mapping(db: Database, ref: tuple[str, str, str] = REF) -> dict[str, str]:
    """Release id -> opaque id, as the server derives them (what only the server can compute)."""
    with db.session() as session:
        key = server_key(session)
    return {real: opaque_id(key, ref, real) for real in LABELS}


def wait(client: TestClient) -> None:
    assert client.app.state.podium.queue.wait_idle(60)  # type: ignore[attr-defined]


def test_the_inputs_carry_only_ids_that_say_nothing_in_an_order_that_says_nothing(
    db: Database, app_client: TestClient
) -> None:
    created(db, app_client)
    data = inputs(app_client)
    published = ids_of(data)
    assert not RELEASE_PATTERN.search(data.decode())  # no release id, whole or in part
    assert all(re.fullmatch(r"[0-9a-f]{20}", ident) for ident in published)
    assert published == sorted(published)  # the lines follow the new ids, not the release's order
    new = mapping(db)
    assert sorted(published) == sorted(new.values())
    back = {opaque: real for real, opaque in new.items()}
    labels_in_order = [LABELS[back[ident]] for ident in published]
    assert labels_in_order != sorted(labels_in_order)  # the release's order (all invalid first) is gone
    # The test phase publishes other ids for the same gold: ids cannot be linked across phases.
    assert not set(ids_of(inputs(app_client, "test"))) & set(published)
    phase = app_client.get(PHASE).json()
    assert phase["opaque_ids"] is True


def test_refusals_and_scores_name_only_the_opaque_ids(db: Database, app_client: TestClient, tmp_path: Path) -> None:
    ada = created(db, app_client)
    new = mapping(db)

    def send(run: dict[str, Any]) -> Any:
        return app_client.post(f"{PHASE}/submissions", headers=ada, files={"file": ("run.json", json.dumps(run))})

    empty = send({})
    assert empty.status_code == 422
    assert not RELEASE_PATTERN.search(empty.text)
    assert {p["where"] for p in empty.json()["problems"]} <= {f"key {json.dumps(i)}" for i in new.values()}
    # The release's ids are unknown here: the phase has ids of its own.
    release = send(LABELS)
    assert release.status_code == 422
    assert all(p["message"] == "is not an instance_id of the gold" for p in release.json()["problems"][:PAIRS])

    # Half right: every odd pair predicted wrong. Scored under the opaque ids, it must score what the same
    # predictions score under the release ids, offline, on the release file.
    predicted = {real: label if n % 2 == 0 else 1 - label for n, (real, label) in enumerate(LABELS.items())}
    accepted = send({new[real]: label for real, label in predicted.items()})
    assert accepted.status_code == 202, accepted.text
    wait(app_client)
    scored = app_client.get(f"/api/v1/submissions/{accepted.json()['id']}", headers=ada).json()
    assert scored["status"] == "scored"
    assert not RELEASE_PATTERN.search(json.dumps(scored))
    offline = get_scorer("famus-sv").score(as_jsonl(LINES), json.dumps(predicted).encode())
    assert scored["metrics"] == pytest.approx(offline.metrics)
    assert 0 < scored["metrics"]["f1"] < 1


def test_the_ids_are_the_same_in_another_process_and_when_loaded_anew(
    db: Database, app_client: TestClient, tmp_path: Path
) -> None:
    created(db, app_client)
    first = inputs(app_client)
    with db.session() as session:
        session.execute(delete(Competition).where(Competition.slug == "fam"))
        session.commit()
    # ``podium competition create`` in a process of its own loads the same bundle from disk.
    env = {"PODIUM_DATABASE_URL": db.url, "PATH": "/usr/bin:/bin"}
    (tmp_path / "bundle").mkdir()
    folder = write_bundle(tmp_path / "bundle")
    made = subprocess.run(
        [sys.executable, "-m", "app.cli", "competition", "create", str(folder)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert made.returncode == 0, made.stderr
    assert inputs(app_client) == first
    # A fresh app (empty caches) on the same database accepts a file built from the downloaded inputs.
    with TestClient(create_app(app_client.app.state.podium.settings)) as fresh:  # type: ignore[attr-defined]
        run = {ident: 1 for ident in ids_of(inputs(fresh))}
        answer = fresh.post(
            f"{PHASE}/submissions", headers=token(db, "ada"), files={"file": ("run.json", json.dumps(run))}
        )
        assert answer.status_code == 202, answer.text
        wait(fresh)


# -- the FAMuS release bundle -------------------------------------------------------------------------------


@pytest.mark.parametrize("phase", ["dev", "test"])
def test_the_famus_release_bundle_publishes_source_validation_without_the_answers(db: Database, phase: str) -> None:
    data = require_shared("data")
    spec = load_bundle(ROOT / "examples" / "famus" / "release.yaml", data_dir=data)
    release = data / "famus" / "FACTSlab_FAMuS" / "data" / "source_validation" / f"{phase}.jsonl"
    labels = {
        line["instance_id"]: bool(line["valid_source"]) for line in map(json.loads, release.read_text().splitlines())
    }
    with db.session() as session:
        catalog.create_competition(session, spec)
        session.commit()
        stored = catalog.get_phase(session, "famus", "sv", phase)
        key = server_key(session)
        assert stored.opaque_ids
        (inputs_file,) = stored.files
        published = read_blob(session, inputs_file.blob_id)
    text = published.decode()
    assert not [real for real in labels if real in text]  # no release id appears anywhere in the file
    assert all(re.fullmatch(r"[0-9a-f]{20}", ident) for ident in ids_of(published))
    back = {opaque_id(key, ("famus", "sv", phase), real): real for real in labels}
    order = [labels[back[ident]] for ident in ids_of(published)]
    assert len(order) == len(labels) == 506
    # The release lists every invalid pair first (one change of label along the file); in the published order
    # the labels change about as often as in a shuffle (about 250 times for 253 of each).
    changes = sum(a != b for a, b in itertools.pairwise(order))
    assert changes > 150


def test_podium_score_still_scores_the_release_ids_offline(tmp_path: Path) -> None:
    release = require_shared("data", "famus", "FACTSlab_FAMuS", "data", "source_validation", "dev.jsonl")
    lines = [json.loads(line) for line in release.read_text().splitlines()]
    run = tmp_path / "run.json"
    run.write_text(json.dumps({line["instance_id"]: int(line["valid_source"]) for line in lines}))
    scored = subprocess.run(
        [
            sys.executable,
            "-m",
            "app.cli",
            "score",
            "--scorer",
            "famus-sv",
            "--gold",
            str(release),
            "--submission",
            str(run),
            "--json",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert scored.returncode == 0, scored.stderr
    assert json.loads(scored.stdout)["metrics"]["f1"] == 1.0
