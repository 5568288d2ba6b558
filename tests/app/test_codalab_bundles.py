"""CodaLab v1.5 and Codabench v2 bundles end to end, in one process: imported through the command and the API,
their sample result submissions scored by their own programs with the numbers those print when run by hand."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from app.cli import app as cli
from app.config import Settings
from app.main import create_app
from app.services.accounts import users
from app.storage.db import Database
from codalab.program import TEAM_FAILURE
from tests.app.builders import make_user
from tests.app.web.browser import serving
from tests.app.web.test_pages import login
from tests.codalab.reference import (
    bundle,
    by_hand,
    legacy_runtime,
    runtimes_table,
    v2_result,
    v15_result,
    zip_files,
)
from tests.conftest import require_shared

pytestmark = pytest.mark.slow

V2 = "classify-wheat-seeds-single-phase-with-multiple-task"
V2_PHASE = "single-phase-with-multiple-task"
V15 = "sample-time-series-competition"


def reference_zip(name: str) -> bytes:
    return require_shared("reference", "codabench", name).read_bytes()


@pytest.fixture
def codalab_settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"program_runtimes": runtimes_table()})


@pytest.fixture
def server(codalab_settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(codalab_settings)) as client:
        yield client


def tokens(db: Database) -> dict[str, dict[str, str]]:
    out = {}
    with db.session() as session:
        # olga runs the server too: she runs the competitions the command puts online.
        for name, organizer in (("olga", True), ("ada", False)):
            user = make_user(session, name, organizer=organizer, admin=organizer)
            out[name] = {"Authorization": f"Bearer {users.issue_token(session, user)}"}
        session.commit()
    return out


def create(client: TestClient, headers: dict[str, str], data: bytes) -> Any:
    answer = client.post("/api/v1/competitions", headers=headers, files={"bundle": ("bundle.zip", data)})
    assert answer.status_code == 201, answer.text
    return answer.json()


def submit(client: TestClient, headers: dict[str, str], phase: str, data: bytes) -> Any:
    answer = client.post(f"{phase}/submissions", headers=headers, files={"file": ("results.zip", data)})
    assert answer.status_code == 202, answer.text
    assert client.app.state.podium.queue.wait_idle(300)  # type: ignore[attr-defined]
    return client.get(f"/api/v1/submissions/{answer.json()['id']}", headers=headers).json()


def test_the_codabench_bundle_imports_through_the_api_and_scores_as_its_program_does_by_hand(
    db: Database, server: TestClient, tmp_path: Path
) -> None:
    people = tokens(db)
    created = create(server, people["olga"], reference_zip("competition_v2_multi_task.zip"))
    assert (created["slug"], created["format"]) == (V2, "codabench-2")
    warnings = {(w["key"], w["message"]) for w in created["warnings"]}
    assert ("solutions", "the sample solutions are not imported (submit them to the phases as code)") in warnings
    assert ("", "not imported (Podium has no equivalent): image") in warnings
    # Codabench approves participants by hand unless registration_auto_approve: so does Podium.
    assert server.post(f"/api/v1/competitions/{V2}/participation", headers=people["ada"]).status_code == 200
    approved = server.post(f"/api/v1/competitions/{V2}/participants/ada/approve", headers=people["olga"])
    assert approved.status_code == 200, approved.text

    competition = server.get(f"/api/v1/competitions/{V2}").json()
    assert [t["title"] for t in competition["tasks"]] == [
        f"Wheat Seed {n} Task" for n in ("First", "Second", "Third", "Fourth")
    ]
    task = server.get(f"/api/v1/competitions/{V2}/tasks/wheat-seed-first-task").json()
    assert [(m["name"], m["higher_is_better"]) for m in task["scorer"]["metrics"]] == [
        ("accuracy", True),
        ("duration", True),
    ]
    (phase,) = task["phases"]
    assert (phase["title"], phase["starts_at"][:10], phase["ingestion_program"]) == (
        "Single Phase with Multiple Task",
        "2020-06-15",
        True,
    )
    # The input data is the ingestion program's hidden input, and the reference data the scoring program's.
    assert phase["files"] == []

    folder = bundle("competition_v2_multi_task.zip", tmp_path / "bundle")
    for task_slug, name, duration in (
        ("wheat-seed-first-task", "first", 1.5),
        ("wheat-seed-second-task", "second", 0.5),
    ):
        result = v2_result(folder, name, duration)
        expected = by_hand(folder / "scoring_program", folder / name / "reference_data", result, legacy_runtime())
        url = f"/api/v1/competitions/{V2}/tasks/{task_slug}/phases/{V2_PHASE}"
        scored = submit(server, people["ada"], url, result)
        assert (scored["status"], scored["metrics"]) == ("scored", expected)
        assert expected == {"accuracy": 1.0, "duration": duration}

    page = server.get(f"/c/{V2}/wheat-seed-first-task/{V2_PHASE}").text
    assert "a zip of result files is scored as it is" in page


def test_a_program_phase_writes_a_score_alike_on_the_board_the_organizers_table_and_the_command_line(
    db: Database, server: TestClient, tmp_path: Path
) -> None:
    """One rule per metric: the bundle's column titles, and a program's number never shown as a percentage."""
    people = tokens(db)
    create(server, people["olga"], reference_zip("competition_v2_multi_task.zip"))
    assert server.post(f"/api/v1/competitions/{V2}/participation", headers=people["ada"]).status_code == 200
    assert server.post(f"/api/v1/competitions/{V2}/participants/ada/approve", headers=people["olga"]).status_code == 200
    folder = bundle("competition_v2_multi_task.zip", tmp_path / "bundle")
    labels = (folder / "first" / "reference_data" / "testing_label").read_text().split()
    wrong = ["1" if label == "0" else "0" for label in labels[:7]]  # 33 of 40 right
    result = zip_files(
        {"prediction": "\n".join(wrong + labels[7:]).encode(), "metadata.json": json.dumps({"duration": 2}).encode()}
    )
    ref = f"{V2}/wheat-seed-first-task/{V2_PHASE}"
    scored = submit(
        server, people["ada"], f"/api/v1/competitions/{V2}/tasks/wheat-seed-first-task/phases/{V2_PHASE}", result
    )
    assert scored["metrics"] == {"accuracy": 0.825, "duration": 2.0}

    board = server.get(f"/c/{ref}").text
    assert "Prediction score ↑" in board and "Duration ↑" in board
    assert ">0.825<" in board and "82.50" not in board and "Scores in percent" not in board
    login(server, "olga")
    organize = server.get(f"/c/{ref}/organize").text
    assert ">Prediction score</th>" in organize and ">0.825</td>" in organize
    details = server.get(f"/submissions/{scored['id']}").text
    assert "Prediction score ↑" in details and ">0.825<" in details
    # The exports head the columns alike: the CSV with the titles, the JSON with both keys and titles.
    header = server.get(f"/c/{ref}/leaderboard.csv").text.splitlines()[0].split(",")
    assert header[5:7] == ["Prediction score", "Duration"]
    exported = server.get(f"/c/{ref}/leaderboard.json").json()
    assert exported["column_titles"] == {"accuracy": "Prediction score", "duration": "Duration"}
    assert exported["entries"][0]["metrics"] == {"accuracy": 0.825, "duration": 2.0}
    for paper in ("tex", "md"):
        assert "Prediction score" in server.get(f"/c/{ref}/leaderboard.{paper}").text
    with serving(db.url, tmp_path / "server.log") as url:
        shown = CliRunner().invoke(cli, ["leaderboard", "--server", url, "--task", ref])
    assert shown.exit_code == 0, shown.output
    lines = shown.stdout.splitlines()
    assert lines[0] == f"{ref}: ranked by Prediction score"
    assert lines[1].split()[:3] == ["1", "0.825", "ada"]


def with_average_rank(data: bytes) -> bytes:
    """The Codabench bundle with a third column computed as Codabench's ``avg_rank`` over the other two."""
    source = zipfile.ZipFile(io.BytesIO(data))
    buffer = io.BytesIO()
    column = (
        "      - title: Average rank\n        key: avg_rank\n        index: 2\n        sorting: asc\n"
        "        computation: avg_rank\n        computation_indexes: [0, 1]\n"
    )
    with zipfile.ZipFile(buffer, "w") as out:
        for info in source.infolist():
            content = source.read(info)
            if info.filename.endswith("competition.yaml"):
                content = (content.decode().rstrip("\n") + "\n" + column).encode()
            out.writestr(info, content)
    return buffer.getvalue()


