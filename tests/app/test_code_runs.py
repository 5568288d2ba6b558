"""Code phases through the server in one process: a team uploads a program, the ``gpu`` lane of the embedded
pool runs it in the real sandbox on the hidden inputs, and its output is validated, scored and ranked;
a program's failure costs the team and says why, a program cannot reach the gold, and its logs stay hidden
unless the phase shows them."""

from __future__ import annotations

import io
import shutil
import textwrap
import zipfile
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from fastapi.testclient import TestClient

from app.config import Settings
from app.main import create_app
from app.services.bundles.loader import load_bundle
from app.services.bundles.spec import BundleError
from app.services.code.settings import CodeCaps
from app.services.competitions import catalog
from app.storage.db import Database
from sandbox import Limits, cgroups
from tests.app.builders import make_user
from tests.app.web.test_api import auth
from tests.app.web.test_pages import login, token

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed here")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "svident-code"
PHASE = "/api/v1/competitions/svident-code/tasks/detection/phases/test"
STARTER = (EXAMPLE / "starting-kit" / "predict.py").read_bytes()


def zipped(files: dict[str, bytes | str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data if isinstance(data, bytes) else textwrap.dedent(data))
    return buffer.getvalue()


def program(body: str) -> bytes:
    """A predict.py of ``body`` (it has ``inputs``, ``output`` and ``uuids``, the test sentences' ids)."""
    head = """\
        import csv, json, os, sys
        from pathlib import Path
        inputs, output = Path(sys.argv[1]), Path(sys.argv[2])
        with (inputs / "inputs.tsv").open(encoding="utf-8", newline="") as file:
            uuids = [row["uuid"] for row in csv.DictReader(file, delimiter="\\t")]
        """
    return zipped({"predict.py": textwrap.dedent(head) + textwrap.dedent(body)})


ALL_ZERO = 'json.dump({u: "0" for u in uuids}, (output / "predictions.json").open("w"))\n'


def create(db: Database, **code: Any) -> None:
    spec = load_bundle(EXAMPLE)
    task = spec.tasks[0]
    phase = replace(task.phases[0], total_limit=3)
    assert phase.code is not None
    phase = replace(phase, code=replace(phase.code, **code))
    spec = replace(spec, tasks=(replace(task, phases=(phase,)),))
    with db.session() as session:
        make_user(session, "olga", organizer=True)
        make_user(session, "ada")
        catalog.create_competition(session, replace(spec, organizers=("olga",)))
        session.commit()


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings)) as test_client:
        yield test_client


def send(client: TestClient, headers: dict[str, str], data: bytes) -> dict[str, Any]:
    answer = client.post(
        f"{PHASE}/submissions", headers=headers, files={"file": ("program.zip", data, "application/zip")}
    )
    assert answer.status_code == 202, answer.text
    assert answer.json()["status"] == "awaiting_run"
    assert client.app.state.podium.queue.wait_idle(120)  # type: ignore[attr-defined]
    shown = client.get(f"/api/v1/submissions/{answer.json()['id']}", headers=headers).json()
    assert isinstance(shown, dict)
    return shown


def used(client: TestClient, headers: dict[str, str]) -> int:
    answer = client.get(f"{PHASE}/quota", headers=headers)
    if answer.status_code == 200:
        return int(answer.json()["total_used"])
    mine = client.get(f"{PHASE}/submissions", headers=headers).json()["submissions"]
    return len(mine)


def test_the_starting_kit_runs_on_the_hidden_inputs_and_is_scored_and_ranked(db: Database, client: TestClient) -> None:
    create(db)
    ada = auth(db, "ada")
    scored = send(client, ada, zipped({"predict.py": STARTER}))
    assert scored["status"] == "scored", scored
    assert scored["metrics"]["f1"] > 0
    run = scored["code_run"]
    assert (run["stage"], run["status"], run["exit_code"], run["timed_out"]) == ("scored", "succeeded", 0, False)
    assert run["wall_seconds"] > 0
    assert (run["logs_shown"], run["stdout"], run["stderr"]) == (False, None, None)
    board = client.get(f"{PHASE}/leaderboard").json()
    assert [e["team"] for e in board["entries"]] == ["ada"]
    # Organizers read the program's logs.
    organizer = client.get(f"/api/v1/submissions/{scored['id']}", headers=auth(db, "olga")).json()
    assert organizer["code_run"]["stderr"] == "labelled 22 sentences\n"
    # Scoring it again scores its predictions again; the program does not run again.
    assert client.post(f"/api/v1/submissions/{scored['id']}/rescore", headers=auth(db, "olga")).status_code == 202
    assert client.app.state.podium.queue.wait_idle(60)  # type: ignore[attr-defined]
    again = client.get(f"/api/v1/submissions/{scored['id']}", headers=ada).json()
    assert (again["status"], again["metrics"], again["code_run"]) == ("scored", scored["metrics"], run)


