"""Leaderboard benchmark: requests per second for a busy phase's leaderboard next to a trivial endpoint.

Seeds a fresh SQLite database through the services (a ``svident-detection`` phase, so the board has
per-language columns; ``--teams`` teams with ``--per-team`` scored submissions each, uploaded over
twenty days), starts ``podium serve`` on it, and measures, with ``--clients`` concurrent keep-alive
clients sending ``--requests`` requests per endpoint (five rounds, medians kept):

* ``/healthz``: the trivial endpoint (no database);
* the leaderboard JSON export and the leaderboard page (cached per phase until a score lands);
* the JSON API's leaderboard, for comparison.

The first request of each leaderboard endpoint is timed on its own: it computes the ranking (cold).
The target (PERFORMANCE.md): the leaderboard JSON at no less than half the trivial endpoint's rate.

    .venv/bin/python bench/leaderboard_bench.py [--teams 300] [--per-team 20] [--write-results]
"""

from __future__ import annotations

import argparse
import http.client
import os
import random
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit

import httpx

ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, str(ROOT))

from app.config import Settings  # noqa: E402
from app.services.accounts import teams, users  # noqa: E402
from app.services.bundles.spec import BundleFile, CompetitionSpec, PhaseSpec, TaskSpec  # noqa: E402
from app.services.competitions import catalog  # noqa: E402
from app.services.jobs.kinds import JobContext  # noqa: E402
from app.services.scoring.gold import GoldCache  # noqa: E402
from app.services.scoring.job import score_submission  # noqa: E402
from app.services.submissions import intake  # noqa: E402
from app.services.submissions.limits import Limits  # noqa: E402
from app.storage.blobs import sha256_hex  # noqa: E402
from app.storage.db import Database  # noqa: E402
from app.storage.migrate import upgrade  # noqa: E402

REF = ("bench", "detection", "test")
PHASE = "/c/bench/detection/test"
RESULTS = ROOT / "bench" / "RESULTS.md"
HEADING = "## Leaderboard (bench/leaderboard_bench.py)"
LANGUAGES = ("de", "en")
DOCUMENTS = 4
SENTENCES = 6
TARGET = 0.5
ROUNDS = 5


def bundle_file(name: str, data: bytes) -> BundleFile:
    return BundleFile(name=name, data=data, sha256=sha256_hex(data))


def make_gold() -> tuple[bytes, dict[str, int]]:
    """A small SV-Ident release TSV: two languages, four documents each, six sentences per document."""
    lines = ["sentence\tis_variable\tvariable\tresearch_data\tdoc_id\tuuid\tlang"]
    truth: dict[str, int] = {}
    for lang in LANGUAGES:
        for doc in range(DOCUMENTS):
            for n in range(SENTENCES):
                uuid = f"{lang}-{doc}-{n}"
                label = (n + doc) % 2
                variable = "exploredata-ZA0001_Varv1" if label else ""
                lines.append(f"Sentence {n} of document {doc}.\t{label}\t{variable}\t\tdoc{doc}\t{uuid}\t{lang}")
                truth[uuid] = label
    return ("\n".join(lines) + "\n").encode(), truth


def make_run(rng: random.Random, truth: dict[str, int], skill: float) -> bytes:
    """A prediction that is right for each sentence with probability ``skill``."""
    labels = {uuid: str(label if rng.random() < skill else 1 - label) for uuid, label in truth.items()}
    return ("{" + ", ".join(f'"{k}": "{v}"' for k, v in labels.items()) + "}").encode()


