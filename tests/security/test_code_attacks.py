"""Attacks run as code submissions: a team's program, run by the server in the sandbox on the hidden inputs,
tries to reach the network, another team's files, the server's secrets, to outlive its run, and to hold the
server up. Each program writes what it got into its predictions (a "1" for every sentence when it got
anything), so the attacker getting nothing reads as the program scoring exactly like the all-zero one; the
organizers read its log, which says what it found; and the server goes on scoring afterwards.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.main import create_app
from app.services.bundles.loader import load_bundle
from app.services.competitions import catalog
from app.storage.db import Database
from tests.app.builders import make_user
from tests.app.test_code_runs import ALL_ZERO, EXAMPLE, PHASE, create, program, pytestmark, send
from tests.app.web.test_api import auth

__all__ = ["pytestmark"]

#: The end of every attack: "1" for every sentence when it got anything, else the all-zero predictions.
VERDICT = """\
    print(json.dumps(got, sort_keys=True))
    json.dump({u: "1" if got else "0" for u in uuids}, (output / "predictions.json").open("w"))
    """


def attack(body: str) -> bytes:
    return program(body + VERDICT)


@pytest.fixture
def secret() -> str:
    return f"podium-secret-{uuid.uuid4().hex}"


@pytest.fixture
def client(settings: Settings, secret: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    """The server, its secret key known to the test and in the server process's environment too."""
    monkeypatch.setenv("PODIUM_SECRET_KEY", secret)
    with TestClient(create_app(settings.model_copy(update={"secret_key": secret}))) as test_client:
        yield test_client


def organizer_log(db: Database, client: TestClient, submission_id: int) -> str:
    shown = client.get(f"/api/v1/submissions/{submission_id}", headers=auth(db, "olga")).json()
    return str(shown["code_run"]["stdout"])


def scores_like_all_zero(db: Database, client: TestClient, attacker: dict[str, object]) -> None:
    zero = send(client, auth(db, "olga"), program(ALL_ZERO))  # the organizer's own all-zero run, for the figures
    assert attacker["status"] == zero["status"] == "scored", attacker
    assert attacker["metrics"] == zero["metrics"]


class Answering:
    """A port on the host that answers every connection with a marker, as the server's own port would."""

    def __init__(self) -> None:
        self.marker = f"host-answered-{uuid.uuid4().hex}".encode()
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            with conn:
                conn.sendall(self.marker)


NETWORK = """\
    import socket
    got = {}
    for host, port in [("127.0.0.1", PORT), ("127.0.0.1", 5432), ("127.0.0.1", 6379), ("192.0.2.1", 80)]:
        try:
            with socket.create_connection((host, port), timeout=1) as s:
                got[f"{host}:{port}"] = s.recv(100).decode("utf-8", "replace") or "connected"
        except OSError as exc:
            print(f"{host}:{port} refused: {exc}")
    """


def test_a_program_reaches_no_port_of_the_host_nor_the_outside(db: Database, client: TestClient) -> None:
    create(db, time_limit_s=60)
    host = Answering()
    try:
        # The host's port really answers (here, outside the sandbox), as do PostgreSQL and Redis on this machine.
        with socket.create_connection(("127.0.0.1", host.port), timeout=5) as probe:
            assert probe.recv(100) == host.marker
        attacker = send(client, auth(db, "ada"), attack(NETWORK.replace("PORT", str(host.port))))
        assert host.accepted == 1  # the probe's connection only
    finally:
        host.sock.close()
    log = organizer_log(db, client, attacker["id"])
    assert log.splitlines()[-1] == "{}", log
    assert log.count(" refused: ") == 4
    scores_like_all_zero(db, client, attacker)


LEAVE = (
    """\
    left = []
    for place in ["/tmp", "/output", ".", "/app", "/app/program", "/input", "/dev/shm", "/var/tmp", "/",
                  os.path.expanduser("~")]:
        try:
            Path(place, "MARKER").write_text("left by another team")
            left.append(place)
        except OSError:
            pass
    print("left in", left)
    """
    + ALL_ZERO
)

SEARCH = """\
    got = []
    for folder, dirs, files in os.walk("/"):
        dirs[:] = [d for d in dirs if os.path.join(folder, d) not in ("/proc", "/sys", "/usr")]
        got += [os.path.join(folder, name) for name in files if name == "MARKER"]
    """


def test_a_program_finds_nothing_another_teams_program_left(db: Database, client: TestClient) -> None:
    create(db, time_limit_s=60)
    with db.session() as session:
        make_user(session, "bob")
        session.commit()
    marker = f"left-{uuid.uuid4().hex}"
    first = send(client, auth(db, "ada"), program(LEAVE.replace("MARKER", marker)))
    assert first["status"] == "scored", first
    assert "/tmp" in organizer_log(db, client, first["id"])  # it did leave files where it could
    second = send(client, auth(db, "bob"), attack(SEARCH.replace("MARKER", marker)))
    assert organizer_log(db, client, second["id"]).splitlines()[-1] == "[]"
    scores_like_all_zero(db, client, second)


