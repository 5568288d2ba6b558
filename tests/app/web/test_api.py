"""The JSON API in one process: accounts, competitions, submitting, scoring, leaderboards, organizers."""

from __future__ import annotations

import io
import zipfile
from typing import Any

import yaml
from fastapi.testclient import TestClient

from app.config import Settings
from app.services.accounts import users
from app.services.bundles.uploads import DATA_REFUSED
from app.storage.db import Database
from tests.app.builders import GOLD, HALF, PASSWORD, PERFECT, as_bytes, make_competition, make_user, phase_spec, utc

PHASE = "/api/v1/competitions/comp/tasks/labels/phases/dev"


def setup(db: Database, *phase_specs: Any, **kwargs: Any) -> None:
    """Users ``olga`` (organizer of ``comp``), ``ada`` and ``bob``, and the competition ``comp``."""
    with db.session() as session:
        make_user(session, "olga", organizer=True)
        make_user(session, "ada")
        make_user(session, "bob")
        make_competition(session, organizers=("olga",), phases=phase_specs or None, **kwargs)
        session.commit()


def auth(db: Database, name: str) -> dict[str, str]:
    with db.session() as session:
        user = users.find_user(session, name)
        assert user is not None
        token = users.issue_token(session, user)
        session.commit()
    return {"Authorization": f"Bearer {token}"}


def upload(client: TestClient, headers: dict[str, str], run: Any, *, method: str = "", phase: str = PHASE) -> Any:
    data = run if isinstance(run, bytes) else as_bytes(run)
    files = {"file": ("run.json", data, "application/json")}
    return client.post(f"{phase}/submissions", headers=headers, files=files, data={"method_name": method})


def wait(client: TestClient) -> None:
    assert client.app.state.podium.queue.wait_idle(30)  # type: ignore[attr-defined]


def entries(client: TestClient, headers: dict[str, str] | None = None) -> list[tuple[int, str, float]]:
    board = client.get(f"{PHASE}/leaderboard", headers=headers or {}).json()
    return [(e["rank"], e["team"], e["metrics"]["accuracy"]) for e in board["entries"]]


# -- accounts -----------------------------------------------------------------------------------


def test_register_get_a_token_and_use_it(client: TestClient) -> None:
    assert client.post("/api/v1/users", json={"name": "ada", "password": PASSWORD}).status_code == 201
    taken = client.post("/api/v1/users", json={"name": "ADA", "password": PASSWORD})
    assert (taken.status_code, taken.json()["error"]) == (409, "name_taken")
    wrong = client.post("/api/v1/tokens", json={"name": "ada", "password": "wrong password"})
    assert (wrong.status_code, wrong.json()["error"]) == (401, "not_authenticated")
    token = client.post("/api/v1/tokens", json={"name": "ada", "password": PASSWORD}).json()["token"]
    me = client.get("/api/v1/me", headers={"Authorization": f"Bearer {token}"})
    assert me.json() == {"id": me.json()["id"], "name": "ada", "is_organizer": False, "is_admin": False}


def test_guessing_passwords_for_tokens_is_throttled_like_the_login_page(client: TestClient) -> None:
    assert client.post("/api/v1/users", json={"name": "ada", "password": PASSWORD}).status_code == 201
    statuses = [
        client.post("/api/v1/tokens", json={"name": "ada", "password": f"guess {i}"}).status_code for i in range(6)
    ]
    assert statuses == [401] * 5 + [429]
    locked = client.post("/api/v1/tokens", json={"name": "ada", "password": PASSWORD})
    assert (locked.status_code, locked.json()["error"]) == (429, "login_throttled")
    assert locked.json()["retry_after"] > 0


def test_a_missing_or_wrong_token_is_refused(client: TestClient) -> None:
    missing = client.get("/api/v1/me")
    assert (missing.status_code, missing.headers["www-authenticate"]) == (401, "Bearer")
    wrong = client.get("/api/v1/me", headers={"Authorization": "Bearer nope"})
    assert wrong.json() == {"error": "not_authenticated", "detail": "the API token is not valid"}