def seed(url: str, n_teams: int, per_team: int) -> int:
    """The competition, the teams and their scored submissions; returns how many were scored."""
    database = Database(url)
    upgrade(database.engine)
    gold, truth = make_gold()
    phase = PhaseSpec(
        slug="test",
        title="Test",
        description="",
        starts_at=None,
        ends_at=None,
        gold=bundle_file("gold.tsv", gold),
        public_files=(),
        daily_limit=None,
        total_limit=None,
        visibility="public",
        selection="best",
        max_upload_bytes=None,
    )
    task = TaskSpec(
        slug="detection",
        title="Variable detection",
        description="",
        scorer="svident-detection",
        scorer_options={},
        training_files=(),
        resources=(),
        phases=(phase,),
    )
    spec = CompetitionSpec(
        slug="bench", title="Benchmark", description="", organizers=(), participation="open", tasks=(task,)
    )
    password_hash = users.hash_password("benchmark password")
    with database.session() as session:
        competition, _ = catalog.create_competition(session, spec)
        people = []
        for t in range(n_teams):
            user = users.create_user(session, f"user{t:03d}", "", password_hash=password_hash)
            teams.create_team(session, user, competition, f"Team {t:03d}")
            people.append(user)
        session.commit()

    settings = Settings(database_url=url, workers=0)
    gold_cache = GoldCache(2)
    limits = Limits(settings.max_upload_bytes, settings.max_unzipped_bytes, settings.max_zip_entries)
    rng = random.Random(20240501)
    start = datetime(2024, 5, 1, tzinfo=UTC)
    skills = [rng.uniform(0.55, 0.9) for _ in people]
    ids = []
    for round_ in range(per_team):
        for user, skill in zip(people, skills, strict=True):
            upload = intake.Upload(
                data=make_run(rng, truth, min(0.99, skill + 0.004 * round_)),
                filename="submission.json",
                method_name=f"system {round_ + 1}",
            )
            moment = start + timedelta(days=20 * round_ / per_team, minutes=rng.randrange(0, 1440))
            with database.session() as session:
                accepted = intake.submit(session, user, REF, upload, limits=limits, gold_cache=gold_cache, now=moment)
                session.commit()
                ids.append(accepted.submission.id)
    ctx = JobContext(database, settings, gold_cache)
    for submission_id in ids:
        score_submission(ctx, submission_id)
    database.dispose()
    return len(ids)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def start_server(url: str, folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PODIUM_")}
    env.update(PODIUM_DATABASE_URL=url, PODIUM_WORKERS="0", PODIUM_SECRET_KEY="benchmark-secret-key-0123456789")
    script = Path(sys.executable).with_name("podium")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "app.cli"]
    log = (folder / "server.log").open("wb")
    process = subprocess.Popen(
        [*command, "serve", "--host", "127.0.0.1", "--port", str(port)], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"podium serve exited:\n{(folder / 'server.log').read_text()}")
        try:
            if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                return process, base
        except httpx.TransportError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit("podium serve did not answer within 60 s")


@dataclass(frozen=True)
class Measure:
    name: str
    path: str
    rate: float
    median_ms: float
    cold_ms: float | None
    size: int
    #: Median over the rounds of this endpoint's rate divided by the trivial endpoint's in the same round.
    ratio: float