def test_a_codabench_average_rank_column_is_a_board_ranked_by_the_mean_of_fractional_ranks(
    db: Database, server: TestClient, tmp_path: Path
) -> None:
    """Ranked as Codabench ranks it: the mean of each entry's fractional ranks on the columns, by hand."""
    people = tokens(db)
    with db.session() as session:
        people["bob"] = {"Authorization": f"Bearer {users.issue_token(session, make_user(session, 'bob'))}"}
        session.commit()
    create(server, people["olga"], with_average_rank(reference_zip("competition_v2_multi_task.zip")))
    folder = bundle("competition_v2_multi_task.zip", tmp_path / "bundle")
    labels = (folder / "first" / "reference_data" / "testing_label").read_text().split()
    wrong = ["1" if label == "0" else "0" for label in labels[:7]]
    runs = {
        "ada": zip_files({"prediction": "\n".join(wrong + labels[7:]).encode(), "metadata.json": b'{"duration": 2}'}),
        "bob": v2_result(folder, "first", 0.5),
    }
    url = f"/api/v1/competitions/{V2}/tasks/wheat-seed-first-task/phases/{V2_PHASE}"
    for name, run in runs.items():
        assert server.post(f"/api/v1/competitions/{V2}/participation", headers=people[name]).status_code == 200
        approved = server.post(f"/api/v1/competitions/{V2}/participants/{name}/approve", headers=people["olga"])
        assert approved.status_code == 200
        assert submit(server, people[name], url, run)["status"] == "scored"
    ref = f"{V2}/wheat-seed-first-task/{V2_PHASE}"
    assert f'href="/c/{ref}/boards/avg-rank"' in server.get(f"/c/{ref}").text
    board = server.get(f"/c/{ref}/boards/avg-rank.json").json()
    # By hand: accuracy ranks bob 1 (1.0), ada 2 (0.825); duration (higher is better, as the bundle sorts it)
    # ranks ada 1 (2), bob 2 (0.5): each means 1.5, and both share the first place.
    assert board["board"]["ranking"] == "mean_of_ranks" and board["board"]["title"] == "Average rank"
    assert sorted((e["rank"], e["team"], e["score"]) for e in board["entries"]) == [(1, "ada", 1.5), (1, "bob", 1.5)]
    assert board["columns"] == [
        {"key": "accuracy", "title": "Prediction score", "label": "Prediction score ↑"},
        {"key": "duration", "title": "Duration", "label": "Duration ↑"},
    ]
    header = server.get(f"/c/{ref}/boards/avg-rank.csv").text.splitlines()[0]
    assert header.startswith("rank,team,system,submitted_at,baseline,score,Prediction score,Duration")


