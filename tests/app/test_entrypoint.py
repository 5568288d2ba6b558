"""Secrets and the image's entry point: the key and passwords come from the environment (.env), never from
the repository, the image or compose.yaml; docker/entrypoint.py checks before it runs the command (a web
tier's secret key, a data folder the image's user can write), each refusal one line and exit 2."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.app.test_deployment import COMPOSE_TEXT, DOCKERFILE, RUNTIME_STAGE, SERVICES, entrypoint
from tests.conftest import ROOT


def test_the_secret_key_file_stays_out_of_git_and_the_image() -> None:
    assert ".env" in (ROOT / ".gitignore").read_text(encoding="utf-8").split()
    assert ".env" in (ROOT / ".dockerignore").read_text(encoding="utf-8").split()


def test_compose_leaves_the_secrets_to_the_environment() -> None:
    # No variable is required by compose.yaml itself (`${X:?}` stops every command, `down` too);
    # the entry point stops the web tier without a key.
    assert ":?" not in COMPOSE_TEXT
    env = SERVICES["web"]["environment"]
    assert env["PODIUM_SECRET_KEY"] == "${PODIUM_SECRET_KEY:-}"
    # PostgreSQL's password comes from .env, the same in the server and the URL; none is written here.
    password = SERVICES["postgres"]["environment"]["POSTGRES_PASSWORD"]
    assert password == "${PODIUM_DB_PASSWORD:-}"
    assert env["PODIUM_DATABASE_URL"].startswith(f"postgresql+psycopg://podium:{password}@postgres:5432/")
    # Published on this host only unless PODIUM_BIND says otherwise.
    assert SERVICES["web"]["ports"] == ["${PODIUM_BIND:-127.0.0.1}:${PODIUM_PORT:-8000}:8000"]
    # .env.example names every variable compose.yaml reads.
    example = (ROOT / ".env.example").read_text(encoding="utf-8")
    named = set(re.findall(r"^([A-Z_]+)=", example, re.MULTILINE))
    assert set(re.findall(r"\$\{([A-Z_]+)", COMPOSE_TEXT)) == named
    assert re.search(r"^PODIUM_SECRET_KEY=$", example, re.MULTILINE)  # shipped empty: no shared default key
    assert re.search(r"^PODIUM_DB_PASSWORD=$", example, re.MULTILINE)


def test_the_image_checks_before_it_runs_the_command() -> None:
    assert 'ENTRYPOINT ["python", "/srv/podium/docker/entrypoint.py"]' in DOCKERFILE
    assert re.search(r"^COPY .*docker/entrypoint\.py .*\./docker/$", RUNTIME_STAGE, re.MULTILINE)
    assert f"VOLUME {entrypoint.DEFAULT_DATA}\n" in RUNTIME_STAGE  # the folder it checks
    assert entrypoint.serves(["podium", "serve", "--host", "0.0.0.0"])
    assert entrypoint.serves(["/opt/venv/bin/python", "-m", "app.cli", "serve"])
    assert not entrypoint.serves(["podium", "worker", "--queues", "scoring"])
    assert not entrypoint.serves(["podium", "db", "upgrade"])
    assert not entrypoint.serves(["bash"])


def run_entrypoint(
    argv: list[str],
    env: dict[str, str],
    python: str = sys.executable,
    user: int | None = None,
    script: Path = ROOT / "docker" / "entrypoint.py",
) -> subprocess.CompletedProcess[str]:
    path = f"{Path(sys.executable).parent}:/usr/bin:/bin"
    return subprocess.run(
        [python, str(script), *argv],
        env={"PATH": path, **env},
        cwd=script.parent,
        capture_output=True,
        text=True,
        user=user,
        timeout=120,
    )


def test_the_web_tier_needs_a_secret_key_unless_throwaway(tmp_path: Path) -> None:
    data = {"PODIUM_DATA_DIR": str(tmp_path)}
    refused = run_entrypoint(["podium", "serve", "--help"], data)
    assert refused.returncode == 2
    assert refused.stdout == ""
    assert refused.stderr.startswith("PODIUM_SECRET_KEY is not set: the web tier needs it")
    assert len(refused.stderr.strip().splitlines()) == 1
    assert "PODIUM_THROWAWAY=1" in refused.stderr
    # With a key, or with the explicit opt-in, the command runs (here: its --help).
    for extra in ({"PODIUM_SECRET_KEY": "k" * 64}, {"PODIUM_THROWAWAY": "1"}):
        started = run_entrypoint(["podium", "serve", "--help"], {**data, **extra})
        assert started.returncode == 0, started.stderr
        assert "--no-migrate" in started.stdout
    # Other roles sign no cookies: a worker or a migration starts without a key.
    assert run_entrypoint(["podium", "db", "--help"], data).returncode == 0
    assert run_entrypoint([], data).returncode == 2


@pytest.fixture
def open_tmp() -> Iterator[Path]:
    """A folder every user may enter (pytest's tmp_path is its owner's alone)."""
    folder = Path(tempfile.mkdtemp())
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


def test_a_data_folder_the_user_cannot_write_is_named_with_its_fix(open_tmp: Path) -> None:
    data = open_tmp / "var"
    data.mkdir(mode=0o755)
    script = ROOT / "docker" / "entrypoint.py"
    if os.getuid() == 0:  # root writes anywhere: run as nobody, with a Python every user may run
        python, user = shutil.which("python3", path="/usr/bin:/bin"), 65534
        if python is None:
            pytest.skip("running as root, and no system python3 that another user could run")
        # The entry point (standard library only) where that user can read it: the checkout may be in a folder
        # only its owner may enter.
        script = Path(shutil.copy(script, open_tmp / script.name))
    else:
        python, user = sys.executable, None
        data.chmod(0o555)
    env = {"PODIUM_DATA_DIR": str(data), "PODIUM_SECRET_KEY": "k" * 64}
    refused = run_entrypoint(["true"], env, python=python, user=user, script=script)
    assert refused.returncode == 2
    uid = user if user is not None else os.getuid()
    assert refused.stderr.strip() == (
        f"the data folder {data} is not writable by uid {uid}: "
        f"chown -R {uid} <the host folder mounted there>, or mount a named volume instead"
    )
    data.chmod(0o777)
    assert run_entrypoint(["true"], env, python=python, user=user, script=script).returncode == 0