def _burst(base: str, path: str, requests: int, clients: int, seconds: float) -> tuple[float, list[float]]:
    """Up to ``requests`` GETs spread over ``clients`` keep-alive connections, stopping after
    ``seconds`` (so a slow endpoint cannot stall the run); returns (requests/s, latencies).

    The clients use ``http.client`` and read each body in full without decoding it, like a proxy
    would: the client shares the machine with the server, and the lighter it is, the more of the
    machine measures the server. They accept gzip, as browsers and HTTP libraries do.
    """
    shares = [requests // clients + (1 if i < requests % clients else 0) for i in range(clients)]
    deadline = time.perf_counter() + seconds
    address = urlsplit(base)

    def run(count: int) -> list[float]:
        times = []
        connection = http.client.HTTPConnection(address.hostname or "127.0.0.1", address.port, timeout=120)
        try:
            for _ in range(count):
                if time.perf_counter() > deadline:
                    break
                begin = time.perf_counter()
                connection.request("GET", path, headers={"Accept-Encoding": "gzip"})
                answer = connection.getresponse()
                body = answer.read()
                times.append(time.perf_counter() - begin)
                if answer.status != 200:
                    raise SystemExit(f"GET {path} answered {answer.status}: {body[:300]!r}")
        finally:
            connection.close()
        return times

    with ThreadPoolExecutor(clients) as pool:
        begin = time.perf_counter()
        latencies = [t for part in pool.map(run, shares) for t in part]
        elapsed = time.perf_counter() - begin
    return len(latencies) / elapsed, latencies


def measure_all(
    base: str, endpoints: list[tuple[str, str]], requests: int, clients: int, seconds: float
) -> list[Measure]:
    cold: dict[str, float] = {}
    sizes: dict[str, int] = {}
    for name, path in endpoints:
        begin = time.perf_counter()
        answer = httpx.get(base + path, timeout=120)
        cold[name] = (time.perf_counter() - begin) * 1000
        sizes[name] = len(answer.content)
        _burst(base, path, min(100, requests), clients, seconds)  # warm up: connections, caches
    rates: dict[str, list[float]] = {name: [] for name, _ in endpoints}
    latencies: dict[str, list[float]] = {name: [] for name, _ in endpoints}
    for _ in range(ROUNDS):
        # Each round measures every endpoint right after the trivial one, and the ratio is taken
        # within the round, so that load from other work on a shared machine hits both alike.
        for name, path in endpoints:
            rate, times = _burst(base, path, requests, clients, seconds)
            rates[name].append(rate)
            latencies[name] += times
    trivial = rates[endpoints[0][0]]
    return [
        Measure(
            name,
            path,
            statistics.median(rates[name]),
            statistics.median(latencies[name]) * 1000,
            None if path == "/healthz" else cold[name],
            sizes[name],
            statistics.median(r / t for r, t in zip(rates[name], trivial, strict=True)),
        )
        for name, path in endpoints
    ]


def table(results: list[Measure], teams_: int, per_team: int, requests: int, clients: int, seconds: float) -> str:
    lines = [
        f"{teams_} teams x {per_team} scored submissions; per endpoint and round {requests} requests (or what "
        f"{seconds:.0f} s allow) from {clients} concurrent clients, medians of {ROUNDS} rounds; server and clients "
        'share the machine. "vs trivial" is the median of the per-round ratios.',
        "",
        "| endpoint | path | req/s | vs trivial | median latency | first request (cold) | body (uncompressed) |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for m in results:
        cold = "–" if m.cold_ms is None else f"{m.cold_ms:.0f} ms"
        size = f"{m.size / 1024:.0f} KB" if m.size >= 1024 else f"{m.size} B"
        lines.append(
            f"| {m.name} | `{m.path}` | {m.rate:.0f} | {m.ratio:.2f} | {m.median_ms:.1f} ms | {cold} | {size} |"
        )
    board = next(m for m in results if m.name == "leaderboard JSON")
    verdict = "meets" if board.ratio >= TARGET else "misses"
    lines += [
        "",
        f"Leaderboard JSON at {board.ratio:.2f}x the trivial rate: {verdict} the target (>= {TARGET}).",
    ]
    return "\n".join(lines)


def write_results(text: str, command: str) -> None:
    """Replace this benchmark's section of RESULTS.md (other sections stay as they are)."""
    stamp = (
        f"Measured on {datetime.now(UTC):%Y-%m-%d} with `podium serve` on the embedded default (SQLite), "
        f"nproc {os.cpu_count()}, Python {sys.version.split()[0]}; the machine was shared with other work, so "
        "compare the ratios more than the rates."
    )
    section = f"{HEADING}\n\n{stamp}\n\n```sh\n{command}\n```\n\n{text}\n"
    old = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n"
    pattern = re.compile(rf"^{re.escape(HEADING)}\n.*?(?=^## |\Z)", re.S | re.M)
    new = pattern.sub(lambda _: section + "\n", old) if pattern.search(old) else old.rstrip("\n") + "\n\n" + section
    RESULTS.write_text(new.rstrip("\n") + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--teams", type=int, default=300)
    parser.add_argument("--per-team", type=int, default=20)
    parser.add_argument("--requests", type=int, default=2000, help="requests per endpoint and round")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=10.0, help="time limit of each round per endpoint")
    parser.add_argument(
        "--database", type=Path, help="SQLite file to seed, or to reuse when it exists (saves the seeding)"
    )
    parser.add_argument("--write-results", action="store_true", help=f"update this benchmark's section of {RESULTS}")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="podium-bench-") as tmp:
        folder = Path(tmp)
        database = args.database or folder / "bench.sqlite3"
        url = f"sqlite:///{database}"
        if database.exists():
            print(f"using the seeded database {database}", file=sys.stderr)
        else:
            begin = time.perf_counter()
            scored = seed(url, args.teams, args.per_team)
            print(f"seeded {scored} scored submissions in {time.perf_counter() - begin:.0f} s", file=sys.stderr)
        process, base = start_server(url, folder)
        try:
            endpoints = [
                ("trivial", "/healthz"),
                ("leaderboard JSON", f"{PHASE}/leaderboard.json"),
                ("leaderboard page", PHASE),
                ("API leaderboard", "/api/v1/competitions/bench/tasks/detection/phases/test/leaderboard"),
            ]
            results = measure_all(base, endpoints, args.requests, args.clients, args.seconds)
        finally:
            process.terminate()
            process.wait(15)
    text = table(results, args.teams, args.per_team, args.requests, args.clients, args.seconds)
    print(text)
    if args.write_results:
        command = (
            f".venv/bin/python bench/leaderboard_bench.py --teams {args.teams} --per-team {args.per_team} "
            f"--requests {args.requests} --clients {args.clients} --seconds {args.seconds:g} --write-results"
        )
        write_results(text, command)


if __name__ == "__main__":
    main()
