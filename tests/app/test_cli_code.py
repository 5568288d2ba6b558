"""``podium submit`` and ``podium baseline upload`` on code phases, against a real server in this process: the
program is uploaded as any file, run in the sandbox, and ``--wait`` follows it until it is scored: the demo's code
phase ranking a program and a baseline, a hostile program, a memory hog, a generic scorer's code phase, and the
compose check's code step."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
import yaml
from typer.testing import CliRunner

from app.cli import app
from app.services.bundles.loader import load_bundle
from app.services.competitions import catalog
from app.storage.db import Database
from tests.app.builders import PASSWORD, make_user
from tests.app.test_cli_baselines import server  # noqa: F401 (the fixture: the app served by uvicorn)
from tests.app.test_code_runs import ALL_ZERO, HUNTER, MEMORY, STARTER, _cgroups, create, program, zipped
from tests.app.web.test_api import auth

pytestmark = [
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed here"),
    pytest.mark.slow,  # live servers and sandboxed runs: sent out first
]

TASK = "svident-code/detection/test"


def test_submit_and_baseline_upload_wait_for_the_program_run_and_its_score(
    db: Database,
    server: str,  # noqa: F811
    tmp_path: Any,
) -> None:
    create(db)
    program = tmp_path / "program.zip"
    program.write_bytes(zipped({"predict.py": STARTER}))
    token = auth(db, "ada")["Authorization"].removeprefix("Bearer ")
    args = ("--server", server, "--task", TASK, "--wait", "--json")
    submitted = CliRunner().invoke(app, ["submit", *args, "--token", token, str(program)])
    assert submitted.exit_code == 0, submitted.output
    body = json.loads(submitted.stdout)
    assert (body["status"], body["code_run"]["stage"]) == ("scored", "scored")
    organizer = auth(db, "olga")["Authorization"].removeprefix("Bearer ")
    uploaded = CliRunner().invoke(
        app, ["baseline", "upload", *args, "--token", organizer, "--name", "cues", str(program)]
    )
    assert uploaded.exit_code == 0, uploaded.output
    baseline = json.loads(uploaded.stdout)
    assert (baseline["status"], baseline["baseline"], baseline["team"]) == ("scored", True, "cues")
    refused = CliRunner().invoke(app, ["baseline", "upload", *args, "--token", token, str(program)])
    assert refused.exit_code == 2
    assert "only the organizers of 'svident-code' may do this" in refused.stderr


def podium(*args: str, db: Database | None = None) -> Any:
    env = {"PODIUM_DATABASE_URL": db.url} if db is not None else None
    return CliRunner().invoke(app, list(args), env=env)


def test_the_demos_code_phase_ranks_a_participants_program_and_an_organizers_baseline(
    db: Database,
    server: str,  # noqa: F811
    tmp_path: Any,
) -> None:
    seeded = podium("demo", "--no-baselines", db=db)
    assert seeded.exit_code == 0, seeded.output
    assert re.search(r"^  svident-code +created$", seeded.stdout, re.MULTILINE), seeded.stdout
    tokens = {name: token for name, _, token in re.findall(r"user (\S+) +password (\S+) +token (\S+)", seeded.stdout)}
    starter, zero = tmp_path / "starter.zip", tmp_path / "zero.zip"
    starter.write_bytes(zipped({"predict.py": STARTER}))
    zero.write_bytes(program(ALL_ZERO))
    args = ("--server", server, "--task", TASK, "--wait", "--json")
    submitted = podium("submit", *args, "--token", tokens["demo-participant"], str(starter))
    assert submitted.exit_code == 0, submitted.output
    assert json.loads(submitted.stdout)["code_run"]["stage"] == "scored"
    uploaded = podium("baseline", "upload", *args, "--token", tokens["demo-organizer"], "--name", "zeros", str(zero))
    assert uploaded.exit_code == 0, uploaded.output
    assert json.loads(uploaded.stdout)["baseline"] is True
    board = json.loads(podium("leaderboard", "--server", server, "--task", TASK, "--json").stdout)
    ranked = [(e["rank"], e["team"], e["baseline"]) for e in board["entries"]]
    assert ranked == [(1, "demo-participant", False), (2, "zeros", True)]
    shown = podium("leaderboard", "--server", server, "--task", TASK).stdout
    assert re.search(r"^ +1 .* demo-participant$", shown, re.MULTILINE), shown
    assert re.search(r"^ +2 .* zeros \[zeros \w+\] \(baseline\)$", shown, re.MULTILINE), shown
    page = httpx.get(f"{server}/c/{TASK}", timeout=30).text
    assert page.index("demo-participant") < page.index('zeros <abbr title="baseline">*</abbr>')


#: Hunts the gold (as the API's test of it does) and then a network: the server's own port, PostgreSQL, Redis.
HOSTILE = (
    HUNTER.replace('    json.dump(labels, (output / "predictions.json").open("w"))\n', "").rstrip(" ")
    + """\
    import socket
    for port in (PORT, 5432, 6379):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                labels = {u: "1" for u in uuids}
        except OSError as exc:
            print(f"port {port}: {exc}")
    json.dump(labels, (output / "predictions.json").open("w"))
    """
)


def test_a_hostile_program_submitted_with_podium_submit_scores_like_an_all_zero_one(
    db: Database,
    server: str,  # noqa: F811
    tmp_path: Any,
) -> None:
    create(db)
    token = auth(db, "ada")["Authorization"].removeprefix("Bearer ")
    hostile, zero = tmp_path / "hostile.zip", tmp_path / "zero.zip"
    hostile.write_bytes(program(HOSTILE.replace("PORT", str(urlsplit(server).port))))
    zero.write_bytes(program(ALL_ZERO))
    args = ("--server", server, "--task", TASK, "--token", token, "--wait", "--json")
    results = [podium("submit", *args, str(path)) for path in (zero, hostile)]
    assert [r.exit_code for r in results] == [0, 0], [r.output for r in results]
    zero_body, hostile_body = (json.loads(r.stdout) for r in results)
    assert hostile_body["status"] == zero_body["status"] == "scored"
    assert hostile_body["metrics"] == zero_body["metrics"]
    olga = auth(db, "olga")
    log = httpx.get(f"{server}/api/v1/submissions/{hostile_body['id']}", headers=olga, timeout=30).json()
    stdout = log["code_run"]["stdout"]
    assert stdout.startswith("found 0\n") and stdout.count("port ") == 3, stdout  # no gold, no port answered


def test_a_program_over_its_memory_limit_fails_through_podium_submit_and_its_page_says_why(
    db: Database,
    server: str,  # noqa: F811
    tmp_path: Any,
) -> None:
    if not _cgroups():
        pytest.skip("no cgroup of its own can be made for a run here (memory limited per process)")
    create(db, memory_mb=256, time_limit_s=60)
    token = auth(db, "ada")["Authorization"].removeprefix("Bearer ")
    hog = tmp_path / "hog.zip"
    hog.write_bytes(program(MEMORY))
    failed = podium("submit", "--server", server, "--task", TASK, "--token", token, "--wait", str(hog))
    message = "Your program failed: it used more than 256 MB of memory (all its processes together) and was stopped."
    assert failed.exit_code == 1, failed.output
    assert re.match(r"submission (\d+) to svident-code/detection/test: failed\n", failed.stdout), failed.stdout
    assert f"  {message}\n" in failed.stdout
    submission = re.match(r"submission (\d+)", failed.stdout).group(1)  # type: ignore[union-attr]
    with httpx.Client(base_url=server, timeout=30) as browser:
        form = browser.get("/login")
        csrf = re.search(r'name="csrf_token" value="([^"]+)"', form.text).group(1)  # type: ignore[union-attr]
        browser.post("/login", data={"csrf_token": csrf, "name": "ada", "password": PASSWORD})
        page = browser.get(f"/submissions/{submission}").text
    assert html.escape(message) in page, page


ROOT = Path(__file__).resolve().parents[2]
#: A program for a classification phase: a keyword rule, written as the generic scorer reads a TSV.
CLASSIFY = """\
    import csv, sys
    from pathlib import Path
    rows = list(csv.DictReader(open(Path(sys.argv[1]) / "test-inputs.tsv", encoding="utf-8"), delimiter="\\t"))
    with open(Path(sys.argv[2]) / "predictions.tsv", "w", encoding="utf-8") as out:
        out.write("id\\tlabel\\n")
        for row in rows:
            text = row["text"].lower()
            label = "negative" if "returned" in text or "broke" in text else "positive" if "love" in text else "neutral"
            out.write(f"{row['id']}\\t{label}\\n")
    """


def test_a_code_phase_of_a_generic_scorer_scores_the_programs_output_as_the_same_file_uploaded(
    db: Database,
    server: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    bundle = tmp_path / "bundle"
    shutil.copytree(ROOT / "examples" / "classification", bundle)
    document = yaml.safe_load((bundle / "competition.yaml").read_text(encoding="utf-8"))
    document["slug"], document["participation"] = "classification-code", "open"
    phase = document["tasks"][0]["phases"][0]
    phase["public_files"] = []  # the test inputs are hidden: only the programs read them
    phase["code"] = {"inputs": [{"path": "data/test-inputs.tsv"}], "output": "predictions.tsv", "time_limit_s": 60}
    (bundle / "competition.yaml").write_text(yaml.safe_dump(document), encoding="utf-8")
    with db.session() as session:
        make_user(session, "olga", organizer=True)
        make_user(session, "ada")
        catalog.create_competition(session, replace(load_bundle(bundle), organizers=("olga",)))
        catalog.create_competition(session, load_bundle(ROOT / "examples" / "classification"))
        session.commit()
    token = auth(db, "ada")["Authorization"].removeprefix("Bearer ")
    code = tmp_path / "program.zip"
    code.write_bytes(zipped({"predict.py": CLASSIFY}))
    args = ("--server", server, "--token", token, "--wait", "--json")
    ran = podium("submit", *args, "--task", "classification-code/sentiment/test", str(code))
    assert ran.exit_code == 0, ran.output
    body = json.loads(ran.stdout)
    assert (body["status"], body["code_run"]["stage"]) == ("scored", "scored")
    # The same predictions, made here and uploaded as a file to the phase of the same gold that runs no code.
    inputs = tmp_path / "in"
    inputs.mkdir()
    shutil.copy(ROOT / "examples" / "classification" / "data" / "test-inputs.tsv", inputs)
    subprocess.run([sys.executable, "-c", textwrap.dedent(CLASSIFY), str(inputs), str(tmp_path)], check=True)
    uploaded = podium(
        "submit", *args, "--task", "classification-example/sentiment/test", str(tmp_path / "predictions.tsv")
    )
    assert uploaded.exit_code == 0, uploaded.output
    assert body["metrics"] == json.loads(uploaded.stdout)["metrics"], body["metrics"]
    assert 0 < body["metrics"]["f1"] < 1, body["metrics"]


def check_script_step(heading: str) -> str:
    """The Python that docker/check.sh runs for the step under ``heading`` (its first here-document)."""
    script = (ROOT / "docker" / "check.sh").read_text(encoding="utf-8")
    step = script.split(heading, 1)[1]
    return step.split("<<'PY'\n", 1)[1].split("\nPY\n", 1)[0]


def test_the_compose_checks_code_submission_step_scores_the_demos_starting_kit_on_a_running_server(
    db: Database,
    server: str,  # noqa: F811
) -> None:
    seeded = podium("demo", "--no-baselines", db=db)
    assert seeded.exit_code == 0, seeded.output
    token = re.search(r"user demo-participant +password \S+ +token (\S+)", seeded.stdout).group(1)  # type: ignore[union-attr]
    step = check_script_step("# --- a code submission, run by the baseline worker")
    done = subprocess.run(
        [sys.executable, "-c", step],
        cwd=ROOT,
        env={"PODIUM_URL": server, "TOKEN": token, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.match(r"code submission \d+: scored \{'f1': 0\.\d+", done.stdout), done.stdout
    assert "run: stage scored, exit 0," in done.stdout
