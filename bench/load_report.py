"""What the load benchmark (``bench/load.py``) measured, and its section of ``bench/RESULTS.md``:
the steps of one mode, the rate held, the table and the words around it."""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass
from pathlib import Path

from bench.load_mix import StepResult, percentile
from bench.results_md import replace_section

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "RESULTS.md"
OUT = ROOT / "bench" / "out"
HEADING = "## Load (bench/load.py)"
SLO_SECONDS = 0.5


@dataclass(frozen=True)
class Step:
    offered_rps: float
    achieved_rps: float
    requests: int
    p50_ms: float
    p99_ms: float
    p99_page_ms: float
    p99_board_ms: float
    p99_upload_ms: float
    errors: int
    error_kinds: dict[str, int]

    @property
    def held(self) -> bool:
        return self.errors == 0 and self.p99_ms < SLO_SECONDS * 1000

    @classmethod
    def of(cls, result: StepResult) -> Step:
        def ms(kind: str | None, q: float) -> float:
            return round(1000 * percentile(result.latencies(kind), q), 1)

        return cls(
            offered_rps=result.offered_rps,
            achieved_rps=round(result.achieved_rps, 1),
            requests=len(result.outcomes) + result.not_sent,
            p50_ms=ms(None, 0.5),
            p99_ms=ms(None, 0.99),
            p99_page_ms=ms("page", 0.99),
            p99_board_ms=ms("board", 0.99),
            p99_upload_ms=ms("upload", 0.99),
            errors=result.errors,
            error_kinds=result.error_kinds(),
        )


@dataclass(frozen=True)
class ModeResult:
    mode: str
    date: str
    nproc: int
    #: The machine's load average (1 minute) when the mode started: the share other work took.
    load_before: float
    command: str
    steps: list[Step]
    accepted: int
    statuses: dict[str, int]
    drain_seconds: float

    @property
    def held_rps(self) -> float:
        held = [s.achieved_rps for s in self.steps if s.held]
        return max(held, default=0.0)

    @property
    def lost(self) -> int:
        return sum(n for status, n in self.statuses.items() if status != "scored")


TABLE_HEAD = (
    "| mode | offered rps | achieved rps | requests | p50 ms | p99 ms | p99 pages | p99 boards | p99 uploads "
    "| errors |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"
)


def row(mode: str, step: Step) -> str:
    errors = str(step.errors) + (
        f" ({', '.join(f'{k}: {n}' for k, n in step.error_kinds.items())})" if step.errors else ""
    )
    return (
        f"| {mode} | {step.offered_rps:g} | {step.achieved_rps:.1f} | {step.requests} | {step.p50_ms:.0f} | "
        f"{step.p99_ms:.0f} | {step.p99_page_ms:.0f} | {step.p99_board_ms:.0f} | {step.p99_upload_ms:.0f} | {errors} |"
    )


def summary(result: ModeResult) -> str:
    total_errors = sum(s.errors for s in result.steps)
    held_errors = sum(s.errors for s in result.steps if s.held)
    scored = result.statuses.get("scored", 0)
    return (
        f"| {result.mode} | {result.held_rps:.1f} | {sum(s.requests for s in result.steps)} | {held_errors} | "
        f"{total_errors} | {result.accepted} | {sum(result.statuses.values())} | {scored} | {result.lost} | "
        f"{result.drain_seconds:.1f} s |"
    )


def render(results: list[ModeResult]) -> str:
    first = results[0]
    intro = (
        "A deadline hour against `podium serve` on this machine (`bench/load_mix.py`): 60 % page views (home "
        "and competition pages), 30 % leaderboard reads (half the JSON API, half the page), 10 % uploads of a "
        "fresh valid run by one of many teams (SV-Ident detection and disambiguation, FAMuS source validation, "
        "on the example data). Open loop: requests start at Poisson times at the offered rate, and a latency "
        "counts from the scheduled start. Steps of increasing offered load stop at the first one that misses "
        "p99 < 500 ms or has an error; *held* is the highest achieved rate of a step that met both. Uploads "
        "accepted: answered 202 in the timed steps; submissions: all in the database (the warm-up's too); "
        "lost: those not `scored` once the run drained. Embedded: SQLite, 2 scoring threads in the server "
        "process. Distributed: PostgreSQL 15, Redis as the broker, `podium serve` and 2 `podium worker --queues "
        f"scoring --concurrency 1`. Client, server, workers and databases share the machine (`nproc` {first.nproc}, "
        "with other work running)."
    )
    lines = [HEADING, "", textwrap.fill(intro, width=110), ""]
    for result in results:
        lines.append(
            f"{result.mode}: measured {result.date}, load average {result.load_before} at the start, "
            f"`.venv/bin/python {result.command}`"
        )
        lines.append("")
    lines += [TABLE_HEAD, *(row(r.mode, s) for r in results for s in r.steps), ""]
    lines += [
        "| mode | rps held at p99 < 500 ms | requests | errors (held steps) | errors (all) | uploads accepted "
        "| submissions | scored | lost | drained in |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        *(summary(r) for r in results),
        "",
        *(limit(r) for r in results),
        "",
    ]
    return "\n".join(lines)


def limit(result: ModeResult) -> str:
    """What the first step past the held rate looked like, in words."""
    missed = next((s for s in result.steps if not s.held), None)
    if missed is None:
        return f"- {result.mode}: every step up to {result.steps[-1].offered_rps:g} requests/s was held."
    errors = ", ".join(f"{n} {kind}" for kind, n in missed.error_kinds.items()) or "no errors"
    return (
        f"- {result.mode}: at {missed.offered_rps:g} requests/s offered it achieved {missed.achieved_rps:.1f}, "
        f"p99 {missed.p99_ms:.0f} ms ({errors}); {result.lost} submissions lost."
    )


def write_results(section: str) -> None:
    """Put the section (starting with ``HEADING``) into RESULTS.md in place of an older one; other
    sections are left alone."""
    current = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else "# Benchmark results\n"
    body = section.removeprefix(HEADING)
    RESULTS.write_text(replace_section(current, HEADING, body).rstrip("\n") + "\n", encoding="utf-8")


def saved(mode: str) -> ModeResult | None:
    path = OUT / f"load-{mode}.json"
    if not path.exists():
        return None
    data = json.loads(path.read_text())
    data["steps"] = [Step(**s) for s in data["steps"]]
    return ModeResult(**data)
