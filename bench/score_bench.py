"""Scorer benchmark: time and peak memory of each seed scorer on test-size inputs and on 10x and 100x copies.

For each scorer and scale, in fresh processes (so that a peak is that run's own): the baseline (reading
both files and parsing them with ``json.loads`` or a tab-mode CSV reader, nothing else), the scorer's
``parse_gold`` + ``parse_submission`` and ``compute``, the process's peak resident memory, and the whole
``podium score --json`` command, paired in every round with the parsing floor as a whole process (Python, orjson,
reading and parsing both files: ``FLOOR``), their wall times and the median of the per-round ratios; and
PERFORMANCE.md's recorded wall time of the official code, which was not run here ("vs recorded anchor").
The inputs are made by ``bench.score_inputs`` in a temporary folder. A scale whose estimated memory does not fit
what the machine has free is skipped with the reason, and a run that fails is reported, never raised.

    .venv/bin/python bench/score_bench.py [--scales 1,10,100] [--scorers a,b] [--repeat N] [--markdown]
        [--clock wall|cpu] [--profile N] [--workdir DIR]

The times are wall seconds by default; on a machine shared with other work, ``--clock cpu`` gives each
process's CPU time, which is its wall time on an idle core (every measured process is single-threaded).
"""

from __future__ import annotations

import argparse
import cProfile
import csv
import gc
import io
import itertools
import json
import os
import pstats
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):  # run as a script (`python bench/score_bench.py`, as `make bench` does)
    sys.path.insert(0, str(ROOT))

from bench.score_inputs import SCORERS, build_inputs  # noqa: E402
from bench.score_report import MB, Measure, legend, render, verdict  # noqa: E402
from scorers import get_scorer, scorer_class, scorer_names, unpack_submission  # noqa: E402
from scorers.io import release_freed_memory  # noqa: E402

#: Peak memory per input byte assumed before a smaller scale of the same scorer has been measured.
DEFAULT_BYTES_PER_INPUT_BYTE = 8.0
#: Share of the machine's available memory a run may be expected to take.
MEMORY_HEADROOM = 0.8


def shared_dir() -> Path:
    """The shared inputs folder: ``PODIUM_SHARED_DIR`` or ``../shared`` beside the checkout."""
    return Path(os.environ.get("PODIUM_SHARED_DIR") or ROOT.parent / "shared").resolve()


def available_memory() -> int:
    """Bytes the kernel says can be allocated without swapping (``MemAvailable``)."""
    with open("/proc/meminfo", encoding="ascii") as info:
        for line in info:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no MemAvailable in /proc/meminfo")


def current_rss(field: str = "VmRSS") -> int:
    """This process's resident memory in bytes (``VmHWM``: its high-water mark since it started its program)."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


# -- child processes -----------------------------------------------------------------------------


def plain_parse(path: Path, loads: Callable[[bytes], Any] = json.loads) -> Any:
    """The reference: the file's bytes parsed as its format says, with no checks and no hooks."""
    data = path.read_bytes()
    if path.suffix == ".txt":  # TREC qrels and runs: whitespace-separated fields
        return [line.split() for line in data.splitlines()]
    if path.suffix == ".tsv":
        return list(csv.reader(io.StringIO(data.decode("utf-8"), newline=""), delimiter="\t", quotechar='"'))
    if path.suffix == ".jsonl":
        return [loads(line) for line in data.splitlines() if line.strip()]
    return loads(data)


#: The clocks every step is timed on: wall time, and this process's CPU time (steadier on a shared machine).
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def _stamp() -> dict[str, float]:
    return {name: clock() for name, clock in CLOCKS.items()}


def _elapsed(marks: Sequence[dict[str, float]], steps: Sequence[str]) -> dict[str, float]:
    """Seconds of each step between successive marks, on each clock: ``{"wall:read": ..., "cpu:read": ...}``."""
    return {
        f"{clock}:{step}": after[clock] - before[clock]
        for step, (before, after) in zip(steps, itertools.pairwise(marks), strict=True)
        for clock in CLOCKS
    }


#: The reference parses: the standard library's json, the same with the garbage collector off (how much of
#: a plain parse is the collector), and orjson (what a faster parser gives). Each runs in its own process.
PARSERS = ("json", "nogc", "orjson")


