"""Code run benchmark: how long a code submission waits for its program to start, and what the sandbox adds.

In the embedded mode (the server in this process, its pool's ``gpu`` lane running programs), N users each
upload the all-zero program of ``examples/svident-code`` one after the other, each once the one before it
has finished; the program prints the clock when it starts. "queue to start" runs from the upload's 202 to
that moment (median and p90). "sandbox overhead" is a whole ``run_code`` (unpack, sandbox, read the
predictions) of a program that exits at once, minus the same command run directly (median). Target: under
150 ms added.

    .venv/bin/python bench/code_run_bench.py [-n 20]
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, str(ROOT))

from fastapi.testclient import TestClient  # noqa: E402

from app.config import Settings  # noqa: E402
from app.main import create_app  # noqa: E402
from app.services.accounts import users  # noqa: E402
from app.services.bundles.loader import load_bundle  # noqa: E402
from app.services.code.sandboxed import Isolation, run_code  # noqa: E402
from app.services.code.settings import CodeSettings  # noqa: E402
from app.services.competitions import catalog  # noqa: E402
from app.storage.db import Database  # noqa: E402
from app.storage.migrate import upgrade  # noqa: E402
from bench.intake_bench import percentile  # noqa: E402
from sandbox import server_runtime  # noqa: E402

EXAMPLE = ROOT / "examples" / "svident-code"
PHASE = "/api/v1/competitions/svident-code/tasks/detection/phases/test"
STARTED = """\
import csv, json, sys, time
print(f"started {time.time()!r}", flush=True)
with open(sys.argv[1] + "/inputs.tsv", encoding="utf-8", newline="") as file:
    uuids = [row["uuid"] for row in csv.DictReader(file, delimiter="\\t")]
json.dump({u: "0" for u in uuids}, open(sys.argv[2] + "/predictions.json", "w"))
"""


def _zip(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return buffer.getvalue()


def queue_to_start(n: int, work: Path) -> list[float]:
    """Seconds from each upload's 202 to its program's start, ``n`` uploads one after the other."""
    database = Database(f"sqlite:///{work / 'podium.sqlite3'}")
    upgrade(database.engine)
    with database.session() as session:
        organizer = users.create_user(session, "bench-olga", "bench-password", is_organizer=True)
        catalog.create_competition(session, replace(load_bundle(EXAMPLE), organizers=(organizer.name,)))
        tokens = [
            users.issue_token(session, users.create_user(session, f"bench-{i}", "bench-password")) for i in range(n)
        ]
        admin = users.issue_token(session, organizer)
        session.commit()
    settings = Settings(database_url=database.url, data_dir=work / "data", workers=1, secret_key="code-run-bench")
    waits = []
    program = _zip({"predict.py": STARTED})
    with TestClient(create_app(settings)) as client:
        for token in tokens:
            answer = client.post(
                f"{PHASE}/submissions",
                headers={"Authorization": f"Bearer {token}"},
                files={"file": ("program.zip", program, "application/zip")},
            )
            accepted = time.time()
            assert answer.status_code == 202, answer.text
            assert client.app.state.podium.queue.wait_idle(120)  # type: ignore[attr-defined]
            shown = client.get(
                f"/api/v1/submissions/{answer.json()['id']}", headers={"Authorization": f"Bearer {admin}"}
            ).json()
            assert shown["status"] == "scored", shown
            started = float(shown["code_run"]["stdout"].split()[1])
            waits.append(started - accepted)
    database.dispose()
    return waits


def overhead(n: int) -> tuple[float, float]:
    """Median milliseconds of a whole ``run_code`` of a program that exits at once, and of its command run directly."""
    code = CodeSettings(command="exit 0", output=None, time_limit_s=60, memory_mb=512)
    program, inputs = _zip({"predict.py": ""}), _zip({"inputs.tsv": "uuid\n"})
    where = Isolation(runtime=server_runtime())
    boxed, direct = [], []
    for _ in range(n):
        start = time.perf_counter()
        run_code(program, inputs, code, where)
        boxed.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        subprocess.run(["/bin/sh", "-c", "exit 0"], check=True)
        direct.append((time.perf_counter() - start) * 1000)
    return statistics.median(boxed), statistics.median(direct)


def table(n: int) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        waits = queue_to_start(n, Path(tmp))
    boxed, direct = overhead(n)
    return [
        f"date -u: {time.strftime('%a %b %d %H:%M:%S UTC %Y', time.gmtime())}, nproc {os.cpu_count()}, "
        f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}",
        "| measure | runs | median | p90 |",
        "|---|---:|---:|---:|",
        f"| queue to start (upload 202 to program started) | {n} | {statistics.median(waits) * 1000:.0f} ms "
        f"| {percentile(waits, 0.9) * 1000:.0f} ms |",
        f"| code run of a program that exits at once | {n} | {boxed:.0f} ms | |",
        f"| the same command run directly | {n} | {direct:.0f} ms | |",
        f"| sandbox overhead (added) | {n} | {boxed - direct:.0f} ms | |",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=20, help="runs per measure")
    print("\n".join(table(parser.parse_args().n)))


if __name__ == "__main__":
    main()
