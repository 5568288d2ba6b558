"""What the workers' containers need for bubblewrap's sandbox, checked without a Docker engine: bubblewrap in
the image, the seccomp profile and ``/proc`` options of every worker service in ``compose.yaml`` (Docker's
default profile plus exactly the calls bwrap makes; no privilege, no capability), and the worker's line at
start saying whether scoring programs can run (``docker/entrypoint.py``). ``docker/check.sh`` runs a scoring
program in the compose stack for real (``docker/README.md`` says why each option is there)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from typing import Any

import pytest

from tests.app.test_deployment import RUNTIME_STAGE, SERVICES, entrypoint
from tests.conftest import ROOT

PROFILE_PATH = "docker/seccomp-sandbox.json"
PROFILE: dict[str, Any] = json.loads((ROOT / PROFILE_PATH).read_text(encoding="utf-8"))
#: What bwrap calls to build the sandbox, each one found necessary (without it bwrap stops).
BWRAP_CALLS = {"clone", "unshare", "mount", "umount2", "pivot_root"}
#: Calls Docker's default profile allows only with a capability, and that the sandbox does not need.
STILL_FORBIDDEN = {
    "setns",
    "bpf",
    "init_module",
    "finit_module",
    "kexec_load",
    "open_by_handle_at",
    "syslog",
    "perf_event_open",
    "fsopen",
    "fsmount",
    "move_mount",
    "open_tree",
    "sethostname",
    "reboot",
}
WORKERS = [name for name, service in SERVICES.items() if (service.get("command") or [])[:2] == ["podium", "worker"]]
CHECK = (ROOT / "docker" / "check.sh").read_text(encoding="utf-8")


def unconditional(profile: dict[str, Any]) -> set[str]:
    """The calls a profile allows to every container: no argument filter, no capability or kernel condition."""
    return {
        name
        for rule in profile["syscalls"]
        if rule["action"] == "SCMP_ACT_ALLOW"
        and not rule.get("args")
        and not rule.get("includes")
        and not rule.get("excludes")
        for name in rule["names"]
    }


def test_the_runtime_image_installs_bubblewrap_as_root_before_it_drops_to_its_user() -> None:
    install = re.search(r"^RUN apt-get update \\\n(?: .*\n)*? && apt-get install .*\bbubblewrap\b", RUNTIME_STAGE, re.M)
    assert install is not None
    assert install.start() < RUNTIME_STAGE.index("USER podium")
    assert "rm -rf /var/lib/apt/lists/*" in RUNTIME_STAGE[install.start() :]


def test_every_worker_service_runs_with_the_sandbox_profile_and_an_unmasked_proc() -> None:
    assert sorted(WORKERS) == ["baseline-worker", "gpu-worker", "worker"]
    for name in WORKERS:
        options = SERVICES[name].get("security_opt") or []
        assert f"seccomp={PROFILE_PATH}" in options, name
        assert "systempaths=unconfined" in options, name
        assert "no-new-privileges:true" in options, name
        assert (
            SERVICES[name]["environment"]["PODIUM_SANDBOX_ALLOW_NO_CGROUP"]
            == "${PODIUM_SANDBOX_ALLOW_NO_CGROUP:-false}"
        )
    for name in set(SERVICES) - set(WORKERS):  # the web tier and the migrations run no program
        assert "security_opt" not in SERVICES[name], name


def test_no_service_is_privileged_or_given_a_capability_or_unconfined() -> None:
    for name, service in SERVICES.items():
        assert not service.get("privileged") and not service.get("cap_add"), name
        options = " ".join(service.get("security_opt") or [])
        assert "seccomp=unconfined" not in options and "seccomp:unconfined" not in options, name
        assert "apparmor" not in options, name
        assert service.get("user") in (None, "10001", "podium"), name  # the image's uid 10001, never root


def test_the_profile_is_dockers_default_plus_the_calls_bwrap_makes() -> None:
    assert PROFILE["defaultAction"] == "SCMP_ACT_ERRNO"
    added = [rule for rule in PROFILE["syscalls"] if "Podium" in rule.get("comment", "")]
    assert len(added) == 1 and set(added[0]["names"]) == BWRAP_CALLS
    assert added[0]["action"] == "SCMP_ACT_ALLOW" and not added[0]["args"] and not added[0]["includes"]
    allowed = unconditional(PROFILE)
    assert allowed >= BWRAP_CALLS
    assert not allowed & STILL_FORBIDDEN
    # Docker's own list is kept whole: what every program needs, and the capability-bound rules as they were.
    assert {"read", "write", "execve", "seccomp", "prctl", "memfd_create", "pidfd_open"} <= allowed
    by_cap = {cap for rule in PROFILE["syscalls"] for cap in rule.get("includes", {}).get("caps", [])}
    assert {"CAP_SYS_ADMIN", "CAP_SYS_PTRACE", "CAP_SYS_MODULE"} <= by_cap
    without = {"syscalls": [rule for rule in PROFILE["syscalls"] if rule is not added[0]]}
    assert not unconditional(without) & BWRAP_CALLS  # none of them was allowed before the entry


def test_a_worker_says_at_start_whether_programs_can_run() -> None:
    assert entrypoint.subcommand(["podium", "worker", "--queues", "scoring"]) == "worker"
    assert entrypoint.subcommand(["python", "-m", "app.cli", "serve"]) == "serve"
    assert entrypoint.subcommand(["celery"]) is None
    said = entrypoint.sandbox_report({"PODIUM_PROGRAM_SANDBOX": "none"})
    assert said.startswith("sandbox: PODIUM_PROGRAM_SANDBOX=none")


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed here")
def test_the_worker_line_on_a_machine_where_the_sandbox_runs() -> None:
    said = entrypoint.sandbox_report({"PODIUM_SANDBOX_ALLOW_NO_CGROUP": "true"})
    assert said.startswith("sandbox: ready (bubblewrap; "), said


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed here")
def test_the_entry_point_says_it_before_the_worker_starts_and_not_for_its_health_check() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PODIUM_SANDBOX_ALLOW_NO_CGROUP": "true"}
    env.pop("PODIUM_PROGRAM_SANDBOX", None)
    script = str(ROOT / "docker" / "entrypoint.py")
    # echo stands in for the worker: the entry point checks, then runs the command in its place.
    started = subprocess.run(
        [sys.executable, script, "echo", "podium", "worker"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert started.stderr.startswith("sandbox: ready (bubblewrap; "), started.stderr
    assert started.stdout == "podium worker\n"
    ping = subprocess.run(
        [sys.executable, script, "echo", "podium", "worker", "--ping"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert (ping.stdout, ping.stderr) == ("podium worker --ping\n", "")


def test_the_end_to_end_check_scores_a_program_phase_in_the_stack() -> None:
    assert "competition_v2_multi_task.zip" in CHECK
    assert '"/api/v1/competitions", organizer' in CHECK
    assert '== {"accuracy": 1.0, "duration": 2.5}' in CHECK
    assert '"sandbox: ready"*)' in CHECK  # each worker's line at start
    # Compose v1 cannot unmask /proc: the check starts the workers itself, with every option compose.yaml gives.
    assert '[f"--security-opt={option}" for option in service.get("security_opt", [])]' in CHECK
