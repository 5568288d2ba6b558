"""The traffic of ``bench/load.py``: a deadline-hour mix of requests, sent open loop at a set rate.

Open loop: requests start on a schedule (Poisson arrivals at the offered rate) whatever the server's
pace, and a request's latency runs from its scheduled start, so a server that falls behind shows it
in the latencies instead of silently slowing the client down (no coordinated omission). Each step
stops by itself: nothing new starts after its time budget, and every request has a timeout.

The mix, by default: 60 % page views (the home page and the competition pages), 30 % leaderboard
reads (half the JSON API, half the leaderboard page), 10 % uploads of a fresh valid run by one of
many teams, to the example phases of SV-Ident (both tasks) and FAMuS source validation.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
#: Most requests in flight at once; past it the client itself is the bottleneck and says so.
MAX_IN_FLIGHT = 512
REQUEST_TIMEOUT = 10.0
#: Distinct runs prepared per phase, so that building uploads costs the client nothing during a step.
RUNS_PER_PHASE = 64

PAGES = ["/", "/c/svident", "/c/scier", "/c/famus"]


def _svident_rows() -> list[dict[str, str]]:
    text = (EXAMPLES / "svident" / "data" / "test.tsv").read_text(encoding="utf-8")
    return list(csv.DictReader(io.StringIO(text, newline=""), delimiter="\t"))


def detection_run(rng: random.Random) -> bytes:
    """A label for every sentence, each right with probability 0.8."""
    rows = _svident_rows()
    return json.dumps(
        {r["uuid"]: r["is_variable"] if rng.random() < 0.8 else "01"[r["is_variable"] == "0"] for r in rows}
    ).encode()


def disambiguation_run(rng: random.Random) -> bytes:
    """For every query, its variables and a few distractors in a shuffled order."""
    rows = [r for r in _svident_rows() if r["is_variable"] == "1"]
    pool = sorted({v for r in rows for v in r["variable"].split(";") if v and v != "unk"})
    run = {}
    for r in rows:
        names = [v for v in r["variable"].split(";") if v and v != "unk"] + rng.sample(pool, min(5, len(pool)))
        run[r["uuid"]] = {name: rng.random() for name in dict.fromkeys(names)}
    return json.dumps(run).encode()


def source_validation_run(rng: random.Random) -> bytes:
    """A 0/1 decision for every (report, source) pair, each right with probability 0.8."""
    lines = (EXAMPLES / "famus" / "data" / "sv-dev.jsonl").read_text(encoding="utf-8").splitlines()
    docs = [json.loads(line) for line in lines if line.strip()]
    return json.dumps({d["instance_id"]: int(d["valid_source"]) ^ (rng.random() >= 0.8) for d in docs}).encode()


#: Upload targets: (competition, task, phase) of an example bundle, and a maker of valid runs for it.
UPLOAD_PHASES: list[tuple[tuple[str, str, str], Callable[[random.Random], bytes]]] = [
    (("svident", "detection", "test"), detection_run),
    (("svident", "disambiguation", "test"), disambiguation_run),
    (("famus", "sv", "dev"), source_validation_run),
]


@dataclass(frozen=True)
class Request:
    kind: str  # "page", "board" or "upload"
    method: str
    path: str
    token: str = ""
    body: bytes = b""


@dataclass(frozen=True)
class Mix:
    """Draws the next request of the deadline-hour mix."""

    tokens: list[str]
    page_share: float = 0.6
    board_share: float = 0.3
    runs: dict[tuple[str, str, str], list[bytes]] = field(default_factory=dict)

    @classmethod
    def prepared(cls, tokens: list[str], seed: int = 1) -> Mix:
        rng = random.Random(seed)
        runs = {ref: [make(rng) for _ in range(RUNS_PER_PHASE)] for ref, make in UPLOAD_PHASES}
        return cls(tokens, runs=runs)

    def draw(self, rng: random.Random) -> Request:
        roll = rng.random()
        if roll < self.page_share:
            return Request("page", "GET", rng.choice(PAGES))
        c, t, p = rng.choice([ref for ref, _ in UPLOAD_PHASES])
        if roll < self.page_share + self.board_share:
            path = (
                f"/api/v1/competitions/{c}/tasks/{t}/phases/{p}/leaderboard"
                if rng.random() < 0.5
                else f"/c/{c}/{t}/{p}"
            )
            return Request("board", "GET", path)
        body = rng.choice(self.runs[(c, t, p)])
        path = f"/api/v1/competitions/{c}/tasks/{t}/phases/{p}/submissions"
        return Request("upload", "POST", path, token=rng.choice(self.tokens), body=body)


@dataclass
class Outcome:
    kind: str
    latency: float
    ok: bool
    error: str = ""
    submission_id: int | None = None


@dataclass
class StepResult:
    offered_rps: float
    seconds: float
    outcomes: list[Outcome]
    not_sent: int  # dropped by the client: more than MAX_IN_FLIGHT in flight

    def latencies(self, kind: str | None = None) -> list[float]:
        return sorted(o.latency for o in self.outcomes if o.ok and (kind is None or o.kind == kind))

    @property
    def errors(self) -> int:
        return sum(not o.ok for o in self.outcomes) + self.not_sent

    @property
    def achieved_rps(self) -> float:
        return sum(o.ok for o in self.outcomes) / self.seconds

    def error_kinds(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for o in self.outcomes:
            if not o.ok:
                counts[o.error] = counts.get(o.error, 0) + 1
        if self.not_sent:
            counts["not sent (client saturated)"] = self.not_sent
        return counts


def percentile(values: list[float], q: float) -> float:
    """The nearest-rank percentile of sorted ``values``: the smallest value with at least ``q`` of them
    at or below it (NaN for none)."""
    if not values:
        return float("nan")
    return values[min(len(values) - 1, max(0, math.ceil(q * len(values)) - 1))]


async def _send(client: httpx.AsyncClient, request: Request, due: float) -> Outcome:
    loop = asyncio.get_running_loop()
    headers = {"Authorization": f"Bearer {request.token}"} if request.token else {}
    files = {"file": ("run.json", request.body)} if request.body else None
    try:
        response = await client.request(request.method, request.path, headers=headers, files=files)
    except httpx.HTTPError as exc:
        return Outcome(request.kind, loop.time() - due, False, type(exc).__name__)
    latency = loop.time() - due
    expected = 202 if request.kind == "upload" else 200
    if response.status_code != expected:
        return Outcome(request.kind, latency, False, f"HTTP {response.status_code}")
    submission = response.json()["id"] if request.kind == "upload" else None
    return Outcome(request.kind, latency, True, submission_id=submission)


async def run_step(base_url: str, mix: Mix, rate: float, seconds: float, seed: int) -> StepResult:
    """Offer ``rate`` requests a second for ``seconds``; wait for the answers (each has a timeout)."""
    rng = random.Random(seed)
    limits = httpx.Limits(max_connections=MAX_IN_FLIGHT, max_keepalive_connections=MAX_IN_FLIGHT)
    async with httpx.AsyncClient(base_url=base_url, limits=limits, timeout=REQUEST_TIMEOUT) as client:
        loop = asyncio.get_running_loop()
        start = loop.time()
        due = start
        tasks: list[asyncio.Task[Outcome]] = []
        not_sent = 0
        in_flight = 0

        def finished(_: asyncio.Task[Outcome]) -> None:
            nonlocal in_flight
            in_flight -= 1

        while True:
            due += rng.expovariate(rate)
            if due >= start + seconds:
                break
            await asyncio.sleep(max(0.0, due - loop.time()))
            if in_flight >= MAX_IN_FLIGHT:
                not_sent += 1
                continue
            in_flight += 1
            task = asyncio.create_task(_send(client, mix.draw(rng), due))
            task.add_done_callback(finished)
            tasks.append(task)
        outcomes = list(await asyncio.gather(*tasks))
        elapsed = max(seconds, loop.time() - start)
    return StepResult(rate, elapsed, outcomes, not_sent)