#: The parsing floor as a whole process, run beside ``podium score`` in the same round: start Python, import orjson,
#: read both files and parse them (JSON and JSON Lines with orjson, TSV with the csv module, TREC files split on
#: white space), nothing else. The same interpreter and site as ``podium score``.
FLOOR = """
import csv, io, sys
import orjson
for name in sys.argv[1:]:
    data = open(name, "rb").read()
    if name.endswith(".txt"):
        parsed = [line.split() for line in data.splitlines()]
    elif name.endswith(".tsv"):
        parsed = list(csv.reader(io.StringIO(data.decode("utf-8"), newline=""), delimiter="\t", quotechar='"'))
    elif name.endswith(".jsonl"):
        parsed = [orjson.loads(line) for line in data.splitlines() if line.strip()]
    else:
        parsed = orjson.loads(data)
print("{}")
"""


def child_baseline(gold: Path, submission: Path, parser: str) -> dict[str, Any]:
    if parser == "nogc":
        gc.disable()
    loads = orjson.loads if parser == "orjson" else json.loads
    marks = [_stamp()]
    parsed = (plain_parse(gold, loads), plain_parse(submission, loads))
    marks.append(_stamp())
    return {**_elapsed(marks, [parser]), "files": len(parsed), "hwm": current_rss("VmHWM")}


def child_scorer(name: str, gold: Path, submission: Path, profile: int) -> dict[str, Any]:
    scorer = get_scorer(name)
    rss_start = current_rss()
    profiler = cProfile.Profile() if profile else None
    if profiler:
        profiler.enable()
    marks = [_stamp()]
    gold_bytes, submission_bytes = gold.read_bytes(), submission.read_bytes()
    marks.append(_stamp())
    parsed_gold = scorer.parse_gold(gold_bytes)
    del gold_bytes  # as `podium score` does: the gold's bytes are gone once it is parsed
    marks.append(_stamp())
    content, _ = unpack_submission(submission_bytes)
    del submission_bytes  # and the submission's once it is read, as `podium score` drops them (app/cli/scoring.py)
    parsed = scorer.parse_submission(content, scorer.public_view(parsed_gold))
    del content
    release_freed_memory(gold.stat().st_size + submission.stat().st_size)  # as `podium score` does
    marks.append(_stamp())
    report = scorer.compute(parsed_gold, parsed)
    marks.append(_stamp())
    if profiler:
        profiler.disable()
        pstats.Stats(profiler, stream=sys.stderr).sort_stats("tottime").print_stats(profile)
    return {
        **_elapsed(marks, ["read", "parse_gold", "parse_submission", "compute"]),
        "rss_start": rss_start,
        "units": len(report.units),
        "primary": report.metrics[scorer.primary_metric],
        "hwm": current_rss("VmHWM"),
    }


def failure(run: ChildRun) -> str:
    """Why a child run gave no result, in one line."""
    if run.code < 0:
        why = f"killed by signal {-run.code}" + (" (out of memory?)" if run.code == -9 else "")
    else:
        why = f"exit code {run.code}"
    last = run.stderr.strip().splitlines()[-1:]
    return f"{why}: {last[0][:300]}" if last else why


@dataclass(frozen=True)
class ChildRun:
    """How a child process ended: exit code, wall and CPU seconds, peak RSS in bytes, the end of its stderr."""

    code: int
    wall: float
    cpu: float
    peak: int
    stderr: str