SECRETS = """\
    needles = [bytes.fromhex(h).decode() for h in NEEDLES]  # spelled in hex: not found in this file itself
    got = []
    def look(where, text):
        got.extend(f"{where}: {n}" for n in needles if n in text)
    look("env", json.dumps(dict(os.environ)))
    for pid in os.listdir("/proc"):
        for name in ("cmdline", "environ"):
            try:
                look(f"/proc/{pid}/{name}", open(f"/proc/{pid}/{name}", "rb").read().decode("utf-8", "replace"))
            except OSError:
                pass
    for path in needles[1:]:
        if os.path.exists(path):
            got.append(f"exists: {path}")
    for folder, dirs, files in os.walk("/"):
        dirs[:] = [d for d in dirs if os.path.join(folder, d) not in ("/proc", "/sys", "/usr", "/runtime", "/dev")]
        for name in files:
            try:
                path = os.path.join(folder, name)
                look(path, open(path, "rb").read(5_000_000).decode("latin-1"))
            except OSError:
                pass
    """


def test_a_program_reads_none_of_the_servers_secrets_nor_its_database(
    db: Database, client: TestClient, settings: Settings, secret: str
) -> None:
    create(db, time_limit_s=120)
    # The SQLite file's path, or PostgreSQL's URL with this run's own database name (the server's folder,
    # /var/lib/postgresql, is no secret: /etc/passwd names it as the postgres user's home on any such host).
    database = db.url.split("///", 1)[1] if db.url.startswith("sqlite") else db.url
    needles = [secret, database, str(settings.data_dir)]
    body = SECRETS.replace("NEEDLES", repr([n.encode().hex() for n in needles]))
    attacker = send(client, auth(db, "ada"), attack(body))
    assert organizer_log(db, client, attacker["id"]).splitlines()[-1] == "[]"
    scores_like_all_zero(db, client, attacker)


LINGER = (
    """\
    import subprocess
    sleeper = [sys.executable, "-c", "import os, time\\nif os.fork(): os._exit(0)\\ntime.sleep(600)", "MARKER"]
    subprocess.Popen(["setsid", "nohup", *sleeper], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    subprocess.Popen(sleeper, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    import time
    time.sleep(1)  # the sleepers are running when the program exits
    mine = [p for p in os.listdir("/proc") if p.isdigit() and b"MARKER" in open(f"/proc/{p}/cmdline", "rb").read()]
    print(f"sleepers {len(mine)}")
    """
    + ALL_ZERO
)


def lingering(marker: str) -> list[str]:
    """The processes of this machine whose command line holds ``marker``."""
    found = []
    for pid in os.listdir("/proc"):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline:
            found.append(pid)
    return found


def test_a_program_leaves_no_process_behind_and_the_next_one_runs(db: Database, client: TestClient) -> None:
    create(db, time_limit_s=60)
    marker = f"linger-{uuid.uuid4().hex}"
    first = send(client, auth(db, "ada"), program(LINGER.replace("MARKER", marker)))
    assert first["status"] == "scored", first
    assert organizer_log(db, client, first["id"]) == "sleepers 2\n"  # both were running in the sandbox
    assert lingering(marker) == []
    assert send(client, auth(db, "ada"), program(ALL_ZERO))["status"] == "scored"


def _results_file() -> bytes:
    lines = (EXAMPLE / "data" / "test.tsv").read_text(encoding="utf-8").splitlines()
    column = lines[0].split("\t").index("uuid")
    return json.dumps({line.split("\t")[column]: "0" for line in lines[1:] if line}).encode()


def test_a_program_that_sleeps_forever_fails_at_its_limit_while_results_are_scored(
    db: Database, client: TestClient
) -> None:
    create(db, time_limit_s=8)
    with db.session() as session:
        spec = load_bundle(EXAMPLE.parent / "svident")
        catalog.create_competition(session, replace(spec, organizers=("olga",)))
        session.commit()
    ada = auth(db, "ada")
    files = {"file": ("program.zip", program("import time\nwhile True:\n    time.sleep(60)\n"), "application/zip")}
    sleeper = client.post(f"{PHASE}/submissions", headers=ada, files=files).json()
    shown = lambda i: client.get(f"/api/v1/submissions/{i}", headers=ada).json()  # noqa: E731
    while shown(sleeper["id"])["code_run"]["stage"] != "running":
        time.sleep(0.05)
    results = "/api/v1/competitions/svident/tasks/detection/phases/test/submissions"
    scored = []
    for _ in range(2):
        answer = client.post(results, headers=ada, files={"file": ("p.json", _results_file(), "application/json")})
        assert answer.status_code == 202, answer.text
        while (row := shown(answer.json()["id"]))["status"] not in ("scored", "failed"):
            time.sleep(0.05)
        scored.append(row["status"])
        assert shown(sleeper["id"])["status"] == "awaiting_run"  # the program is still running meanwhile
    assert scored == ["scored", "scored"]
    assert client.app.state.podium.queue.wait_idle(120)  # type: ignore[attr-defined]
    failed = shown(sleeper["id"])
    assert failed["status"] == "failed"
    assert failed["message"] == (
        "Your program failed: it ran longer than its time limit of 8 seconds and was stopped."
    ), failed["message"]
    assert failed["code_run"]["timed_out"] is True
