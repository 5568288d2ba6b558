"""End to end through the command line: create a competition, start ``podium serve`` as its own
process, submit with ``podium submit --wait``, and find on ``podium leaderboard --json`` the very
numbers that ``podium score`` gives offline for the same file.

The server, the upload and the leaderboard run as separate processes; the commands that only set
up or score offline run in this process (they would only add start-up time).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner, Result

from app.cli import app
from scorers import scorer_names
from tests.conftest import HTTP, ROOT, environment_without_settings

pytestmark = pytest.mark.slow

GOLD = (
    "sentence\tis_variable\tvariable\tresearch_data\tdoc_id\tuuid\tlang\n"
    "Trust in the police varies by region.\t1\tv-EX1_q1\tEX1\td1\tu1\ten\n"
    "This paper is organised as follows.\t0\t\t\td1\tu2\ten\n"
    "Respondents rated their life satisfaction.\t1\tv-EX1_q7\tEX1\td1\tu3\ten\n"
    "Das Vertrauen in Parlamente sinkt.\t1\tv-EX2_q3\tEX2\td2\tu4\tde\n"
    "Wir danken den Gutachtern.\t0\t\t\td2\tu5\tde\n"
    "Die Daten stammen aus dem Jahr 2018.\t0\t\t\td2\tu6\tde\n"
)
#: u3 and u6 are wrong, so neither document is perfect.
RUN = {"u1": "1", "u2": "0", "u3": "0", "u4": "1", "u5": "0", "u6": "1"}
BUNDLE = """
slug: e2e
title: End to end
tasks:
  - slug: detection
    title: Detection
    scorer: svident-detection
    phases:
      - slug: test
        title: Test
        gold: {path: gold.tsv}
"""


def podium(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``podium ARGS`` as its own process."""
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def podium_here(*args: str, env: dict[str, str], stdin: str | None = None) -> Result:
    """``podium ARGS`` in this process, on the server's database."""
    settings = {key: value for key, value in env.items() if key.startswith("PODIUM_")}
    return CliRunner().invoke(app, list(args), input=stdin, env=settings)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, dict[str, str]]]:
    env = environment_without_settings()
    env.update(PODIUM_DATABASE_URL=f"sqlite:///{tmp_path / 'podium.sqlite3'}", PODIUM_WORKERS="1")
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "serve", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if HTTP.get(f"{url}/api/v1/health", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"podium serve did not start:\n{process.communicate()[0]}")
            time.sleep(0.2)
        yield url, env
    finally:
        process.terminate()
        output, _ = process.communicate(timeout=30)
    assert "Podium is serving at http://127.0.0.1:" in output


@pytest.mark.skipif("svident-detection" not in scorer_names(), reason="the SV-Ident scorer is not registered")
def test_a_submission_through_the_server_scores_as_offline(tmp_path: Path, server: tuple[str, dict[str, str]]) -> None:
    url, env = server
    (tmp_path / "competition.yaml").write_text(BUNDLE)
    (tmp_path / "gold.tsv").write_text(GOLD)
    run = tmp_path / "run.json"
    run.write_text(json.dumps(RUN))

    created = podium_here("competition", "create", str(tmp_path / "competition.yaml"), env=env)
    assert created.exit_code == 0, created.stderr
    assert podium_here("user", "create", "ada", env=env, stdin="a long password\n").exit_code == 0
    token = podium_here("token", "create", "ada", env=env).stdout.strip()
    assert token.startswith("pod_")

    task = ["--server", url, "--task", "e2e/detection/test"]
    submitted = podium("submit", *task, "--token", token, "--wait", "--json", str(run), env=env)
    assert submitted.returncode == 0, submitted.stderr
    submission = json.loads(submitted.stdout)
    assert submission["status"] == "scored"

    board = json.loads(podium("leaderboard", *task, "--json", env=env).stdout)
    (entry,) = board["entries"]
    assert (entry["rank"], entry["team"], entry["baseline"]) == (1, "ada", False)

    offline = podium(
        "score",
        "--scorer",
        "svident-detection",
        "--gold",
        str(tmp_path / "gold.tsv"),
        "--submission",
        str(run),
        "--json",
        env=env,
    )
    assert offline.returncode == 0, offline.stderr
    expected = json.loads(offline.stdout)["metrics"]
    assert entry["metrics"] == expected == submission["metrics"]
    # By hand: d1 (en) gold 1,0,1 vs 1,0,0: label 1 has P = 1/1, R = 1/2, F1 = 2/3; label 0 has
    # P = 1/2, R = 1/1, F1 = 2/3; macro F1 = 2/3. d2 (de) is its mirror image: 2/3. Mean: 2/3.
    assert expected["f1"] == pytest.approx(2 / 3)
    # Read by people, every command shows the fractions in one unit, the pages' percent; --json keeps [0, 1].
    shown = podium("leaderboard", *task, env=env).stdout.splitlines()
    assert shown[0] == "e2e/detection/test: ranked by f1 (percent)"
    # Then the interval: two documents, each alone in its language, so it cannot vary: zero width, no interval,
    # and it rests on few units (the star, explained below the board).
    assert shown[1].split() == ["1", "66.67", "%", "[zero", "width]*", "group", "1", "ada"]
    assert shown[-3:] == [
        "  [low-high]: the 95% interval; one group: entries the data cannot tell apart",
        "  * fewer than 20 units: the interval says little",
        "  * or not a 95% interval (rough, zero width, a stratum too small): its label in --json",
    ]
    score = ["score", "--scorer", "svident-detection", "--gold", str(tmp_path / "gold.tsv"), "--submission", str(run)]
    report = podium(*score, env=env).stdout.splitlines()
    assert any(line.split()[:4] == ["*", "f1", "66.67", "%"] for line in report)

    refused = podium_here("submit", *task, "--token", token, str(tmp_path / "gold.tsv"), env=env)
    assert refused.exit_code == 2
    assert "refused (422 invalid_submission)" in refused.stderr