def test_a_code_phases_sample_is_its_starting_kit_and_is_scored_as_it_is(db: Database, client: TestClient) -> None:
    create(db)
    sample = client.get(f"{PHASE}/sample")
    assert sample.status_code == 200, sample.text
    assert 'filename="starting-kit.zip"' in sample.headers["content-disposition"]
    assert zipfile.ZipFile(io.BytesIO(sample.content)).read("predict.py") == STARTER
    scored = send(client, auth(db, "ada"), sample.content)
    assert scored["status"] == "scored" and scored["metrics"]["f1"] > 0, scored


def test_the_phase_and_submit_pages_say_the_phase_takes_programs_and_offer_the_kit(
    db: Database, client: TestClient
) -> None:
    create(db)
    login(client, "ada")
    for page in ("/c/svident-code/detection/test", "/c/svident-code/detection/test/submit"):
        text = client.get(page).text
        assert "This phase takes programs" in text, page
        assert "`python predict.py /input /output`" in text and "/output/predictions.json" in text, page
        assert "the starting kit, a program that runs as it is" in text and "filled from the phase" not in text, page


def test_a_code_phase_without_a_starting_kit_says_how_its_programs_run(db: Database, client: TestClient) -> None:
    create(db, starting_kit=None)
    answer = client.get(f"{PHASE}/sample")
    assert answer.status_code == 404 and answer.json()["error"] == "no_sample", answer.text
    said = answer.json()["detail"]
    assert "takes programs" in said and "`python predict.py /input /output`" in said, said
    assert "/output/predictions.json" in said, said


def test_a_metadata_command_overrides_the_phases(db: Database, client: TestClient) -> None:
    create(db)
    source = STARTER.replace(b"predictions.json", b"labels.json")
    files = {
        "main.py": source,
        "metadata": "command: python main.py /input /output && mv /output/labels.json /output/predictions.json\n",
    }
    scored = send(client, auth(db, "ada"), zipped(files))
    assert scored["status"] == "scored", scored


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("sys.exit(1)\n", "Your program failed: it exited with status 1."),
        ("pass\n", "Your program wrote no predictions.json in /output."),
        ('(output / "predictions.json").write_text("{}")\n', "Your program's predictions were refused."),
    ],
)
def test_a_failing_program_costs_the_team_and_says_why(
    db: Database, client: TestClient, body: str, message: str
) -> None:
    create(db)
    ada = auth(db, "ada")
    failed = send(client, ada, program(body))
    assert failed["status"] == "failed"
    assert failed["message"].startswith(message), failed["message"]
    assert failed["code_run"]["stage"] == "failed"
    assert used(client, ada) == 1  # the upload stays counted
    # Scoring it again has nothing to score (its file is the program): refused, and it stays as it was.
    again = client.post(f"/api/v1/submissions/{failed['id']}/rescore", headers=auth(db, "olga"))
    assert again.status_code == 409
    assert "its program gave none" in again.json()["detail"]
    after = client.get(f"/api/v1/submissions/{failed['id']}", headers=ada).json()
    assert (after["status"], after["message"]) == ("failed", failed["message"])


def test_a_zip_that_is_not_a_program_is_refused_for_free(db: Database, client: TestClient) -> None:
    create(db)
    ada = auth(db, "ada")
    refused = client.post(f"{PHASE}/submissions", headers=ada, files={"file": ("p.zip", b"not a zip", "text/plain")})
    assert refused.status_code == 422
    assert "upload your program as a zip" in refused.json()["detail"]


