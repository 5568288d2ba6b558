"""``Dockerfile`` and ``compose.yaml`` (Docker does not run here): every ``podium`` command they run
exists with the options they give it, and the images and services are set up as the README says.
The same commands run for real in ``tests/app/distributed/test_commands.py``."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import yaml
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from app.cli import app
from app.worker.run import parse_queues
from tests.conftest import ROOT

DOCKERFILE = (ROOT / "Dockerfile").read_text(encoding="utf-8")
COMPOSE: dict[str, Any] = yaml.safe_load((ROOT / "compose.yaml").read_text(encoding="utf-8"))
SERVICES: dict[str, Any] = COMPOSE["services"]


def podium_commands() -> list[list[str]]:
    """Every ``podium ...`` command line in the two files (commands, health checks, the image's CMD)."""
    found = [json.loads(m) for m in re.findall(r"^(?:CMD|HEALTHCHECK.*CMD) (\[.*\])$", DOCKERFILE, re.MULTILINE)]
    for service in SERVICES.values():
        found.append(service.get("command") or [])
        found.append([part for part in service.get("healthcheck", {}).get("test", []) if part != "CMD"])
    return [command for command in found if command and command[0] == "podium"]


def test_the_files_run_the_commands_the_tests_run() -> None:
    assert podium_commands() == [
        ["podium", "serve", "--host", "0.0.0.0", "--port", "8000"],
        ["podium", "db", "upgrade"],
        ["podium", "serve", "--host", "0.0.0.0", "--port", "8000", "--no-migrate"],
        ["podium", "worker", "--queues", "scoring", "--concurrency", "2"],
        ["podium", "worker", "--ping"],
        ["podium", "worker", "--queues", "gpu"],
        ["podium", "worker", "--ping"],
    ]


@pytest.mark.parametrize("command", podium_commands(), ids=" ".join)
def test_every_command_and_option_exists(command: list[str]) -> None:
    # Options are parsed before --help acts, so an unknown one fails here.
    result = CliRunner().invoke(app, [*command[1:], "--help"])
    assert result.exit_code == 0, result.output
    if "--queues" in command:
        assert parse_queues(command[command.index("--queues") + 1])


def test_the_image_is_built_in_stages_and_runs_without_privileges() -> None:
    assert len(re.findall(r"^FROM ", DOCKERFILE, re.MULTILINE)) == 2
    users = re.findall(r"^USER (\S+)$", DOCKERFILE, re.MULTILINE)
    assert users and users[-1] not in ("root", "0")
    assert "http://127.0.0.1:8000/healthz" in DOCKERFILE


def test_the_health_check_paths_are_served(client: TestClient) -> None:
    assert [client.get(path).status_code for path in ("/healthz", "/readyz", "/metrics")] == [200, 200, 200]


def test_the_services_of_a_distributed_podium() -> None:
    assert set(SERVICES) == {"postgres", "redis", "migrate", "web", "worker", "gpu-worker"}
    env = SERVICES["web"]["environment"]
    assert env["PODIUM_DATABASE_URL"].startswith("postgresql+psycopg://")
    assert env["PODIUM_BROKER_URL"].startswith("redis://")
    for tier in ("web", "worker", "gpu-worker"):
        assert SERVICES[tier]["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}
        assert SERVICES[tier]["environment"] == env
    devices = SERVICES["gpu-worker"]["deploy"]["resources"]["reservations"]["devices"]
    assert devices == [{"driver": "nvidia", "count": 1, "capabilities": ["gpu"]}]
    assert SERVICES["gpu-worker"]["build"]["args"] == {"EXTRAS": "baselines"}