def test_a_malformed_request_lists_its_problems(client: TestClient) -> None:
    answer = client.post("/api/v1/users", json={"name": "ada"})
    assert answer.status_code == 422
    assert answer.json()["error"] == "invalid_request"
    assert [p["where"] for p in answer.json()["problems"]] == ["body.password"]


# -- competitions and files ---------------------------------------------------------------------


def test_competitions_tasks_and_phases_are_described(db: Database, client: TestClient) -> None:
    setup(db, phase_spec("dev", daily_limit=3), description="**Hello** <script>x</script>")
    listed = client.get("/api/v1/competitions").json()["competitions"]
    assert [(c["slug"], c["tasks"]) for c in listed] == [("comp", ["labels"])]
    competition = client.get("/api/v1/competitions/comp").json()
    assert competition["organizers"] == ["olga"]
    assert "<strong>Hello</strong>" in competition["description_html"]
    assert "<script>" not in competition["description_html"]
    (task,) = competition["tasks"]
    assert task["scorer"]["primary_metric"] == "accuracy"
    assert [f["name"] for f in task["training_files"]] == ["train.json"]
    phase = client.get(PHASE).json()
    assert (phase["state"], phase["daily_limit"], phase["max_upload_bytes"]) == ("open", 3, 50 * 1024 * 1024)
    assert [f["name"] for f in phase["files"]] == ["inputs.txt"]


def test_public_files_download_and_gold_and_resources_never_do(db: Database, client: TestClient) -> None:
    setup(db)
    inputs = client.get(f"{PHASE}/files/inputs.txt")
    assert (inputs.status_code, inputs.content) == (200, b"a\nb\nc\nd\n")
    assert 'filename="inputs.txt"' in inputs.headers["content-disposition"]
    training = client.get("/api/v1/competitions/comp/tasks/labels/files/train.json")
    assert training.content == as_bytes(GOLD)
    assert client.get(f"{PHASE}/files/gold.json").status_code == 404
    assert client.get("/api/v1/competitions/comp/tasks/labels/files/secret-resource.bin").status_code == 404
    assert client.get("/api/v1/competitions/nope").json()["error"] == "not_found"