def run_child(command: Sequence[str], *, memory_limit: int, stdout: Path) -> ChildRun:
    """Run ``command`` with its stdout to a file, under an address-space limit so it fails rather than swaps."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))

    with stdout.open("wb") as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=err, cwd=ROOT, preexec_fn=limit)
        # wait4 gives this child's own peak RSS and CPU time (RUSAGE_CHILDREN would mix in earlier children).
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        tail = err.read()[-20_000:].decode("utf-8", "replace")
    cpu = usage.ru_utime + usage.ru_stime
    return ChildRun(process.returncode, wall, cpu, usage.ru_maxrss * 1024, tail)


# -- measuring -----------------------------------------------------------------------------------


class Bench:
    """Generates inputs, runs the children and collects one ``Measure`` per scorer and scale."""

    def __init__(self, workdir: Path, repeat: int, clock: str, profile: int) -> None:
        self.workdir, self.repeat, self.clock, self.profile = workdir, repeat, clock, profile
        self.podium = Path(sys.executable).with_name("podium")
        if not self.podium.exists():
            self.podium = Path(shutil.which("podium") or "podium")
        self.me = [sys.executable, str(Path(__file__).resolve())]

    def log(self, message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    def scorer(self, name: str, scales: Sequence[int]) -> tuple[str, list[Measure]]:
        """What the 1x inputs hold, and the measures at each scale."""
        try:
            inputs = build_inputs(name, shared_dir())
        except (OSError, ValueError, KeyError) as exc:  # release data missing or not as expected
            reason = f"no inputs: {type(exc).__name__}: {exc}"
            return reason, [Measure(name, scale, skipped=reason) for scale in scales]
        self.log(f"{name}: {inputs.description}")
        done: list[Measure] = []
        for scale in scales:
            folder = self.workdir / name / f"x{scale}"
            try:
                done.append(self.scale(name, scale, *inputs.write(folder, scale), done))
            except OSError as exc:  # a full disk, say
                done.append(Measure(name, scale, skipped=f"cannot write the inputs: {exc}"))
            finally:
                shutil.rmtree(folder, ignore_errors=True)
        return inputs.description, done

    def estimate(self, input_bytes: int, done: Sequence[Measure]) -> int:
        """Peak memory expected at ``input_bytes``, from the largest scale measured so far."""
        measured = [m for m in done if not m.skipped and m.input_bytes]
        if not measured:
            return int(DEFAULT_BYTES_PER_INPUT_BYTE * input_bytes) + 300_000_000
        last = max(measured, key=lambda m: m.input_bytes)
        grown = max(last.peak_bytes, last.baseline_peak_bytes, last.podium_peak_bytes) - last.start_bytes
        return last.start_bytes + int(max(grown, 0) / last.input_bytes * input_bytes * 1.2)

    def scale(self, name: str, scale: int, gold: Path, submission: Path, done: Sequence[Measure]) -> Measure:
        measure = Measure(name, scale, input_bytes=gold.stat().st_size + submission.stat().st_size)
        need, free = self.estimate(measure.input_bytes, done), available_memory()
        if need > MEMORY_HEADROOM * free:
            measure.skipped = f"needs about {need / 1e9:.1f} GB of memory; {free / 1e9:.1f} GB are available"
            self.log(f"  {scale}x: skipped, {measure.skipped}")
            return measure
        self.log(f"  {scale}x: {measure.input_bytes / MB:.1f} MB of input, {self.repeat} run(s)")
        files = ["--gold", str(gold), "--submission", str(submission)]
        commands = {
            **{f"baseline_{p}": [*self.me, "--child", "baseline", "--parser", p, *files] for p in PARSERS},
            "scorer": [*self.me, "--child", "scorer", "--scorers", name, *files],
            # The floor and podium score run back to back in every round, so that each pair shares the machine's load.
            "floor": [sys.executable, "-c", FLOOR, str(gold), str(submission)],
            "podium": [str(self.podium), "score", "--scorer", name, *files, "--json"],
        }
        out, limit = gold.parent / "stdout.json", max(free, need)
        runs: dict[str, list[float]] = {}
        for _ in range(self.repeat):
            for step, command in commands.items():
                run = run_child(command, memory_limit=limit, stdout=out)
                try:
                    result = json.loads(out.read_bytes()) if run.code == 0 else None
                except ValueError:
                    result = None
                if not isinstance(result, dict):
                    measure.skipped = f"the {step} run failed: {failure(run)}"
                    self.log(f"  {scale}x: {measure.skipped}")
                    return measure
                if step == "floor":
                    result = {"wall:floor": run.wall, "cpu:floor": run.cpu}
                if step == "podium":
                    primary = scorer_class(name).primary_metric
                    result = {
                        "wall:podium": run.wall,
                        "cpu:podium": run.cpu,
                        "podium_primary": result["metrics"][primary],
                        "paired_wall": run.wall / runs["wall:floor"][-1],
                        "paired_cpu": run.cpu / runs["cpu:floor"][-1],
                    }
                # A child of ours reports its own high-water mark: the kernel's figure for a forked child also
                # counts this process's pages, resident in the child until it starts its program.
                peak = result.pop("hwm", run.peak)
                for key, value in {**result, f"{step}_peak": peak}.items():
                    runs.setdefault(key, []).append(float(value))
        if self.profile:
            command = [*commands["scorer"], "--profile", str(self.profile)]
            self.log(run_child(command, memory_limit=limit, stdout=out).stderr)
        self.fill(measure, runs)
        self.log(
            f"  {scale}x: parse {measure.parse_s:.2f} s, compute {measure.compute_s:.2f} s, "
            f"baseline {measure.baseline_s:.2f} s, podium score {measure.podium_s:.2f} s ({self.clock}), "
            f"peak {measure.peak_bytes / MB:.0f} MB"
        )
        return measure

    def fill(self, measure: Measure, runs: dict[str, list[float]]) -> None:
        """Medians of the repeated runs on the chosen clock; peaks are the largest of the runs."""
        median = {key: statistics.median(values) for key, values in runs.items()}
        clock = self.clock
        measure.units = int(median["units"])
        measure.baseline_s = median[f"{clock}:json"]
        measure.nogc_s = median[f"{clock}:nogc"]
        measure.orjson_s = median[f"{clock}:orjson"]
        measure.read_s = median[f"{clock}:read"]
        measure.parse_s = median[f"{clock}:parse_gold"] + median[f"{clock}:parse_submission"]
        measure.compute_s = median[f"{clock}:compute"]
        measure.podium_s = median[f"{clock}:podium"]
        measure.floor_wall_s = median["wall:floor"]
        measure.podium_wall_s = median["wall:podium"]
        measure.paired_ratio = median["paired_wall"]
        measure.paired_cpu_ratio = median["paired_cpu"]
        measure.peak_bytes = int(max(runs["scorer_peak"]))
        measure.baseline_peak_bytes = int(max(runs["baseline_json_peak"]))
        measure.podium_peak_bytes = int(max(runs["podium_peak"]))
        measure.start_bytes = int(median["rss_start"])
        measure.primary = median["primary"]
        if abs(median["podium_primary"] - measure.primary) > 1e-9:
            measure.notes.append(f"podium score gave {median['podium_primary']}, the scorer {measure.primary}")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scales", default="1,10,100", help="comma-separated copy counts (default 1,10,100)")
    parser.add_argument("--scorers", default=",".join(SCORERS), help="comma-separated scorer names (default all)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement; the median is shown")
    parser.add_argument("--markdown", action="store_true", help="print the tables as Markdown")
    parser.add_argument(
        "--clock", choices=tuple(CLOCKS), default="wall", help="wall time, or CPU time (steadier on a busy machine)"
    )
    parser.add_argument("--workdir", type=Path, help="folder for the generated inputs (default: a temporary one)")
    parser.add_argument("--profile", type=int, default=0, help="print the N costliest functions of each scorer run")
    parser.add_argument("--child", choices=("baseline", "scorer"), help=argparse.SUPPRESS)
    parser.add_argument("--gold", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--submission", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--parser", choices=PARSERS, default="json", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.scorers = [s for s in args.scorers.split(",") if s]
    unknown = sorted(set(args.scorers) - set(SCORERS))
    if unknown:
        parser.error(f"unknown scorer(s) {', '.join(unknown)}; known: {', '.join(SCORERS)}")
    try:
        args.scales = [int(s) for s in args.scales.split(",") if s]
    except ValueError:
        parser.error(f"--scales must be comma-separated integers, not {args.scales!r}")
    if not args.scales or min(args.scales) < 1 or args.repeat < 1:
        parser.error("--scales must name positive integers and --repeat must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.child == "baseline":
        print(json.dumps(child_baseline(args.gold, args.submission, args.parser)))
        return 0
    if args.child == "scorer":
        print(json.dumps(child_scorer(args.scorers[0], args.gold, args.submission, args.profile)))
        return 0
    if not (shared_dir() / "data").is_dir():
        print(f"no release data at {shared_dir() / 'data'} (set PODIUM_SHARED_DIR)", file=sys.stderr)
        return 2
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{os.cpu_count()} CPUs, load average {load}; {args.clock} time, {args.repeat} run(s) each\n", flush=True)
    with tempfile.TemporaryDirectory(prefix="podium-score-bench-") as temporary:
        bench = Bench(args.workdir or Path(temporary), args.repeat, args.clock, args.profile)
        for name in args.scorers:
            title = f"### {name}" if args.markdown else f"== {name} =="
            if name not in scorer_names():
                print(f"{title}\n\nskipped: the scorer is not registered\n", flush=True)
                continue
            description, measures = bench.scorer(name, sorted(set(args.scales)))
            table = render(measures, args.markdown)
            print(f"{title}\n\n1x: {description}.\n\n{table}\n\n{verdict(measures)}\n", flush=True)
    print(legend(args.clock))
    return 0


if __name__ == "__main__":
    sys.exit(main())
