"""What the scorer benchmark (``bench/score_bench.py``) measured, against the targets of PERFORMANCE.md:
one ``Measure`` per scorer and scale, and the table, its legend and the verdict."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

#: PERFORMANCE.md: the official code's whole-process wall seconds per scale, and its peak MB at 100x.
#: The official SciER table measures the end-to-end evaluation; RE runs the same code on gold entities.
#: ``trec`` has no official time: its scales are 1,000 and 10,000 queries of 1,000 documents (--scales 1,10).
OFFICIAL: dict[str, tuple[dict[int, float], int]] = {
    "svident-detection": ({1: 2.3, 10: 7.6, 100: 1634.0}, 267),
    "svident-disambiguation": ({1: 3.1, 10: 7.9, 100: 515.0}, 3700),
    "scier-ere": ({1: 0.21, 10: 1.5, 100: 18.1}, 1300),
    "scier-re": ({1: 0.21, 10: 1.5, 100: 18.1}, 1300),
    "famus-cdae": ({1: 0.55, 10: 1.3, 100: 11.7}, 252),
    "famus-sv": ({1: 0.88, 10: 1.5, 100: 3.9}, 850),
}
#: Targets of PERFORMANCE.md.
MAX_GROWTH = 12.0
MAX_PARSE_RATIO = 3.0
MAX_MEMORY_RATIO = 2.0
MIN_SPEEDUP = 10.0
#: The second pass's goal: the whole podium score process within this factor of the whole floor process (wall).
MAX_FLOOR_RATIO = 1.5
#: The third pass's goal: the whole podium score process's peak, interpreter and libraries included, per input byte.
MAX_WHOLE_MEMORY_RATIO = 3.0
MB = 1e6


@dataclass
class Measure:
    """One scorer at one scale: medians over the repeats (peaks: the largest)."""

    scorer: str
    scale: int
    input_bytes: int = 0
    units: int = 0
    baseline_s: float = 0.0
    nogc_s: float = 0.0
    orjson_s: float = 0.0
    read_s: float = 0.0
    parse_s: float = 0.0
    compute_s: float = 0.0
    peak_bytes: int = 0
    start_bytes: int = 0
    baseline_peak_bytes: int = 0
    podium_s: float = 0.0
    #: Whole-process wall seconds of the parsing floor and of ``podium score``, run back to back in each round, and
    #: the median over the rounds of podium score / floor.
    floor_wall_s: float = 0.0
    podium_wall_s: float = 0.0
    paired_ratio: float = 0.0
    #: The same on CPU seconds, steadier on a shared machine.
    paired_cpu_ratio: float = 0.0
    podium_peak_bytes: int = 0
    primary: float = 0.0
    skipped: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def total_s(self) -> float:
        """The scorer's own time: reading the files, parsing and checking them, computing."""
        return self.read_s + self.parse_s + self.compute_s

    @property
    def parse_ratio(self) -> float:
        return self.total_s / self.baseline_s if self.baseline_s else float("nan")

    @property
    def memory_ratio(self) -> float:
        """Memory the scorer took beyond the loaded interpreter, per byte of input."""
        return (self.peak_bytes - self.start_bytes) / self.input_bytes if self.input_bytes else float("nan")

    @property
    def podium_memory_ratio(self) -> float:
        """The whole podium score process's peak, interpreter and libraries included, per byte of input."""
        return (
            self.podium_peak_bytes / self.input_bytes if self.input_bytes and self.podium_peak_bytes else float("nan")
        )

    @property
    def baseline_memory_ratio(self) -> float:
        return (self.baseline_peak_bytes - self.start_bytes) / self.input_bytes if self.input_bytes else float("nan")


COLUMNS = (
    "scale",
    "input MB",
    "units",
    "baseline s",
    "no-GC s",
    "orjson s",
    "parse s",
    "compute s",
    "ratio",
    "growth",
    "peak MB",
    "mem/input",
    "baseline mem/input",
    "podium score s",
    "floor wall s",
    "podium score wall s",
    "vs floor (paired)",
    "vs floor, CPU (paired)",
    "podium score peak/input",
    "recorded anchor s",
    "vs recorded anchor",
)


def _seconds(value: float) -> str:
    return f"{value:.3f}" if value < 10 else f"{value:.1f}"


def _growth(measure: Measure, previous: Measure | None) -> float | None:
    """Time against the scale ten times smaller, when that one was measured just before."""
    if (
        previous is None
        or previous.skipped
        or measure.skipped
        or measure.scale != 10 * previous.scale
        or not previous.total_s
    ):
        return None
    return measure.total_s / previous.total_s