def renamed_program(data: bytes) -> bytes:
    """The CodaLab bundle with its phases naming scoring_program.zip (the folder they name fails in Python 3)."""
    source = zipfile.ZipFile(io.BytesIO(data))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as out:
        seen = set()
        for info in source.infolist():
            if info.filename in seen:  # the bundle's zip holds a few entries twice
                continue
            seen.add(info.filename)
            content = source.read(info)
            if info.filename == "competition.yaml":
                content = content.replace(
                    b"scoring_program: scoring_program ", b"scoring_program: scoring_program.zip "
                )
                content = content.replace(b"title: Sample time series", b"title: Zipped time series")
            out.writestr(info, content)
    return buffer.getvalue()


def test_the_codalab_bundle_imports_through_the_command_and_its_program_fails_as_it_does_by_hand(
    db: Database, server: TestClient, tmp_path: Path
) -> None:
    people = tokens(db)
    path = tmp_path / "competition_15.zip"
    path.write_bytes(reference_zip("competition_15.zip"))
    made = CliRunner().invoke(cli, ["competition", "create", str(path)], env={"PODIUM_DATABASE_URL": db.url})
    assert made.exit_code == 0, made.stderr
    assert made.stdout.startswith(f"created competition {V15} from a codalab-1.5 bundle: 1 task(s), 2 phase(s)\n")
    assert "warning: phases.1.scoring_program: scoring_program/score.py, line 124: inconsistent use" in made.stderr
    assert "warning: admin_names:" in made.stderr
    assert "Traceback" not in made.stderr

    folder = bundle("competition_15.zip", tmp_path / "bundle")
    result = v15_result(folder)
    phases = server.get(f"/api/v1/competitions/{V15}").json()["tasks"][0]["phases"]
    assert [(p["title"], p["execution_time_limit"], p["daily_limit"]) for p in phases] == [
        ("Development Phase", 500, 5),
        ("Final Phase", 300, 5),
    ]
    assert phases[0]["ends_at"] == phases[1]["starts_at"]  # a v1.5 phase ends where the next one starts
    url = f"/api/v1/competitions/{V15}/tasks/{V15}/phases/final-phase"  # the development phase closed in 2019
    failed = submit(server, people["ada"], url, result)
    assert (failed["status"], failed["message"]) == ("failed", TEAM_FAILURE)
    login(server, "olga")
    page = server.get(f"/submissions/{failed['id']}").text
    assert "TabError" in page and "Scoring program (organizers only)" in page