HUNTER = """\
    found = []
    needle = "exploredata-EX0001_" + "Varq32"  # a variable id: only in the gold, never in the inputs (or here)
    def look(text):
        if needle in text:
            found.append(text)
    look(json.dumps(dict(os.environ)))
    for pid in os.listdir("/proc"):
        for name in ("cmdline", "environ"):
            try:
                look(open(f"/proc/{pid}/{name}", "rb").read().decode("utf-8", "replace"))
            except OSError:
                pass
    for folder, dirs, files in os.walk("/"):
        dirs[:] = [d for d in dirs if os.path.join(folder, d) not in ("/proc", "/sys", "/usr", "/runtime", "/dev")]
        for name in files:
            try:
                look(open(os.path.join(folder, name), "rb").read(5_000_000).decode("utf-8", "replace"))
            except OSError:
                pass
    print(f"found {len(found)}")
    labels = {u: "0" for u in uuids}
    for text in found:  # the gold's lines: sentence, is_variable, variable, research_data, doc_id, uuid, lang
        for line in text.splitlines():
            parts = line.split("\t")
            if len(parts) >= 7 and parts[5] in labels:
                labels[parts[5]] = parts[1]
    json.dump(labels, (output / "predictions.json").open("w"))
    """


def test_a_program_that_hunts_for_the_gold_scores_like_an_all_zero_one(db: Database, client: TestClient) -> None:
    create(db)
    ada = auth(db, "ada")
    zero = send(client, ada, program(ALL_ZERO))
    hunter = send(client, ada, program(HUNTER))
    assert hunter["status"] == zero["status"] == "scored"
    assert hunter["metrics"] == zero["metrics"]
    organizer = client.get(f"/api/v1/submissions/{hunter['id']}", headers=auth(db, "olga")).json()
    assert organizer["code_run"]["stdout"] == "found 0\n"


def _cgroups() -> bool:
    try:
        cgroups.create(Limits()).remove()
    except cgroups.CgroupUnavailable:
        return False
    return True


MEMORY = """\
    import subprocess
    child = [sys.executable, "-c", "import time; held = b'x' * (160 * 2**20); time.sleep(30)"]
    children = [subprocess.Popen(child) for _ in range(2)]
    for c in children:
        c.wait()
    """


@pytest.mark.slow
@pytest.mark.skipif(
    not _cgroups(), reason="no cgroup of its own can be made for a run here (memory limited per process)"
)
def test_two_processes_over_the_memory_of_the_run_fail_with_the_memory_message(
    db: Database, client: TestClient
) -> None:
    create(db, memory_mb=256, time_limit_s=60)
    failed = send(client, auth(db, "ada"), program(MEMORY))
    assert failed["status"] == "failed"
    assert failed["message"] == (
        "Your program failed: it used more than 256 MB of memory (all its processes together) and was stopped."
    )
    assert failed["code_run"]["out_of_memory"] is True


@pytest.mark.parametrize("show_logs", [False, True])
def test_the_team_reads_its_programs_output_only_where_the_phase_shows_logs(
    db: Database, client: TestClient, show_logs: bool
) -> None:
    create(db, show_logs=show_logs)
    shown = send(client, auth(db, "ada"), program('print("hello from the program")\n' + ALL_ZERO))
    assert shown["status"] == "scored"
    run = shown["code_run"]
    assert run["logs_shown"] is show_logs
    assert run["stdout"] == ("hello from the program\n" if show_logs else None)
    login(client, "ada")
    page = client.get(f"/submissions/{shown['id']}").text
    assert "Your program&#39;s run" in page or "Your program's run" in page
    assert ("hello from the program" in page) is show_logs


def test_a_phase_asking_for_more_than_the_server_allows_is_refused_by_key_path(db: Database) -> None:
    spec = load_bundle(EXAMPLE)
    with db.session() as session, pytest.raises(BundleError) as refused:
        catalog.create_competition(session, spec, code_caps=CodeCaps(max_time_s=100, max_memory_mb=512))
    assert refused.value.problems == [
        ("tasks[0].phases[0].code.time_limit_s", "300 s is more than this server allows (100 s)"),
        ("tasks[0].phases[0].code.memory_mb", "1024 MB is more than this server allows (512 MB)"),
    ]