def rows(measures: Sequence[Measure]) -> list[list[str]]:
    out = []
    for previous, m in zip([None, *measures], measures, strict=False):
        if m.skipped:
            out.append([f"{m.scale}x", f"{m.input_bytes / MB:.1f}", *["-"] * (len(COLUMNS) - 2)])
            continue
        official = OFFICIAL.get(m.scorer, ({}, 0))[0].get(m.scale)
        growth = _growth(m, previous)
        out.append(
            [
                f"{m.scale}x",
                f"{m.input_bytes / MB:.1f}",
                str(m.units),
                _seconds(m.baseline_s),
                _seconds(m.nogc_s),
                _seconds(m.orjson_s),
                _seconds(m.parse_s),
                _seconds(m.compute_s),
                f"{m.parse_ratio:.2f}",
                f"{growth:.1f}" if growth else "",
                f"{m.peak_bytes / MB:.0f}",
                f"{m.memory_ratio:.2f}",
                f"{m.baseline_memory_ratio:.2f}",
                _seconds(m.podium_s),
                _seconds(m.floor_wall_s),
                _seconds(m.podium_wall_s),
                f"{m.paired_ratio:.2f}x" if m.paired_ratio else "",
                f"{m.paired_cpu_ratio:.2f}x" if m.paired_cpu_ratio else "",
                f"{m.podium_memory_ratio:.2f}" if m.podium_peak_bytes else "",
                f"{official:g}" if official else "",
                f"{official / m.podium_s:.1f}x" if official else "",
            ]
        )
    return out


def verdict(measures: Sequence[Measure]) -> str:
    """The targets of PERFORMANCE.md, met or not, on the largest scale measured."""
    done = [m for m in measures if not m.skipped]
    if not done:
        return "targets: not measured"
    top = done[-1]
    growths = [g for a, b in itertools.pairwise(measures) if (g := _growth(b, a)) is not None]
    checks = [
        ("linear", all(g <= MAX_GROWTH for g in growths), ", ".join(f"{g:.1f}x" for g in growths)),
        (f"within 3x of parsing at {top.scale}x", top.parse_ratio <= MAX_PARSE_RATIO, f"{top.parse_ratio:.2f}x"),
        (f"memory at {top.scale}x", top.memory_ratio <= MAX_MEMORY_RATIO, f"{top.memory_ratio:.2f}x the input"),
    ]
    if top.paired_ratio:
        checks.append(
            (
                f"within {MAX_FLOOR_RATIO}x of the floor at {top.scale}x",
                top.paired_ratio <= MAX_FLOOR_RATIO,
                f"{top.paired_ratio:.2f}x",
            )
        )
    if top.podium_peak_bytes:
        ratio = top.podium_memory_ratio
        checks.append(
            (f"podium score's peak at {top.scale}x", ratio <= MAX_WHOLE_MEMORY_RATIO, f"{ratio:.2f}x the input")
        )
    official = OFFICIAL.get(top.scorer, ({}, 0))[0].get(top.scale)
    if official:
        speedup = official / top.podium_s
        checks.append(
            (f"10x faster than the recorded anchor at {top.scale}x", speedup >= MIN_SPEEDUP, f"{speedup:.1f}x")
        )
    if not growths:
        checks = checks[1:]  # growth needs two scales ten times apart
    return "targets: " + "; ".join(f"{what} {'met' if ok else 'MISSED'} ({value})" for what, ok, value in checks)


def render(measures: Sequence[Measure], markdown: bool) -> str:
    table = [list(COLUMNS), *rows(measures)]
    if markdown:
        lines = ["| " + " | ".join(row) + " |" for row in table]
        lines.insert(1, "|" + "---|" * len(COLUMNS))
    else:
        widths = [max(len(row[i]) for row in table) for i in range(len(COLUMNS))]
        lines = ["  ".join(cell.rjust(w) for cell, w in zip(row, widths, strict=True)) for row in table]
    notes = [f"{m.scale}x not measured: {m.skipped}" for m in measures if m.skipped]
    notes += [f"{m.scale}x: {note}" for m in measures for note in m.notes]
    return "\n".join(lines + [""] * bool(notes) + notes)


def legend(clock: str) -> str:
    return " ".join(
        [
            f"Times are {clock} seconds, medians of the runs.",
            "input: gold + submission. units: the scorer's units (documents, groups, instances).",
            "baseline: reading both files and parsing them with json.loads, a tab-mode CSV reader or (TREC files)",
            "a split of each line on white space, nothing else;",
            "no-GC: the same with the garbage collector off; orjson: the same with orjson.loads.",
            "parse: parse_gold + parse_submission.",
            "ratio: (reading + parse + compute) / baseline. growth: reading + parse + compute against the scale",
            "ten times smaller. peak: the scorer process's peak RSS (its own VmHWM), interpreter and libraries",
            "included.",
            "mem/input: (peak - RSS before reading) / input, and the same for the baseline process.",
            "podium score: the whole `podium score --json` process, start-up included.",
            "floor: a whole process that starts Python, imports orjson, reads both files and parses them (orjson,",
            "the csv module, or a split on white space), run just before podium score in every round; both wall;",
            "vs floor: the median over the rounds of podium score / floor, each pair sharing the machine's load;",
            "the same on CPU seconds (what each process costs on an idle core, steadier on a loaded machine).",
            "podium score peak/input: that whole process's peak RSS, interpreter and libraries included, / input.",
            "recorded anchor: PERFORMANCE.md's wall time of the official code on an idle machine, not run here;",
            "vs recorded anchor: that time over podium score's (so a flattering ratio on a loaded machine).",
        ]
    )


# -- command line --------------------------------------------------------------------------------
