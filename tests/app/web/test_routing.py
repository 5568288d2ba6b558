"""Apps of one process share their prepared routes (``app.web.routing``) and compiled templates, and still answer
from their own state."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from app.config import Settings
from app.main import create_app
from app.storage.db import Database
from app.storage.migrate import upgrade
from tests.app.builders import make_competition, make_user
from tests.app.labels_scorer import LabelScorer


def _database(folder: Path, slug: str | None) -> str:
    url = f"sqlite:///{folder / 'podium.sqlite3'}"
    database = Database(url)
    upgrade(database.engine)
    if slug is not None:
        with database.session() as session:
            make_user(session, "olga", organizer=True)
            make_competition(session, slug, organizers=("olga",))
            session.commit()
    database.dispose()
    return url


def test_two_apps_share_prepared_routes_and_each_answers_from_its_own_database(
    tmp_path: Path, labels: type[LabelScorer]
) -> None:
    apps = []
    for name, slug in (("one", "first-comp"), ("two", None)):
        folder = tmp_path / name
        folder.mkdir()
        apps.append(create_app(Settings(database_url=_database(folder, slug), workers=0, data_dir=folder)))
    one, two = apps
    # The same route objects (prepared once), in the same order; the app's own routes (docs, static) are its own.
    included = [route for route in one.routes if type(route).__name__ == "_IncludedRouter"]
    assert len(included) >= 10
    assert all(any(route is other for other in two.routes) for route in included)
    assert [type(route).__name__ for route in one.routes] == [type(route).__name__ for route in two.routes]
    assert one.state.pages.env is two.state.pages.env  # the templates, compiled once
    with TestClient(one) as first, TestClient(two) as second:
        listed = [
            [c["slug"] for c in client.get("/api/v1/competitions").json()["competitions"]] for client in (first, second)
        ]
        assert listed == [["first-comp"], []]
        assert first.get("/c/first-comp").status_code == 200
        assert second.get("/c/first-comp").status_code == 404
        # The routers' own dependencies still run: a NUL in the query is refused input, on pages and in the API.
        for client in (first, second):
            assert client.get("/c/first-comp?sort=%00").status_code == 422
            assert client.get("/api/v1/competitions?x=%00").status_code == 422
        assert first.get("/openapi.json").json() == second.get("/openapi.json").json()


def test_a_router_included_with_other_dependencies_gets_routes_of_its_own() -> None:
    from fastapi import APIRouter, Depends, FastAPI, HTTPException

    from app.web import routing

    router = APIRouter()

    @router.get("/x")
    def x() -> dict[str, bool]:
        return {"ok": True}

    def refuse() -> None:
        raise HTTPException(403)

    plain, guarded, plain_again = FastAPI(), FastAPI(), FastAPI()
    routing.include(plain, router)
    routing.include(guarded, router, dependencies=[Depends(refuse)])
    routing.include(plain_again, router)
    assert [TestClient(app).get("/x").status_code for app in (plain, guarded, plain_again)] == [200, 403, 200]
