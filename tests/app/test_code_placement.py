"""Where a code run runs, through the server in one process: a run that needs a GPU on a server without one, and a
run on a server whose sandbox cannot run it, wait (never failed, charged once) and say why on the API and the
page, and the second runs once the operator repaired the sandbox; where no cgroup can be made for a run, a program
waits unless the operator opted out; a phase that allows the CPU runs there; the
team reads its run's exit status, wall time and peak memory; the operator's GPU cap refuses a bundle by key path;
and, where the machine has an NVIDIA GPU, a program runs on it."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from typer.testing import CliRunner

from app.cli import app
from app.config import Settings
from app.main import create_app
from app.services.bundles.loader import load_bundle
from app.services.bundles.spec import BundleError
from app.services.code.settings import CodeCaps, caps_of
from app.services.competitions import catalog
from app.storage.db import Database
from app.storage.models import CodeRun
from tests.app.test_cli_baselines import server  # noqa: F401 (the fixture: the app served by uvicorn)
from tests.app.test_code_runs import ALL_ZERO, EXAMPLE, PHASE, _cgroups, create, program, used
from tests.app.web.test_api import auth
from tests.app.web.test_pages import login

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed here")


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """The tests' settings on a worker that gives runs no GPU, whatever the machine has."""
    return settings.model_copy(update={"gpu_devices": "none"})


def serve(settings: Settings, **changes: Any) -> TestClient:
    return TestClient(create_app(settings.model_copy(update=changes)))


def upload(client: TestClient, headers: dict[str, str], data: bytes) -> dict[str, Any]:
    """Upload a program, let the pool do what it can, and read the submission back."""
    answer = client.post(
        f"{PHASE}/submissions", headers=headers, files={"file": ("program.zip", data, "application/zip")}
    )
    assert answer.status_code == 202, answer.text
    return settle(client, headers, answer.json()["id"])


def settle(client: TestClient, headers: dict[str, str], submission: int, *, sweep: bool = False) -> dict[str, Any]:
    pool = client.app.state.podium.queue  # type: ignore[attr-defined]
    assert pool.wait_idle(120)
    if sweep:  # what the sweeper does every PODIUM_SWEEP_SECONDS: the waiting run is sent again
        pool.sweep()
        assert pool.wait_idle(120)
    shown = client.get(f"/api/v1/submissions/{submission}", headers=headers).json()
    assert isinstance(shown, dict)
    return shown


def attempts(db: Database, submission: int) -> int:
    with db.session() as session:
        return int(session.scalar(select(CodeRun.attempts).where(CodeRun.submission_id == submission)) or 0)


@pytest.fixture
def gpuless(settings: Settings) -> Iterator[TestClient]:
    with serve(settings, gpu_devices="none") as client:
        yield client


def test_a_gpu_run_on_a_server_without_a_gpu_waits_and_says_why(db: Database, gpuless: TestClient) -> None:
    create(db, gpu=True)
    ada, olga = auth(db, "ada"), auth(db, "olga")
    waiting = upload(gpuless, ada, program(ALL_ZERO))
    for _ in range(2):  # sent again by the sweeper, taken, put back: still waiting, never failed
        assert (waiting["status"], waiting["message"], waiting["code_run"]["stage"]) == ("awaiting_run", "", "queued")
        assert waiting["code_run"]["waiting_for"] == "a GPU worker"
        assert attempts(db, waiting["id"]) == 0
        assert used(gpuless, ada) == 1  # counted once, and not given back
        waiting = settle(gpuless, ada, waiting["id"], sweep=True)
    told = gpuless.get(f"/api/v1/submissions/{waiting['id']}", headers=olga).json()["code_run"]["waiting_for"]
    assert told == "a GPU worker: this phase's programs need a GPU, and the worker that took it has none"
    login(gpuless, "ada")
    page = gpuless.get(f"/submissions/{waiting['id']}").text
    assert "Waiting for a GPU worker" in page and "waiting for its run" in page


@pytest.mark.skipif(os.path.exists("/dev/nvidia7"), reason="this machine has a GPU 7, the one the test names missing")
def test_a_gpu_the_operator_named_that_the_machine_lacks_is_why_a_run_waits(db: Database, settings: Settings) -> None:
    create(db, gpu=True)
    with serve(settings, gpu_devices="7") as client:  # no /dev/nvidia7 here
        waiting = upload(client, auth(db, "ada"), program(ALL_ZERO))
        told = client.get(f"/api/v1/submissions/{waiting['id']}", headers=auth(db, "olga")).json()["code_run"]
    assert waiting["code_run"]["waiting_for"] == "a GPU worker"
    assert told["waiting_for"] == "a GPU worker: no GPU device /dev/nvidia7 on this machine (PODIUM_GPU_DEVICES=7)"


