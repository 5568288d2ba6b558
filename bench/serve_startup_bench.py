"""Start-up of the server and the worker: importing ``app.main`` and ``app.worker.run``, and ``podium serve`` on SQLite
until its health route answers, for one or more source trees measured in turn within each round.

Each round runs, for every tree (in an order that alternates between rounds, so that no tree always goes first):
``python -c pass``, ``python -c "import app.main"``, ``python -c "import app.worker.run"`` (wall, and CPU by
``os.wait4``), and ``python -m app.cli serve`` on the tree's own migrated SQLite database in the embedded mode (no
``PODIUM_`` setting but the database, the data folder and a secret key): wall from the process's start until
``GET /api/v1/health`` answers 200, and the server's CPU at that moment (``/proc/PID/stat``, 10 ms ticks). The
server binds its port before importing anything, so one request sent at once is answered as soon as it can be.
Each process runs with the tree as its working folder, so it imports that tree's ``app``. The table shows medians.

    .venv/bin/python bench/serve_startup_bench.py [--rounds 9] [--root TREE ...] [--markdown]
"""

from __future__ import annotations

import argparse
import http.client
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

from bench.startup_bench import timed  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def environment(data: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("PODIUM_")}
    env.update(
        PODIUM_DATABASE_URL=f"sqlite:///{data / 'podium.sqlite3'}",
        PODIUM_DATA_DIR=str(data),
        PODIUM_SECRET_KEY="serve-startup-bench-" * 3,
    )
    return env


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def cpu_of(pid: int) -> float:
    """User and system CPU seconds of a running process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def serve(cwd: Path, env: dict[str, str], log: Path) -> tuple[float, float]:
    """Wall seconds from starting ``podium serve`` until its health route answers 200, and its CPU then."""
    port = free_port()
    start = time.perf_counter()
    with log.open("wb") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "app.cli", "serve", "--port", str(port)],
            cwd=cwd,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    try:
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"podium serve exited: {log.read_text()[-1000:]}")
            try:
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                connection.request("GET", "/api/v1/health")
                status = connection.getresponse().status
                connection.close()
            except OSError:  # the port is not bound yet
                status = 0
            if status == 200:
                return time.perf_counter() - start, cpu_of(process.pid)
            time.sleep(0.005)
    finally:
        process.terminate()
        process.wait(timeout=60)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, action="append", help="a source tree (default: this one); repeatable")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args(argv)
    roots = [root.resolve() for root in args.root or [ROOT]]
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{os.cpu_count()} CPUs, load average {load}; {args.rounds} rounds", file=sys.stderr)
    measures = ("python -c pass", "import app.main", "import app.worker.run", "podium serve to /api/v1/health")
    runs: dict[tuple[Path, str], list[tuple[float, float]]] = {(r, m): [] for r in roots for m in measures}
    with tempfile.TemporaryDirectory() as scratch:
        folders = {root: Path(scratch) / str(i) for i, root in enumerate(roots)}
        for root, folder in folders.items():
            folder.mkdir()
            serve(root, environment(folder), folder / "serve.log")  # migrates, and compiles the tree's modules
        for number in range(args.rounds):
            for root in roots if number % 2 == 0 else roots[::-1]:
                env = environment(folders[root])
                runs[root, measures[0]].append(timed([sys.executable, "-c", "pass"], root, env))
                runs[root, measures[1]].append(timed([sys.executable, "-c", "import app.main"], root, env))
                runs[root, measures[2]].append(timed([sys.executable, "-c", "import app.worker.run"], root, env))
                runs[root, measures[3]].append(serve(root, env, folders[root] / "serve.log"))
            print(f"round {number + 1} done", file=sys.stderr, flush=True)
    head = ["tree", "measure", "wall (median)", "CPU (median)", "CPU (min-max)"]
    rows = []
    for root in roots:
        for measure in measures:
            walls = [w for w, _ in runs[root, measure]]
            cpus = [c for _, c in runs[root, measure]]
            rows.append(
                [
                    str(root),
                    measure,
                    f"{statistics.median(walls) * 1000:.0f} ms",
                    f"{statistics.median(cpus) * 1000:.0f} ms",
                    f"{min(cpus) * 1000:.0f}-{max(cpus) * 1000:.0f} ms",
                ]
            )
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "|".join("---" for _ in head) + "|")
        for row in rows:
            print("| " + " | ".join(row) + " |")
    else:
        widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
        for row in [head, *rows]:
            print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)))
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average at the end {load}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