def bundle_zip(gold: Any = GOLD) -> bytes:
    document = {
        "slug": "uploaded",
        "title": "Uploaded",
        "tasks": [
            {
                "slug": "labels",
                "title": "Labels",
                "scorer": "test-labels",
                "phases": [{"slug": "dev", "title": "Dev", "gold": {"path": "data/gold.json"}, "daily_limit": 2}],
            }
        ],
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("uploaded/competition.yaml", yaml.safe_dump(document))
        archive.writestr("uploaded/data/gold.json", gold if isinstance(gold, bytes) else as_bytes(gold))
    return buffer.getvalue()


def test_an_organizer_creates_a_competition_from_a_bundle(db: Database, client: TestClient) -> None:
    setup(db)
    files = {"bundle": ("bundle.zip", bundle_zip(), "application/zip")}
    refused = client.post("/api/v1/competitions", headers=auth(db, "ada"), files=files)
    assert (refused.status_code, refused.json()["error"]) == (403, "forbidden")
    created = client.post("/api/v1/competitions", headers=auth(db, "olga"), files=files)
    assert created.status_code == 201, created.text
    assert created.json() == {
        "slug": "uploaded",
        "created": True,
        "url": "/api/v1/competitions/uploaded",
        "format": "podium",
        "warnings": [],
    }
    phase = client.get("/api/v1/competitions/uploaded/tasks/labels/phases/dev").json()
    assert phase["daily_limit"] == 2
    assert client.get("/api/v1/competitions/uploaded").json()["organizers"] == ["olga"]
    again = client.post("/api/v1/competitions", headers=auth(db, "olga"), files=files)
    assert (again.status_code, again.json()["error"]) == (409, "slug_taken")


def test_a_yaml_bundle_alone_names_files_in_the_data_folder_when_a_site_admin_sends_it(
    db: Database, client: TestClient, settings: Settings
) -> None:
    """Only site admins may name the server's files; an organizer is refused without a look at the path."""
    setup(db)
    with db.session() as session:
        make_user(session, "root", admin=True)
        session.commit()
    assert settings.data_dir is not None
    (settings.data_dir / "gold.json").write_bytes(as_bytes(GOLD))
    document = {
        "slug": "yaml-only",
        "title": "YAML only",
        "tasks": [
            {
                "slug": "labels",
                "title": "Labels",
                "scorer": "test-labels",
                "phases": [{"slug": "dev", "title": "Dev", "gold": {"data": "gold.json"}}],
            }
        ],
    }
    files = {"bundle": ("competition.yaml", yaml.safe_dump(document).encode(), "application/yaml")}
    refused = client.post("/api/v1/competitions", headers=auth(db, "olga"), files=files)
    assert refused.status_code == 422, refused.text
    assert refused.json()["problems"] == [{"key": "tasks[0].phases[0].gold", "message": DATA_REFUSED}]
    created = client.post("/api/v1/competitions", headers=auth(db, "root"), files=files)
    assert created.status_code == 201, created.text
    assert created.json()["slug"] == "yaml-only"


def test_a_bad_bundle_is_refused_with_key_paths(db: Database, client: TestClient) -> None:
    setup(db)
    files = {"bundle": ("bundle.zip", bundle_zip(b"not json"), "application/zip")}
    answer = client.post("/api/v1/competitions", headers=auth(db, "olga"), files=files)
    assert answer.status_code == 422
    body = answer.json()
    assert body["error"] == "invalid_bundle"
    assert [p["key"] for p in body["problems"]] == ["tasks[0].phases[0].gold"]


def trec_bundle(options: dict[str, Any]) -> bytes:
    document = {
        "slug": "ranked",
        "title": "Ranked",
        "tasks": [
            {
                "slug": "ranking",
                "title": "Ranking",
                "scorer": "trec",
                "scorer_options": options,
                "phases": [{"slug": "test", "title": "Test", "gold": {"path": "data/qrels.txt"}}],
            }
        ],
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("ranked/competition.yaml", yaml.safe_dump(document))
        archive.writestr("ranked/data/qrels.txt", "q1 0 d1 1\nq2 0 d2 1\n")
    return buffer.getvalue()


def test_a_bad_scorer_option_is_refused_by_key_path_and_a_risky_one_answered_with_a_warning(
    db: Database, client: TestClient
) -> None:
    setup(db)
    bad = {"bundle": ("bundle.zip", trec_bundle({"measures": ["map", "P_10", "mapp"]}), "application/zip")}
    refused = client.post("/api/v1/competitions", headers=auth(db, "olga"), files=bad)
    assert refused.status_code == 422, refused.text
    [problem] = refused.json()["problems"]
    assert problem["key"] == "tasks[0].scorer_options.measures[2]"
    assert problem["message"].startswith("unknown trec_eval measure 'mapp'")
    risky = {"bundle": ("bundle.zip", trec_bundle({"measures": ["map", "P_10"]}), "application/zip")}
    created = client.post("/api/v1/competitions", headers=auth(db, "olga"), files=risky)
    assert created.status_code == 201, created.text
    [warning] = created.json()["warnings"]
    assert warning["key"] == "tasks[0].scorer_options.complete_queries"
    assert "leave out its hardest queries" in warning["message"]


# -- submitting -----------------------------------------------------------------------------------


def test_a_participant_submits_and_finds_the_score_on_the_leaderboard(db: Database, client: TestClient) -> None:
    setup(db)
    ada = auth(db, "ada")
    answer = upload(client, ada, HALF, method="coin flip")
    assert answer.status_code == 202, answer.text
    body = answer.json()
    assert (body["status"], body["team"], body["method_name"]) == ("queued", "ada", "coin flip")
    assert body["quota"]["total_used"] == 1
    wait(client)
    detail = client.get(f"/api/v1/submissions/{body['id']}", headers=ada).json()
    assert (detail["status"], detail["metrics"]) == ("scored", {"accuracy": 0.5})  # 2 of 4 right
    assert detail["breakdown"]["document"]["a"] == {"accuracy": 1.0}
    assert "organizer" not in detail or detail["organizer"] is None
    board = client.get(f"{PHASE}/leaderboard").json()
    assert board["primary_metric"] == "accuracy"
    (entry,) = board["entries"]
    assert (entry["rank"], entry["team"], entry["system"], entry["baseline"]) == (1, "ada", "coin flip", False)
    assert entry["metrics"] == {"accuracy": 0.5}


def test_uploads_scored_in_the_same_process_leave_no_parse_behind(db: Database, client: TestClient) -> None:
    setup(db)
    ada = auth(db, "ada")
    handoff = client.app.state.podium.handoff  # type: ignore[attr-defined]
    assert handoff is not None  # the embedded mode: this process scores what it accepts
    answers = [upload(client, ada, run) for run in (HALF, PERFECT)]
    assert [a.status_code for a in answers] == [202, 202]
    wait(client)
    assert len(handoff) == 0  # nothing left waiting once every job ran
    scored = [client.get(f"/api/v1/submissions/{a.json()['id']}", headers=ada).json() for a in answers]
    assert [(s["status"], s["metrics"]) for s in scored] == [
        ("scored", {"accuracy": 0.5}),
        ("scored", {"accuracy": 1.0}),
    ]


def test_a_bad_file_is_refused_with_its_problems_and_costs_nothing(db: Database, client: TestClient) -> None:
    setup(db, phase_spec(total_limit=1))
    ada = auth(db, "ada")
    answer = upload(client, ada, {"a": "x", "zzz": "y"})
    assert answer.status_code == 422
    body = answer.json()
    assert body["error"] == "invalid_submission"
    assert {"where": "key 'zzz'", "message": "is not in the gold"} in body["problems"]
    assert body["total"] == 4  # zzz unknown; b, c, d missing
    assert client.get(f"{PHASE}/submissions", headers=ada).json() == {"submissions": []}
    assert upload(client, ada, PERFECT).status_code == 202  # the one allowed submission is still there


def test_uploading_needs_a_token_and_a_file(db: Database, client: TestClient) -> None:
    setup(db)
    assert upload(client, {}, PERFECT).status_code == 401
    no_file = client.post(f"{PHASE}/submissions", headers=auth(db, "ada"), files={"other": ("x", b"1")})
    assert (no_file.status_code, no_file.json()["problems"][0]["where"]) == (422, "file")
    not_a_form = client.post(f"{PHASE}/submissions", headers=auth(db, "ada"), content=b"{}")
    assert not_a_form.status_code == 422


def test_an_oversize_upload_is_refused_with_413(db: Database, client: TestClient) -> None:
    setup(db, phase_spec(max_upload_bytes=100))
    answer = upload(client, auth(db, "ada"), b" " * 101)
    assert answer.status_code == 413
    assert answer.json() == {
        "error": "upload_too_large",
        "detail": "The file is 101 bytes; this phase accepts files of at most 100 bytes.",
        "limit_bytes": 100,
    }
    huge = upload(client, auth(db, "ada"), b" " * 400_000)  # past the form allowance: refused while reading
    assert (huge.status_code, huge.json()["limit_bytes"]) == (413, 100)


def test_a_closed_phase_says_when_it_opens(db: Database, client: TestClient) -> None:
    setup(db, phase_spec(starts_at=utc("2099-01-01T00:00Z")))
    answer = upload(client, auth(db, "ada"), PERFECT)
    assert answer.status_code == 409
    assert answer.json()["error"] == "phase_closed"
    assert answer.json()["opens_at"] == "2099-01-01T00:00:00+00:00"
    assert "opens at 2099-01-01 00:00 UTC" in answer.json()["detail"]


def test_an_exhausted_daily_limit_says_when_it_resets(db: Database, client: TestClient) -> None:
    setup(db, phase_spec(daily_limit=1))
    ada = auth(db, "ada")
    assert upload(client, ada, PERFECT).status_code == 202
    answer = upload(client, ada, PERFECT)
    assert answer.status_code == 429
    body = answer.json()
    assert body["error"] == "quota_exhausted"
    assert body["resets_at"].endswith("T00:00:00+00:00")
    assert 1 <= int(answer.headers["retry-after"]) <= 86_400
    assert upload(client, auth(db, "bob"), PERFECT).status_code == 202  # bob is another team


def test_a_platform_failure_is_explained_and_refunded(db: Database, client: TestClient) -> None:
    setup(db, phase_spec(total_limit=1), scorer_options={"crash": True})
    ada = auth(db, "ada")
    first = upload(client, ada, PERFECT).json()
    wait(client)
    mine = client.get(f"/api/v1/submissions/{first['id']}", headers=ada).json()
    assert mine["status"] == "failed"
    assert "problem on our side" in mine["message"]
    assert mine["organizer"] is None
    theirs = client.get(f"/api/v1/submissions/{first['id']}", headers=auth(db, "olga")).json()
    assert theirs["organizer"]["message"].startswith("RuntimeError: the scorer exploded")
    assert theirs["organizer"]["quota_refunded"] is True
    assert upload(client, ada, PERFECT).status_code == 202  # the slot came back


# -- who sees what ----------------------------------------------------------------------------------


def test_a_hidden_phase_keeps_numbers_for_organizers_until_revealed(db: Database, client: TestClient) -> None:
    setup(db, phase_spec(visibility="hidden"))
    ada, olga = auth(db, "ada"), auth(db, "olga")
    submission_id = upload(client, ada, HALF).json()["id"]
    wait(client)
    mine = client.get(f"/api/v1/submissions/{submission_id}", headers=ada).json()
    assert (mine["status"], mine["metrics"], mine["metrics_hidden"]) == ("scored", None, True)
    listed = client.get(f"{PHASE}/submissions", headers=ada).json()["submissions"]
    assert [(s["status"], s["metrics"]) for s in listed] == [("scored", None)]
    board = client.get(f"{PHASE}/leaderboard").json()
    assert (board["hidden"], board["entries"]) == (True, [])
    assert entries(client, olga) == [(1, "ada", 0.5)]
    assert client.post(f"{PHASE}/reveal", headers=ada).status_code == 403
    revealed = client.post(f"{PHASE}/reveal", headers=olga)
    assert revealed.status_code == 200
    assert entries(client) == [(1, "ada", 0.5)]
    assert client.get(f"/api/v1/submissions/{submission_id}", headers=ada).json()["metrics"] == {"accuracy": 0.5}


def test_teams_see_only_their_own_submissions(db: Database, client: TestClient) -> None:
    setup(db)
    ada, bob, olga = auth(db, "ada"), auth(db, "bob"), auth(db, "olga")
    submission_id = upload(client, ada, HALF).json()["id"]
    assert client.get(f"/api/v1/submissions/{submission_id}", headers=bob).status_code == 404
    assert client.get(f"{PHASE}/submissions", headers=bob).json() == {"submissions": []}
    assert client.get(f"{PHASE}/submissions?all=true", headers=bob).status_code == 403
    everyone = client.get(f"{PHASE}/submissions?all=true", headers=olga).json()["submissions"]
    assert [(s["id"], s["team"]) for s in everyone] == [(submission_id, "ada")]
    wait(client)


def test_an_organizer_rescores_and_the_old_score_stays(db: Database, client: TestClient) -> None:
    setup(db)
    ada, olga = auth(db, "ada"), auth(db, "olga")
    submission_id = upload(client, ada, HALF).json()["id"]
    wait(client)
    assert client.post(f"/api/v1/submissions/{submission_id}/rescore", headers=ada).status_code == 403
    again = client.post(f"/api/v1/submissions/{submission_id}/rescore", headers=olga)
    assert again.status_code == 202
    assert again.json()["organizer"]["scoring_round"] == 2
    wait(client)
    detail = client.get(f"/api/v1/submissions/{submission_id}", headers=olga).json()
    assert (detail["status"], detail["organizer"]["score_round"], detail["metrics"]) == (
        "scored",
        2,
        {"accuracy": 0.5},
    )
    phase_wide = client.post(f"{PHASE}/rescore", headers=olga)
    assert phase_wide.json() == {"queued": 1}
    wait(client)


def test_rescoring_what_one_may_not_see_is_the_not_found_of_a_missing_submission(
    db: Database, client: TestClient
) -> None:
    """Another team's submission and a missing one get the same 404, word for word, as GET and choose do:
    the answer must not tell which ids exist."""
    setup(db)
    ada, bob = auth(db, "ada"), auth(db, "bob")
    submission_id = upload(client, ada, HALF).json()["id"]
    wait(client)
    missing = submission_id + 1000
    theirs = client.post(f"/api/v1/submissions/{submission_id}/rescore", headers=bob)
    absent = client.post(f"/api/v1/submissions/{missing}/rescore", headers=bob)
    assert (theirs.status_code, absent.status_code) == (404, 404)
    assert theirs.json()["detail"].replace(str(submission_id), "N") == absent.json()["detail"].replace(
        str(missing), "N"
    )
    assert client.get(f"/api/v1/submissions/{submission_id}", headers=bob).json() == theirs.json()


def test_teams_are_founded_and_joined_with_an_invite_code(db: Database, client: TestClient) -> None:
    setup(db, phase_spec(total_limit=1))
    ada, bob = auth(db, "ada"), auth(db, "bob")
    founded = client.post("/api/v1/competitions/comp/teams", headers=ada, json={"name": "Owls"})
    assert founded.status_code == 201
    code = founded.json()["invite_code"]
    joined = client.post("/api/v1/competitions/comp/teams/join", headers=bob, json={"invite_code": code})
    assert joined.json()["members"] == ["ada", "bob"]
    assert upload(client, ada, HALF).json()["team"] == "Owls"
    assert upload(client, bob, HALF).status_code == 429  # the team's one submission is used
    wait(client)
    assert entries(client) == [(1, "Owls", 0.5)]


def test_an_approval_competition_needs_an_organizers_yes(db: Database, client: TestClient) -> None:
    setup(db, participation="approval")
    ada, olga = auth(db, "ada"), auth(db, "olga")
    assert upload(client, ada, HALF).status_code == 403
    assert client.post("/api/v1/competitions/comp/participation", headers=ada).json()["approved"] is False
    assert client.post("/api/v1/competitions/comp/participants/ada/approve", headers=ada).status_code == 403
    approved = client.post("/api/v1/competitions/comp/participants/ada/approve", headers=olga)
    assert approved.json()["approved"] is True
    assert upload(client, ada, HALF).status_code == 202
    wait(client)


def test_a_team_chooses_the_submission_that_counts(db: Database, client: TestClient) -> None:
    setup(db, phase_spec(selection="chosen"))
    ada = auth(db, "ada")
    best = upload(client, ada, PERFECT).json()["id"]
    worse = upload(client, ada, HALF).json()["id"]
    wait(client)
    assert entries(client) == [(1, "ada", 0.5)]  # no choice: the latest counts
    assert client.post(f"/api/v1/submissions/{best}/choose", headers=ada).json()["chosen"] is True
    assert entries(client) == [(1, "ada", 1.0)]
    assert client.get(f"/api/v1/submissions/{worse}", headers=ada).json()["chosen"] is False


def test_the_openapi_document_describes_the_api(client: TestClient) -> None:
    document = client.get("/openapi.json").json()
    paths = document["paths"]
    assert "/api/v1/competitions/{competition}/tasks/{task}/phases/{phase}/submissions" in paths
    submit = paths["/api/v1/competitions/{competition}/tasks/{task}/phases/{phase}/submissions"]["post"]
    assert "multipart/form-data" in submit["requestBody"]["content"]
    assert {"202", "401", "409", "413", "422", "429"} <= set(submit["responses"])
    assert "/api/v1/competitions/{competition}/tasks/{task}/phases/{phase}/leaderboard" in paths
    assert "HTTPBearer" in document["components"]["securitySchemes"]
