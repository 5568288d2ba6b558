"""Scoring programs (the ``program`` scorer) through the server in one process: the scoring queue, the
embedded pool, what the team and the organizers see, who pays for a failure, the sandbox setting."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.main import create_app
from app.storage.db import Database
from codalab.program import TEAM_FAILURE
from scorers import OptionsError, get_scorer
from tests.app.builders import bundle_file, phase_spec
from tests.app.web.test_api import auth, setup
from tests.app.web.test_pages import login
from tests.codalab import tiny

PHASE = "/api/v1/competitions/comp/tasks/labels/phases/dev"
TRUTH = ["a", "b", "a", "c"]


def program_phase(**overrides: object) -> object:
    fields: dict[str, object] = {"gold": bundle_file("gold.zip", tiny.gold(TRUTH)), "public_files": ()}
    fields.update(overrides)
    return phase_spec(**fields)


@pytest.fixture
def program_client(settings: Settings, request: pytest.FixtureRequest) -> Iterator[TestClient]:
    overrides = getattr(request, "param", {})
    with TestClient(create_app(settings.model_copy(update=overrides))) as client:
        yield client


def send(client: TestClient, headers: dict[str, str], data: bytes) -> dict[str, object]:
    files = {"file": ("results.zip", data, "application/zip")}
    answer = client.post(f"{PHASE}/submissions", headers=headers, files=files)
    assert answer.status_code == 202, answer.text
    assert client.app.state.podium.queue.wait_idle(60)  # type: ignore[attr-defined]
    shown = client.get(f"/api/v1/submissions/{answer.json()['id']}", headers=headers).json()
    assert isinstance(shown, dict)
    return shown


def test_a_program_scores_on_the_queue_and_its_columns_rank(db: Database, program_client: TestClient) -> None:
    setup(db, program_phase(), scorer="program", scorer_options=tiny.OPTIONS)
    ada = auth(db, "ada")
    half = send(program_client, ada, tiny.result(["a", "b", "c", "a"]))
    assert (half["status"], half["metrics"]) == ("scored", {"accuracy": 0.5, "lines": 4.0})
    bob = auth(db, "bob")
    perfect = send(program_client, bob, tiny.result(TRUTH))
    assert perfect["metrics"] == {"accuracy": 1.0, "lines": 4.0}
    board = program_client.get(f"{PHASE}/leaderboard").json()
    assert board["primary_metric"] == "accuracy"
    assert [(e["team"], e["metrics"]["accuracy"]) for e in board["entries"]] == [("bob", 1.0), ("ada", 0.5)]
    # A program's numbers are shown as it wrote them, not as percentages.
    table = program_client.get("/c/comp/labels/dev").text
    assert ">0.5<" in table and ">4<" in table and "50.00" not in table
    task = program_client.get("/api/v1/competitions/comp/tasks/labels").json()
    assert [m["name"] for m in task["scorer"]["metrics"]] == ["accuracy", "lines"]
    # The detailed results are on the team's page, without the script the program put in them.
    login(program_client, "ada")
    page = program_client.get(f"/submissions/{half['id']}").text
    assert "<h2>Details</h2><p>2 right</p>" in page and "alert(1)" not in page
    assert "Scoring program (organizers only)" not in page


def test_a_result_that_is_not_a_safe_zip_is_refused_at_upload_for_free(
    db: Database, program_client: TestClient
) -> None:
    setup(db, program_phase(total_limit=1), scorer="program", scorer_options=tiny.OPTIONS)
    ada = auth(db, "ada")
    files = {"file": ("results.zip", tiny.zip_of({"../prediction.txt": b"a"}), "application/zip")}
    refused = program_client.post(f"{PHASE}/submissions", headers=ada, files=files)
    assert refused.status_code == 422
    assert "leaves its folder" in refused.text
    assert send(program_client, ada, tiny.result(TRUTH))["status"] == "scored"  # the refusal cost nothing


@pytest.mark.parametrize("show_stderr", [False, True])
def test_a_failing_program_costs_the_team_tells_it_plainly_and_shows_organizers_the_logs(
    db: Database, program_client: TestClient, show_stderr: bool
) -> None:
    setup(
        db, program_phase(total_limit=2, show_program_stderr=show_stderr), scorer="program", scorer_options=tiny.OPTIONS
    )
    ada = auth(db, "ada")
    failed = send(program_client, ada, tiny.zip_of({"other.txt": b"a"}))
    assert failed["status"] == "failed"
    if show_stderr:
        assert (
            failed["message"]
            == f"{TEAM_FAILURE}\n\nThe end of the program's error output:\nno prediction.txt in the submission\n"
        )
    else:
        assert failed["message"] == TEAM_FAILURE
    again = program_client.post(
        f"{PHASE}/submissions", headers=ada, files={"file": ("r.zip", tiny.result(TRUTH), "application/zip")}
    )
    assert again.json()["quota"]["total_used"] == 2  # the failure counted
    login(program_client, "olga")
    page = program_client.get(f"/submissions/{failed['id']}").text
    assert "Scoring program (organizers only)" in page
    assert "no prediction.txt in the submission" in page
    assert re.search(r"it exited with status 3", page)
    organizer = program_client.get(f"/api/v1/submissions/{failed['id']}", headers=auth(db, "olga")).json()
    assert "it exited with status 3" in organizer["organizer"]["message"]
    run = organizer["organizer"]["program_run"]
    assert (run["exit_code"], run["timed_out"], run["stderr"]) == (3, False, "no prediction.txt in the submission\n")
    assert failed["organizer"] is None  # the team sees no logs


@pytest.mark.parametrize("program_client", [{"program_sandbox": "bwrap"}], indirect=True)
def test_where_bubblewrap_cannot_run_the_submission_fails_refunded_with_the_reason(
    db: Database, program_client: TestClient, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from sandbox import runner

    # A worker without bubblewrap: its PATH holds no bwrap.
    monkeypatch.setattr(runner, "BWRAP_ENV", {"PATH": str(tmp_path), "LANG": "C.UTF-8"})
    monkeypatch.setattr(runner, "_probed", set())
    setup(db, program_phase(total_limit=1), scorer="program", scorer_options=tiny.OPTIONS)
    ada = auth(db, "ada")
    failed = send(program_client, ada, tiny.result(TRUTH))
    assert failed["status"] == "failed"
    assert "problem on our side" in failed["message"] and "bubblewrap" not in failed["message"]
    organizer = program_client.get(f"/api/v1/submissions/{failed['id']}", headers=auth(db, "olga")).json()
    assert "bubblewrap (bwrap) is not installed" in organizer["organizer"]["message"]
    assert "PODIUM_PROGRAM_SANDBOX" not in failed["message"]
    # Refunded: the team's one submission is free again.
    again = program_client.post(
        f"{PHASE}/submissions", headers=ada, files={"file": ("r.zip", tiny.result(TRUTH), "application/zip")}
    )
    assert again.status_code == 202 and again.json()["quota"]["total_used"] == 1


@pytest.mark.parametrize("program_client", [{"program_sandbox": "none"}], indirect=True)
def test_an_operator_may_run_programs_without_the_sandbox_deliberately(
    db: Database, program_client: TestClient
) -> None:
    setup(db, program_phase(), scorer="program", scorer_options=tiny.OPTIONS)
    assert send(program_client, auth(db, "ada"), tiny.result(TRUTH))["metrics"] == {"accuracy": 1.0, "lines": 4.0}


def test_the_runtime_table_is_checked_when_the_settings_are_read() -> None:
    with pytest.raises(ValueError, match="PODIUM_PROGRAM_RUNTIMES: the runtime of 'x' must be an absolute folder"):
        Settings(program_runtimes='{"x": "relative/folder"}')
    with pytest.raises(ValueError, match="program_sandbox"):
        Settings(program_sandbox="docker")  # type: ignore[arg-type]


def test_a_column_with_a_number_format_is_shown_with_its_decimals(db: Database, program_client: TestClient) -> None:
    options = {**tiny.OPTIONS, "metrics": [{**tiny.OPTIONS["metrics"][0], "decimals": 3}, tiny.OPTIONS["metrics"][1]]}
    setup(db, program_phase(), scorer="program", scorer_options=options)
    assert send(program_client, auth(db, "ada"), tiny.result(["a", "b", "c", "a"]))["metrics"]["accuracy"] == 0.5
    assert ">0.500<" in program_client.get("/c/comp/labels/dev").text
    task = program_client.get("/api/v1/competitions/comp/tasks/labels").json()
    assert task["scorer"]["metrics"][0]["decimals"] == 3 and "decimals" not in task["scorer"]["metrics"][1]
    with pytest.raises(OptionsError, match="decimals of 'accuracy' must be a whole number 0 to 12"):
        get_scorer("program", {"metrics": [{"key": "accuracy", "decimals": "4"}]})


#: A program whose scores file holds what its submission says, as the reference Codabench program copies
#: ``duration`` from the submitted metadata.json.
ECHO_PY = b"""import os, sys
text = open(os.path.join(sys.argv[1], "res", "prediction.txt")).read()
with open(os.path.join(sys.argv[2], "scores.json"), "w") as out:
    out.write('{"accuracy": %s, "lines": 4}' % text)
