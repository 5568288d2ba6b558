"""CodaLab v1.5 and Codabench v2 phases with an ingestion program take code: the reference bundles' code
submissions run through their ingestion programs in the sandbox, then through their scoring programs, and get
the numbers those programs give when run by hand; a program's failure costs the team, the platform's does not,
and neither the code nor the ingestion program can reach the reference data."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import textwrap
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from app.cli import app as cli
from app.config import Settings
from app.main import create_app
from app.services.bundles.loader import load_bundle
from app.services.bundles.spec import BundleError
from app.storage.blobs import read_blob
from app.storage.db import Database
from app.storage.models import CodeRun, Submission
from codalab.program import TEAM_FAILURE
from tests.app.test_codalab_bundles import V2, V2_PHASE, create, reference_zip, renamed_program, submit, tokens
from tests.app.test_code_runs import EXAMPLE
from tests.app.web.browser import serving
from tests.codalab.reference import (
    bundle,
    by_hand,
    legacy_runtime,
    runtimes_table,
    v2_ingested_by_hand,
    v15_result,
    zip_files,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed here"),
]

FIRST = f"/api/v1/competitions/{V2}/tasks/wheat-seed-first-task/phases/{V2_PHASE}"


@pytest.fixture
def codalab(settings: Settings) -> Settings:
    return settings.model_copy(update={"program_runtimes": runtimes_table()})


@pytest.fixture
def server(codalab: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(codalab)) as client:
        yield client


def join_v2(client: TestClient, people: dict[str, dict[str, str]]) -> None:
    create(client, people["olga"], reference_zip("competition_v2_multi_task.zip"))
    assert client.post(f"/api/v1/competitions/{V2}/participation", headers=people["ada"]).status_code == 200
    approved = client.post(f"/api/v1/competitions/{V2}/participants/ada/approve", headers=people["olga"])
    assert approved.status_code == 200, approved.text


def made_by_podium(client: TestClient, submission_id: int) -> tuple[bytes, bytes]:
    """The uploaded code (kept on the run) and what the ingestion program wrote (the submission's file now), read
    through the server's own database handle (which knows where it keeps files)."""
    with client.app.state.podium.db.session() as session:  # type: ignore[attr-defined]
        row = session.get(Submission, submission_id)
        run = session.query(CodeRun).filter_by(submission_id=submission_id).one()
        assert row is not None
        return read_blob(session, run.program_blob_id), read_blob(session, row.blob_id)


def test_the_codabench_code_submission_runs_by_api_and_podium_submit_and_scores_as_by_hand(
    db: Database, server: TestClient, tmp_path: Path
) -> None:
    people = tokens(db)
    join_v2(server, people)
    folder = bundle("competition_v2_multi_task.zip", tmp_path / "bundle")
    code = reference_zip("submission.zip")
    code_file = tmp_path / "submission.zip"
    code_file.write_bytes(code)
    token = people["ada"]["Authorization"].removeprefix("Bearer ")
    for task, name in (("wheat-seed-first-task", "first"), ("wheat-seed-second-task", "second")):
        if name == "first":  # through the API
            scored = submit(server, people["ada"], f"/api/v1/competitions/{V2}/tasks/{task}/phases/{V2_PHASE}", code)
        else:  # through `podium submit` to a served site
            with serving(db.url, tmp_path / "server.log", PROGRAM_RUNTIMES=runtimes_table()) as url:
                where = f"{V2}/{task}/{V2_PHASE}"
                args = [
                    "submit",
                    "--server",
                    url,
                    "--token",
                    token,
                    "--task",
                    where,
                    "--wait",
                    "--json",
                    str(code_file),
                ]
                submitted = CliRunner().invoke(cli, args)
            assert submitted.exit_code == 0, submitted.output
            scored = json.loads(submitted.stdout)
        assert (scored["status"], scored["code_run"]["stage"], scored["code_run"]["exit_code"]) == ("scored",) * 2 + (
            0,
        ), scored
        uploaded, output = made_by_podium(server, scored["id"])
        assert uploaded == code
        made = zipfile.ZipFile(io.BytesIO(output))
        # What the ingestion program writes by hand, plus what Codabench adds: the code it copies into the output
        # (a submission without a metadata file) and the metadata file of exit codes and times.
        by_hand_names = set(zipfile.ZipFile(io.BytesIO(v2_ingested_by_hand(folder, name))).namelist())
        assert set(made.namelist()) == by_hand_names | {"model.py", "metadata"}
        testing = (folder / name / "input_data" / "testing_data").read_text().splitlines()
        assert len(made.read("prediction").decode().split()) == len(testing)
        # The model (KMeans, unseeded) and its duration vary from run to run: the bundle's scoring program, run by
        # hand on this run's output, gives the numbers to expect.
        expected = by_hand(folder / "scoring_program", folder / name / "reference_data", output, legacy_runtime())
        assert scored["metrics"] == expected
        assert expected["duration"] == json.loads(made.read("metadata.json"))["duration"] > 0
    page = server.get(f"/c/{V2}/wheat-seed-first-task/{V2_PHASE}").text
    assert "not run yet" not in page
    assert "Podium runs the ingestion program on it" in page


def test_the_codalab_code_submission_runs_through_podium_submit_and_scores_as_by_hand(
    db: Database, tmp_path: Path
) -> None:
    people = tokens(db)
    path = tmp_path / "competition_15.zip"
    path.write_bytes(renamed_program(reference_zip("competition_15.zip")))
    made = CliRunner().invoke(cli, ["competition", "create", str(path)], env={"PODIUM_DATABASE_URL": db.url})
    assert made.exit_code == 0, made.stderr
    slug = "zipped-time-series-competition"
    folder = bundle("competition_15.zip", tmp_path / "bundle")
    # By hand: the ingestion program on the sample code, then the scoring program on what it wrote.
    result = v15_result(folder)
    expected = by_hand(folder / "scoring_program.zip", folder / "evaluation_data.zip", result, legacy_runtime())
    assert expected["prediction_score"] > 0
    code = tmp_path / "submission_15.zip"
    code.write_bytes(reference_zip("submission_15.zip"))
    token = people["ada"]["Authorization"].removeprefix("Bearer ")
    with serving(db.url, tmp_path / "server.log", PROGRAM_RUNTIMES=runtimes_table()) as url:
        task = f"{slug}/{slug}/final-phase"  # the development phase closed in 2019
        args = ["submit", "--server", url, "--token", token, "--task", task, "--wait", "--json", str(code)]
        submitted = CliRunner().invoke(cli, args)
    assert submitted.exit_code == 0, submitted.output
    body = json.loads(submitted.stdout)
    assert (body["status"], body["code_run"]["stage"]) == ("scored", "scored"), body
    assert body["metrics"] == expected


def model(body: str) -> bytes:
    """A code submission for the Codabench bundle: a model.py whose ``Model`` runs ``body`` when made."""
    lines = ["import hashlib, os, sys", "import numpy as np", "", "class Model:", "    def __init__(self):"]
    lines += ["        " + line for line in textwrap.dedent(body).splitlines()]
    lines += ["    def fit(self, X, y):", "        pass", "    def predict(self, X):"]
    lines += ["        return np.zeros(len(X))"]
    return zip_files({"model.py": "\n".join(lines).encode() + b"\n"})


def test_a_crashing_model_costs_the_team_and_says_so_plainly(db: Database, server: TestClient) -> None:
    people = tokens(db)
    join_v2(server, people)
    failed = submit(server, people["ada"], FIRST, model("raise ValueError('no model here')"))
    assert (failed["status"], failed["code_run"]["stage"]) == ("failed", "failed")
    assert failed["message"] == "The ingestion program failed on your code: it exited with status 1."
    assert failed["code_run"]["stderr"] is None  # the phase does not show logs
    organizer = server.get(f"/api/v1/submissions/{failed['id']}", headers=people["olga"]).json()
    assert "ValueError: no model here" in organizer["code_run"]["stderr"]
    with db.session() as session:
        row = session.get(Submission, failed["id"])
        assert row is not None and row.quota_refunded is False


def test_neither_the_code_nor_the_ingestion_program_can_reach_the_reference_data(
    db: Database, server: TestClient, tmp_path: Path
) -> None:
    people = tokens(db)
    join_v2(server, people)
    folder = bundle("competition_v2_multi_task.zip", tmp_path / "bundle")
    answers = hashlib.sha256((folder / "first" / "reference_data" / "testing_label").read_bytes()).hexdigest()
    hunter = f"""\
        found = []
        for top, dirs, files in os.walk("/"):
            dirs[:] = [d for d in dirs if os.path.join(top, d) not in ("/proc", "/sys", "/usr", "/runtime", "/dev")]
            for name in files:
                try:
                    data = open(os.path.join(top, name), "rb").read(5_000_000)
                except OSError:
                    continue
                if name == "testing_label" or hashlib.sha256(data).hexdigest() == "{answers}":
                    found.append(os.path.join(top, name))
        print("reference files found:", found, "input data:", sorted(os.listdir("/app/input_data")))
        """
    scored = submit(server, people["ada"], FIRST, model(hunter))
    assert scored["status"] == "scored", scored
    organizer = server.get(f"/api/v1/submissions/{scored['id']}", headers=people["olga"]).json()
    stdout = organizer["code_run"]["stdout"]
    assert "reference files found: [] input data: ['testing_data', 'training_data', 'training_label']" in stdout


def test_a_worker_without_the_runtime_fails_the_run_refunded(db: Database, codalab: Settings, tmp_path: Path) -> None:
    people = tokens(db)
    broken = json.loads(runtimes_table())
    broken["codalab/codalab-legacy:py3"] = str(tmp_path / "missing-runtime")
    with TestClient(create_app(codalab.model_copy(update={"program_runtimes": json.dumps(broken)}))) as client:
        join_v2(client, people)
        failed = submit(client, people["ada"], FIRST, reference_zip("submission.zip"))
    assert (failed["status"], failed["code_run"]["stage"]) == ("failed", "failed")
    assert failed["message"].startswith("Running your program failed because of a problem on our side")
    with db.session() as session:
        row = session.get(Submission, failed["id"])
        assert row is not None and row.quota_refunded is True
        assert "missing-runtime does not exist on this worker" in row.organizer_message


def test_a_result_zip_is_scored_as_it_is_and_runs_nothing(db: Database, server: TestClient, tmp_path: Path) -> None:
    people = tokens(db)
    join_v2(server, people)
    labels = bundle("competition_v2_multi_task.zip", tmp_path / "b") / "first" / "reference_data" / "testing_label"
    result = zip_files({"prediction": labels.read_bytes(), "metadata.json": b'{"duration": 3}'})
    scored: dict[str, Any] = submit(server, people["ada"], FIRST, result)
    assert (scored["status"], scored["metrics"], scored["code_run"]) == (
        "scored",
        {"accuracy": 1.0, "duration": 3.0},
        None,
    )


def test_an_ingestion_program_is_refused_where_no_scoring_program_scores(tmp_path: Path) -> None:
    shutil.copytree(EXAMPLE, tmp_path / "bundle")
    (tmp_path / "bundle" / "ingestion.zip").write_bytes(zip_files({"metadata": b"command: python3 run.py"}))
    yaml_file = tmp_path / "bundle" / "competition.yaml"
    document = yaml.safe_load(yaml_file.read_text())
    document["tasks"][0]["phases"][0]["code"]["ingestion_program"] = {"path": "ingestion.zip"}
    yaml_file.write_text(yaml.safe_dump(document))
    with pytest.raises(BundleError) as refused:
        load_bundle(tmp_path / "bundle")
    assert (
        "tasks[0].phases[0].code.ingestion_program",
        "only a phase scored by a scoring program (scorer: program) runs an ingestion program",
    ) in refused.value.problems


def test_the_codalab_bundle_as_it_is_runs_the_code_then_fails_scoring_as_its_program_does_by_hand(
    db: Database, server: TestClient
) -> None:
    """The phases name the scoring program folder whose score.py Python 3 refuses (TabError), by hand too."""
    people = tokens(db)
    created = create(server, people["olga"], reference_zip("competition_15.zip"))
    url = f"/api/v1/competitions/{created['slug']}/tasks/{created['slug']}/phases/final-phase"
    failed = submit(server, people["ada"], url, reference_zip("submission_15.zip"))
    assert (failed["status"], failed["message"]) == ("failed", TEAM_FAILURE)
    assert (failed["code_run"]["status"], failed["code_run"]["stage"]) == ("succeeded", "failed")
    organizer = server.get(f"/api/v1/submissions/{failed['id']}", headers=people["olga"]).json()
    assert "TabError" in organizer["organizer"]["program_run"]["stderr"]