def test_podium_submit_wait_says_what_a_waiting_run_waits_for(db: Database, server: str) -> None:  # noqa: F811
    create(db, gpu=True)
    program_zip = Path(tempfile.mkdtemp()) / "program.zip"
    program_zip.write_bytes(program(ALL_ZERO))
    token = auth(db, "ada")["Authorization"].removeprefix("Bearer ")
    args = ["submit", "--server", server, "--task", "svident-code/detection/test", "--token", token]
    waited = CliRunner().invoke(app, [*args, "--wait", "--timeout", "3", str(program_zip)])
    assert waited.exit_code == 2, waited.output
    assert waited.stderr.strip().endswith(
        "is still awaiting_run after 3 s: its program's run waits for a GPU worker"
    ), waited.stderr


def test_a_gpu_phase_that_allows_the_cpu_runs_there(db: Database, gpuless: TestClient) -> None:
    create(db, gpu=True, gpu_fallback_cpu=True)
    scored = upload(gpuless, auth(db, "ada"), program(ALL_ZERO))
    assert scored["status"] == "scored", scored
    assert (scored["code_run"]["device"], scored["code_run"]["waiting_for"]) == (None, None)


@pytest.mark.skipif(os.geteuid() != 0, reason="only a root runner gives programs a user of their own")
def test_a_run_waits_while_the_sandbox_cannot_run_it_and_runs_once_the_operator_repaired_it(
    db: Database, settings: Settings, tmp_path: Path
) -> None:
    # The operator's runtime holds a file the sandbox's user cannot read: no program can run with it.
    env = tmp_path / "runtime"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    private = next((env / "lib").glob("python3*/site-packages")) / "private_module.py"
    private.write_text("x = 1\n")
    private.chmod(0o600)
    create(db)
    ada, olga = auth(db, "ada"), auth(db, "olga")
    with serve(settings, program_runtimes=f'{{"*": "{env}"}}') as client:
        waiting = upload(client, ada, program(ALL_ZERO))
        assert (waiting["status"], waiting["code_run"]["stage"]) == ("awaiting_run", "queued")
        assert waiting["code_run"]["waiting_for"] == "a worker that can run code"
        told = client.get(f"/api/v1/submissions/{waiting['id']}", headers=olga).json()["code_run"]["waiting_for"]
        assert told.startswith("a worker that can run code: ") and "private_module.py (mode 0600)" in told, told
        login(client, "ada")
        assert "Waiting for a worker that can run code" in client.get(f"/submissions/{waiting['id']}").text
        assert (attempts(db, waiting["id"]), used(client, ada)) == (0, 1)
        private.chmod(0o644)  # repaired: the next sweep sends the run again, and it runs
        scored = settle(client, ada, waiting["id"], sweep=True)
        assert scored["status"] == "scored", scored
        assert (scored["code_run"]["waiting_for"], attempts(db, waiting["id"]), used(client, ada)) == (None, 1, 1)


HUNGRY = """\
    held = bytearray(96 * 2**20)
    for i in range(0, len(held), 4096):
        held[i] = 1
    """


@pytest.mark.skipif(not _cgroups(), reason="no cgroup of its own can be made for a run here (no peak memory)")
def test_the_team_reads_its_runs_exit_status_wall_time_and_peak_memory(db: Database, gpuless: TestClient) -> None:
    create(db)
    ada = auth(db, "ada")
    scored = upload(gpuless, ada, program(HUNGRY + ALL_ZERO))
    run = scored["code_run"]
    assert (scored["status"], run["exit_code"], run["logs_shown"], run["stdout"]) == ("scored", 0, False, None)
    assert run["wall_seconds"] > 0
    assert 96 * 2**20 <= run["peak_memory_bytes"] < 1024 * 2**20
    login(gpuless, "ada")
    page = gpuless.get(f"/submissions/{scored['id']}").text
    assert "Exit status: 0" in page and f"Wall time: {run['wall_seconds']:.1f} s" in page
    assert f"Peak memory: {run['peak_memory_bytes'] / 1048576:.1f} MB" in page


@pytest.mark.parametrize("show_logs", [False, True])
def test_the_team_reads_the_end_of_its_programs_logs_only_where_the_phase_shows_them(
    db: Database, gpuless: TestClient, show_logs: bool
) -> None:
    create(db, show_logs=show_logs)
    chatty = 'sys.stdout.write("x" * 100_000 + "the end")\n'
    scored = upload(gpuless, auth(db, "ada"), program(chatty + ALL_ZERO))
    run = scored["code_run"]
    if not show_logs:
        assert (run["stdout"], run["stdout_bytes"], run["stderr_bytes"]) == (None, None, None)
        olga = gpuless.get(f"/api/v1/submissions/{scored['id']}", headers=auth(db, "olga")).json()["code_run"]
        assert olga["stdout_bytes"] == 100_007 and olga["stdout"].endswith("the end")  # organizers always
        return
    assert run["stdout_bytes"] == 100_007 and run["stderr_bytes"] == 0
    assert len(run["stdout"]) == 64 * 1024 and run["stdout"].endswith("the end")  # its end, capped
    login(gpuless, "ada")
    page = gpuless.get(f"/submissions/{scored['id']}").text
    assert "The last 65536 characters of 100007 bytes." in page