@pytest.mark.parametrize(
    ("code", "key", "message"),
    [
        ({"inputs": []}, "code.inputs", "expected at least one entry"),
        ({"inputs": [{"path": "data/test.tsv"}], "output": "../x"}, "code.output", "holds a folder separator"),
        ({"inputs": [{"path": "data/test.tsv"}]}, "code.output", "name the file the program writes"),
        ({"inputs": [{"path": "data/test.tsv"}], "output": "p.json", "memory_mb": 0}, "code.memory_mb", "at least 1"),
        ({"inputs": [{"path": "data/test.tsv"}], "output": "p.json", "gpus": 2}, "code.gpus", "unknown key"),
        (
            {"inputs": [{"path": "data/test.tsv"}], "output": "p.json", "gpu_fallback_cpu": True},
            "code.gpu_fallback_cpu",
            "applies only to a phase with gpu: true",
        ),
        ({"inputs": [{"path": "data/test.tsv"}], "output": "p", "starting_kit": 3}, "code.starting_kit", "a folder"),
        ({"inputs": [{"path": "data/test.tsv"}], "output": "p", "starting_kit": "k"}, "code.starting_kit", "not found"),
        (
            {"inputs": [{"path": "data/test.tsv"}], "output": "p", "starting_kit": "data/test.tsv"},
            "code.starting_kit",
            "is not a folder",
        ),
    ],
)
def test_the_code_keys_are_checked_by_key_path(tmp_path: Path, code: dict[str, Any], key: str, message: str) -> None:
    shutil.copytree(EXAMPLE, tmp_path / "bundle")
    yaml_file = tmp_path / "bundle" / "competition.yaml"
    document = yaml.safe_load(yaml_file.read_text())
    document["tasks"][0]["phases"][0]["code"] = code
    yaml_file.write_text(yaml.safe_dump(document))
    with pytest.raises(BundleError) as refused:
        load_bundle(tmp_path / "bundle")
    assert any(where == f"tasks[0].phases[0].{key}" and message in text for where, text in refused.value.problems), (
        refused.value.problems
    )


def test_an_organizers_program_runs_as_a_baseline_and_ranks_marked_as_one(db: Database, client: TestClient) -> None:
    create(db)
    olga, ada = auth(db, "olga"), auth(db, "ada")
    route = f"{PHASE}/baseline-programs"
    files = {"file": ("baseline.zip", zipped({"predict.py": STARTER}), "application/zip")}
    assert client.post(route, headers=ada, files=files).status_code == 403  # organizers only
    answer = client.post(route, headers=olga, files=files, data={"name": "keyword cues"})
    assert answer.status_code == 202, answer.text
    assert (answer.json()["status"], answer.json()["baseline"]) == ("awaiting_run", True)
    assert client.app.state.podium.queue.wait_idle(120)  # type: ignore[attr-defined]
    shown = client.get(f"/api/v1/submissions/{answer.json()['id']}", headers=olga).json()
    assert (shown["status"], shown["code_run"]["stage"], shown["team"]) == ("scored", "scored", "keyword cues")
    send(client, ada, program(ALL_ZERO))
    board = client.get(f"{PHASE}/leaderboard").json()
    assert sorted((e["team"], e["baseline"]) for e in board["entries"]) == [("ada", False), ("keyword cues", True)]
    assert used(client, ada) == 1  # the baseline counted against no team


def test_a_program_is_refused_as_a_baseline_of_a_phase_that_runs_none(db: Database, client: TestClient) -> None:
    create(db)
    with db.session() as session:
        spec = load_bundle(EXAMPLE.parent / "svident")
        catalog.create_competition(session, replace(spec, organizers=("olga",)))
        session.commit()
    files = {"file": ("baseline.zip", zipped({"predict.py": STARTER}), "application/zip")}
    route = "/api/v1/competitions/svident/tasks/detection/phases/test/baseline-programs"
    refused = client.post(route, headers=auth(db, "olga"), files=files)
    assert refused.status_code == 409
    assert "does not run programs" in refused.json()["detail"]


def test_organizers_upload_a_baseline_program_on_the_organize_page(db: Database, client: TestClient) -> None:
    create(db)
    login(client, "olga")
    page = client.get("/c/svident-code/detection/test/organize")
    assert "Run the program as a baseline" in page.text
    answer = client.post(
        "/c/svident-code/detection/test/organize/baseline-programs",
        data={"csrf_token": token(page), "name": "cues from the page"},
        files={"file": ("baseline.zip", zipped({"predict.py": STARTER}), "application/zip")},
        follow_redirects=False,
    )
    assert answer.status_code == 303, answer.text
    assert client.app.state.podium.queue.wait_idle(120)  # type: ignore[attr-defined]
    board = client.get(f"{PHASE}/leaderboard").json()
    assert [(e["team"], e["baseline"]) for e in board["entries"]] == [("cues from the page", True)]