def test_the_codalab_bundle_with_its_zipped_program_scores_as_by_hand(
    db: Database, server: TestClient, tmp_path: Path
) -> None:
    people = tokens(db)
    created = create(server, people["olga"], renamed_program(reference_zip("competition_15.zip")))
    assert created["format"] == "codalab-1.5"
    slug = created["slug"]
    folder = bundle("competition_15.zip", tmp_path / "bundle")
    result = v15_result(folder)
    expected = by_hand(folder / "scoring_program.zip", folder / "evaluation_data.zip", result, legacy_runtime())
    url = f"/api/v1/competitions/{slug}/tasks/{slug}/phases/final-phase"  # the development phase closed in 2019
    scored = submit(server, people["ada"], url, result)
    assert (scored["status"], scored["metrics"]) == ("scored", expected)
    assert expected["prediction_score"] > 0
    # The columns' titles, and their numeric_format: digits after the point.
    board = server.get(f"/c/{slug}/{slug}/final-phase").text
    assert "Prediction score ↑" in board and f">{expected['prediction_score']:.4f}<" in board


def test_a_codabench_phase_asking_its_programs_for_more_time_than_the_server_allows_is_refused_by_key_path(
    db: Database, server: TestClient
) -> None:
    people = tokens(db)
    source = reference_zip("competition_v2_multi_task.zip")
    asking = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(source)) as original, zipfile.ZipFile(asking, "w") as archive:
        for item in original.infolist():
            data = original.read(item)
            if item.filename == "competition.yaml":
                data = data.replace(
                    b"    start: 6-15-2020\n", b"    start: 6-15-2020\n    execution_time_limit_ms: 2000000000000\n"
                )
                assert b"execution_time_limit_ms" in data
            archive.writestr(item, data)
    refused = server.post(
        "/api/v1/competitions", headers=people["olga"], files={"bundle": ("b.zip", asking.getvalue())}
    )
    assert refused.status_code == 422, refused.text
    # The four tasks' phases each run their scoring program (and their ingestion program's runs) that long.
    assert {(p["key"], p["message"]) for p in refused.json()["problems"]} >= {
        ("tasks[0].phases[0].execution_time_limit", "2000000000 s is more than this server allows (3600 s)"),
        ("tasks[3].phases[0].execution_time_limit", "2000000000 s is more than this server allows (3600 s)"),
    }
    assert server.get(f"/api/v1/competitions/{V2}").status_code == 404
    # A phase scored by a program and running none of the teams' code is held to the same cap.
    example = Path(__file__).resolve().parents[2] / "examples" / "program"
    scored_only = io.BytesIO()
    with zipfile.ZipFile(scored_only, "w") as archive:
        text = (example / "competition.yaml").read_text(encoding="utf-8")
        archive.writestr("competition.yaml", text.replace("execution_time_limit: 60", "execution_time_limit: 86400"))
        archive.write(example / "gold.zip", "gold.zip")
    files = {"bundle": ("b.zip", scored_only.getvalue())}
    refused = server.post("/api/v1/competitions", headers=people["olga"], files=files)
    assert refused.status_code == 422, refused.text
    assert refused.json()["problems"] == [
        {
            "key": "tasks[0].phases[0].execution_time_limit",
            "message": "86400 s is more than this server allows (3600 s)",
        }
    ]