"""


@pytest.mark.parametrize(
    ("written", "why"),
    [
        ("1" + "0" * 400, "accuracy (a number too large to store)"),
        ("[" * 50_000 + "]" * 50_000, "scores.json cannot be read (it is nested too deeply)"),
        ('"high"', "accuracy (not a number)"),
    ],
)
def test_scores_podium_cannot_store_are_the_programs_failure_at_the_teams_cost(
    db: Database, program_client: TestClient, written: str, why: str
) -> None:
    setup(
        db,
        program_phase(gold=bundle_file("gold.zip", tiny.gold(TRUTH, ECHO_PY)), total_limit=2),
        scorer="program",
        scorer_options=tiny.OPTIONS,
    )
    ada = auth(db, "ada")
    failed = send(program_client, ada, tiny.zip_of({"prediction.txt": written.encode()}))
    assert (failed["status"], failed["message"]) == ("failed", TEAM_FAILURE)
    organizer = program_client.get(f"/api/v1/submissions/{failed['id']}", headers=auth(db, "olga")).json()
    assert why in organizer["organizer"]["message"]
    again = program_client.post(
        f"{PHASE}/submissions", headers=ada, files={"file": ("r.zip", tiny.result(["0.5"]), "application/zip")}
    )
    assert again.json()["quota"]["total_used"] == 2  # charged, not refunded


def test_the_largest_finite_scores_show_as_numbers_and_the_chart_still_draws(
    db: Database, program_client: TestClient
) -> None:
    setup(
        db,
        program_phase(gold=bundle_file("gold.zip", tiny.gold(TRUTH, ECHO_PY))),
        scorer="program",
        scorer_options=tiny.OPTIONS,
    )
    for team, value in (("ada", "0.5"), ("ada", "1e308"), ("bob", "-1.7e308")):
        scored = send(program_client, auth(db, team), tiny.zip_of({"prediction.txt": value.encode()}))
        assert scored["metrics"]["accuracy"] == float(value)
    page = program_client.get("/c/comp/labels/dev")
    assert page.status_code == 200
    assert ">1e+308<" in page.text and ">-1.7e+308<" in page.text
    assert "inf" not in page.text.replace("info", "")
    chart = program_client.get("/c/comp/labels/dev/progress.svg")
    assert chart.status_code == 200 and chart.text.lstrip().startswith("<?xml")
    assert "× 1e308" in chart.text  # the axis says the unit its numbers are in


@pytest.mark.parametrize("allowed", [False, True])
def test_where_no_cgroup_can_be_made_programs_run_only_if_the_operator_allows_it(
    db: Database, settings: Settings, monkeypatch: pytest.MonkeyPatch, allowed: bool
) -> None:
    from sandbox import cgroups

    monkeypatch.setattr(cgroups, "_mounts", list)  # a worker whose mount table has no cgroup file system
    setup(db, program_phase(), scorer="program", scorer_options=tiny.OPTIONS)
    with TestClient(create_app(settings.model_copy(update={"sandbox_allow_no_cgroup": allowed}))) as client:
        shown = send(client, auth(db, "ada"), tiny.result(TRUTH))
        if allowed:
            assert shown["metrics"] == {"accuracy": 1.0, "lines": 4.0}
            return
        assert shown["status"] == "failed" and "problem on our side" in shown["message"]
        organizer = client.get(f"/api/v1/submissions/{shown['id']}", headers=auth(db, "olga")).json()
        assert "PODIUM_SANDBOX_ALLOW_NO_CGROUP=true" in organizer["organizer"]["message"]


@pytest.mark.parametrize(
    ("options", "upload", "named"),
    [
        (tiny.OPTIONS, {}, "the zip holds no files; this phase's scoring program reads the result files"),
        (tiny.OPTIONS, {"results/": b"", "__MACOSX/._x": b""}, "the zip holds no files"),
        (
            {**tiny.OPTIONS, "result_files": ["prediction.txt"]},
            {},
            "the zip holds no files; this phase's scoring program reads prediction.txt at the top of the zip",
        ),
        (
            {**tiny.OPTIONS, "result_files": ["prediction.txt"]},
            {"results/prediction.txt": b"a"},
            "the zip lacks prediction.txt (it holds results/prediction.txt); this phase's scoring program reads "
            "prediction.txt",
        ),
    ],
)
def test_results_the_program_cannot_use_are_refused_at_upload_for_free_saying_what_the_phase_expects(
    db: Database, program_client: TestClient, options: dict[str, object], upload: dict[str, bytes], named: str
) -> None:
    setup(db, program_phase(total_limit=1), scorer="program", scorer_options=options)
    ada = auth(db, "ada")
    files = {"file": ("results.zip", tiny.zip_of(upload), "application/zip")}
    refused = program_client.post(f"{PHASE}/submissions", headers=ada, files=files)
    assert refused.status_code == 422
    assert named in refused.text
    assert send(program_client, ada, tiny.result(TRUTH))["status"] == "scored"  # the refusal cost nothing