def test_a_phase_that_needs_a_gpu_is_refused_where_the_operator_allows_none(db: Database, settings: Settings) -> None:
    caps = caps_of(settings.model_copy(update={"code_allow_gpu": False}))
    assert caps == replace(CodeCaps(settings.code_max_time_s, settings.code_max_memory_mb), allow_gpu=False)
    spec = load_bundle(EXAMPLE)
    task = spec.tasks[0]
    assert task.phases[0].code is not None

    def with_code(**code: Any) -> Any:
        phase = replace(task.phases[0], code=replace(task.phases[0].code, **code))
        return replace(spec, tasks=(replace(task, phases=(phase,)),))

    with db.session() as session, pytest.raises(BundleError) as refused:
        catalog.create_competition(session, with_code(gpu=True), code_caps=caps)
    assert [where for where, _ in refused.value.problems] == ["tasks[0].phases[0].code.gpu"]
    assert "PODIUM_CODE_ALLOW_GPU" in refused.value.problems[0][1]
    with db.session() as session:  # a phase whose programs may run on the CPU is taken, and runs there
        catalog.create_competition(session, with_code(gpu=True, gpu_fallback_cpu=True), code_caps=caps)


def test_the_operator_names_the_gpus_by_minor_number_or_none() -> None:
    assert Settings(gpu_devices="0, 2").gpu_devices == "0, 2" and Settings(gpu_devices="none").gpu_devices == "none"
    with pytest.raises(ValueError, match="PODIUM_GPU_DEVICES: name GPUs by their minor numbers"):
        Settings(gpu_devices="cuda:0")


CUDA = """\
    import ctypes, glob
    print("visible", os.environ.get("CUDA_VISIBLE_DEVICES"))
    print("nodes", sorted(glob.glob("/dev/nvidia*")))
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        print("no libcuda")
    else:
        count = ctypes.c_int(-1)
        print("init", cuda.cuInit(0), "count", cuda.cuDeviceGetCount(ctypes.byref(count)), count.value)
    """


@pytest.mark.skipif(not os.path.exists("/dev/nvidia0"), reason="this machine has no NVIDIA GPU (no /dev/nvidia0)")
def test_a_program_runs_on_the_gpu_its_worker_gives_it(db: Database, settings: Settings) -> None:
    create(db, gpu=True, show_logs=True, memory_mb=8192)
    with serve(settings, gpu_devices="0") as client:
        scored = upload(client, auth(db, "ada"), program(CUDA + ALL_ZERO))
    run = scored["code_run"]
    assert (scored["status"], run["device"]) == ("scored", "GPU 0"), scored
    lines = dict(line.split(" ", 1) for line in run["stdout"].splitlines())
    assert lines["visible"] not in ("None", ""), lines
    nodes = ast.literal_eval(lines["nodes"])
    assert "/dev/nvidia0" in nodes and "/dev/nvidiactl" in nodes
    assert not [n for n in nodes if n[len("/dev/nvidia") :].isdigit() and n != "/dev/nvidia0"]  # no other GPU
    if lines.get("no") != "libcuda":  # the driver's library: CUDA starts and counts the one GPU
        assert lines["init"].split() == ["0", "count", "0", "1"], lines


@pytest.mark.parametrize("allowed", [False, True])
def test_where_no_cgroup_can_be_made_a_program_waits_unless_the_operator_allows_it(
    db: Database, settings: Settings, monkeypatch: pytest.MonkeyPatch, allowed: bool
) -> None:
    from sandbox import cgroups

    monkeypatch.setattr(cgroups, "_mounts", list)  # a worker whose mount table has no cgroup file system
    create(db)
    ada = auth(db, "ada")
    with serve(settings, sandbox_allow_no_cgroup=allowed) as client:
        shown = upload(client, ada, program(ALL_ZERO))
        if allowed:  # the operator opted out: limited per process only, and it runs
            assert (shown["status"], shown["code_run"]["stage"]) == ("scored", "scored"), shown
            return
        assert (shown["status"], shown["code_run"]["waiting_for"]) == ("awaiting_run", "a worker that can run code")
        told = client.get(f"/api/v1/submissions/{shown['id']}", headers=auth(db, "olga")).json()["code_run"]
        assert "PODIUM_SANDBOX_ALLOW_NO_CGROUP=true" in told["waiting_for"], told["waiting_for"]
        assert (attempts(db, shown["id"]), used(client, ada)) == (0, 1)  # nothing ran; charged once, as uploaded
