"""Putting a competition online from the pages: the bundle uploaded through a form, every problem shown
under its key path beside the form, nothing kept of a refused bundle."""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

import yaml
from fastapi.testclient import TestClient

from app.storage.db import Database
from app.storage.models import Competition
from tests.app.builders import GOLD, as_bytes
from tests.app.web.test_api import auth, bundle_zip, trec_bundle
from tests.app.web.test_pages import login, setup, text, token
from tests.conftest import require_shared


def post_bundle(client: TestClient, name: str, data: bytes, csrf: str) -> object:
    files = {"bundle": (name, data, "application/octet-stream")}
    return client.post("/competitions/new", data={"csrf_token": csrf}, files=files)


def broken_bundle() -> bytes:
    document = {
        "slug": "Broken Slug",
        "title": "Broken",
        "tasks": [
            {
                "slug": "labels",
                "scorrer": "test-labels",
                "phases": [{"slug": "dev", "title": "Dev", "gold": {"path": "gold.json"}, "ends_at": "tomorrow"}],
            }
        ],
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("competition.yaml", yaml.safe_dump(document))
        archive.writestr("gold.json", as_bytes(GOLD))
    return buffer.getvalue()


def test_an_organizer_uploads_a_bundle_and_sees_its_problems_in_place(db: Database, client: TestClient) -> None:
    setup(db, "ada")
    login(client, "olga")
    home = client.get("/")
    assert 'href="/competitions/new"' in home.text
    form = client.get("/competitions/new")
    csrf = token(form)

    refused = post_bundle(client, "bundle.zip", broken_bundle(), csrf)
    assert refused.status_code == 422
    shown = text(refused)
    assert "The bundle was refused: 5 problems." in shown
    for where in ("slug", "tasks[0].scorrer", "tasks[0].scorer", "tasks[0].title", "tasks[0].phases[0].ends_at"):
        assert f"{where} :" in shown, where
    assert "did you mean scorer?" in shown
    assert 'name="bundle"' in refused.text  # the form again, to send the corrected bundle
    with db.session() as session:
        assert session.query(Competition).filter_by(slug="uploaded").count() == 0

    empty = post_bundle(client, "", b"", csrf)
    assert (empty.status_code, "choose a .zip or .yaml file" in text(empty)) == (422, True)

    created = post_bundle(client, "bundle.zip", bundle_zip(), csrf)
    assert str(created.url).endswith("/c/uploaded")
    assert "The competition Uploaded is online" in text(created)
    assert 'href="/c/uploaded/organize"' in created.text  # its creator organizes it

    taken = post_bundle(client, "bundle.zip", bundle_zip(), csrf)
    assert taken.status_code == 409
    assert "a competition with the slug &#39;uploaded&#39; exists already" in taken.text


def test_participants_cannot_create_competitions(db: Database, client: TestClient) -> None:
    setup(db, "ada")
    login(client, "ada")
    assert 'href="/competitions/new"' not in client.get("/").text
    assert client.get("/competitions/new").status_code == 403
    refused = post_bundle(client, "bundle.zip", bundle_zip(), token(client.get("/")))
    assert refused.status_code == 403
    with db.session() as session:
        assert session.query(Competition).filter_by(slug="uploaded").count() == 0
    client.cookies.clear()
    assert client.get("/competitions/new", follow_redirects=False).status_code == 303  # to the login form


def test_a_scorers_warnings_are_shown_after_the_upload(db: Database, client: TestClient) -> None:
    setup(db)
    login(client, "olga")
    created = post_bundle(client, "bundle.zip", trec_bundle({"measures": ["map", "P_10"]}), token(client.get("/")))
    assert created.status_code == 201
    shown = text(created)
    assert "The competition Ranked is online; you are one of its organizers." in shown
    assert "1 warning:" in shown and "tasks[0].scorer_options" in shown
    assert 'href="/c/ranked"' in created.text
    with db.session() as session:
        assert session.query(Competition).filter_by(slug="ranked").count() == 1


def test_a_codalab_bundle_is_imported_from_the_page_with_every_warning(db: Database, client: TestClient) -> None:
    """The reference CodaLab 1.5 bundle: every warning of its import is listed, none cut to fit."""
    setup(db)
    login(client, "olga")
    data = require_shared("reference", "codabench", "competition_15.zip").read_bytes()
    api = client.post(
        "/api/v1/competitions",
        headers=auth(db, "olga"),
        files={"bundle": ("competition_15.zip", data, "application/zip")},
    )
    assert api.status_code == 201, api.text
    expected = api.json()["warnings"]
    assert len(expected) > 3  # more than the session's messages could carry
    with db.session() as session:  # the same bundle again, from the page
        session.query(Competition).filter_by(slug=api.json()["slug"]).delete()
        session.commit()
    created = post_bundle(client, "competition_15.zip", data, token(client.get("/")))
    assert created.status_code == 201, text(created)[:2000]
    assert "(imported from a CodaLab 1.5 bundle)" in text(created)
    items = re.findall(r"<li>(.*?)</li>", created.text.split('class="problems"')[1], re.S)
    assert len(items) == len(expected)
    assert f"{len(expected)} warnings:" in text(created)


def code_bundle(memory_mb: int) -> bytes:
    """The native code example (``examples/svident-code``) zipped as an organizer uploads it."""
    folder = Path(__file__).resolve().parents[3] / "examples" / "svident-code"
    document = yaml.safe_load((folder / "competition.yaml").read_text(encoding="utf-8"))
    document["tasks"][0]["phases"][0]["code"]["memory_mb"] = memory_mb
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("competition.yaml", yaml.safe_dump(document))
        for path in sorted(folder.rglob("*")):
            if path.is_file() and path.name != "competition.yaml":
                archive.write(path, path.relative_to(folder).as_posix())
    return buffer.getvalue()


def test_a_code_phases_bundle_is_put_online_from_the_page_and_one_asking_too_much_is_refused_in_place(
    db: Database, client: TestClient
) -> None:
    setup(db)
    login(client, "olga")
    refused = post_bundle(client, "code.zip", code_bundle(10**6), token(client.get("/")))
    assert refused.status_code == 422
    assert "tasks[0].phases[0].code.memory_mb" in text(refused)
    assert "1000000 MB is more than this server allows (16384 MB)" in text(refused)
    created = post_bundle(client, "code.zip", code_bundle(1024), token(client.get("/")))
    assert created.status_code == 200  # no warnings: to the competition's page, which says it is online
    assert "is online; you are one of its organizers" in text(created)
    phase = text(client.get("/c/svident-code/detection/test"))
    assert "This phase takes programs" in phase and "Sample submission" in phase
    with db.session() as session:
        competition = session.query(Competition).filter_by(slug="svident-code").one()
        assert [p.code is not None for p in competition.tasks[0].phases] == [True]
