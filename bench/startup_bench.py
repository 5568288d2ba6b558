"""Start-up of ``podium score``: each scorer on its smallest input, paired in every round with a bare Python.

A test-size ``podium score`` is mostly start-up: starting Python, importing the command and the scorer. In every
round a bare ``python -c pass`` (the same interpreter and site, so the same ``.pth`` files) runs immediately before
the whole ``podium score --scorer S --gold G --submission F --json`` process, so both share the machine's load;
each round gives one ratio, and the table shows the medians of the times (wall, and CPU by ``os.wait4``) and of the
per-round ratios; the goal is judged on both (on a machine shared with other work, wall times wander with its
load and CPU times are the steadier figure). The inputs: each seed scorer's smallest valid conformance case
(``../shared/conformance``), the smallest of trec_eval's own test files for ``trec``, and the example data for
``classification`` and ``regression`` (their test file scored against itself). ``program`` runs a competition's
own program in a sandbox and is left out: its start-up is the program's.

    .venv/bin/python bench/startup_bench.py [--rounds 9] [--scorers a,b] [--markdown]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

from bench.score_bench import shared_dir  # noqa: E402

#: The goal: ``podium score`` within this many times a bare Python.
GOAL = 3.0


def _one(case: Path, stem: str) -> Path:
    (path,) = [p for p in case.iterdir() if p.stem == stem]
    return path


def smallest_case(scorer: str) -> tuple[str, Path, Path] | None:
    """The valid conformance case of ``scorer`` with the fewest bytes (and no options), or None."""
    folder = shared_dir() / "conformance" / scorer
    if not folder.is_dir():
        return None
    cases = [c for c in folder.iterdir() if (c / "expected.json").is_file() and not (c / "config.json").exists()]
    sized = sorted((_one(c, "gold").stat().st_size + _one(c, "submission").stat().st_size, c.name, c) for c in cases)
    if not sized:
        return None
    _, name, case = sized[0]
    return name, _one(case, "gold"), _one(case, "submission")


def cases(scorers: Sequence[str]) -> list[tuple[str, str, Path, Path]]:
    """``(scorer, case, gold, submission)`` for each scorer that has an input here."""
    out = []
    for scorer in scorers:
        if scorer in ("classification", "regression"):
            test = ROOT / "examples" / scorer / "data" / "test.tsv"
            out.append((scorer, f"examples/{scorer} test.tsv", test, test))
        elif scorer == "trec":
            reference = shared_dir() / "reference" / "trec_eval"
            out.append((scorer, "trec_eval results.trunc", reference / "qrels.test", reference / "results.trunc"))
        else:
            found = smallest_case(scorer)
            if found is not None:
                out.append((scorer, *found))
    return out


def timed(command: Sequence[str], cwd: Path = ROOT, env: dict[str, str] | None = None) -> tuple[float, float]:
    """Wall and CPU seconds of one whole process (its output discarded); a failure is raised."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=cwd, env=env)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    assert process.stderr is not None
    error = process.stderr.read()
    process.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {error.decode(errors='replace')[-500:]}")
    return wall, usage.ru_utime + usage.ru_stime


def _ms(runs: Sequence[tuple[float, float]]) -> str:
    """Median wall and CPU milliseconds of ``(wall, cpu)`` runs."""
    wall, cpu = statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)
    return f"{wall * 1000:.0f} ms ({cpu * 1000:.0f} CPU)"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default = "svident-detection,svident-disambiguation,scier-ere,scier-re,famus-cdae,famus-sv,trec"
    parser.add_argument("--scorers", default=default + ",classification,regression")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args(argv)
    podium = str(Path(sys.executable).with_name("podium"))
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{os.cpu_count()} CPUs, load average {load}; {args.rounds} paired rounds per scorer\n")
    head = ["scorer", "input", "python -c pass", "podium score", "ratio (paired)", "CPU ratio (paired)", "goal"]
    rows = []
    for scorer, name, gold, submission in cases([s for s in args.scorers.split(",") if s]):
        command = [podium, "score", "--scorer", scorer, "--gold", str(gold), "--submission", str(submission), "--json"]
        timed(command)  # once, so that the files are in the page cache for every round
        bare, full, ratios, cpu_ratios = [], [], [], []
        for _ in range(args.rounds):
            b = timed([sys.executable, "-c", "pass"])
            f = timed(command)
            bare.append(b)
            full.append(f)
            ratios.append(f[0] / b[0])
            cpu_ratios.append(f[1] / b[1] if b[1] else float("inf"))
        ratio, cpu_ratio = statistics.median(ratios), statistics.median(cpu_ratios)
        rows.append(
            [
                scorer,
                name,
                _ms(bare),
                _ms(full),
                f"{ratio:.2f}x",
                f"{cpu_ratio:.2f}x",
                f"wall {'met' if ratio <= GOAL else 'MISSED'}, CPU {'met' if cpu_ratio <= GOAL else 'MISSED'}",
            ]
        )
        print(" | ".join(rows[-1]), file=sys.stderr, flush=True)
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "|".join("---" for _ in head) + "|")
        for row in rows:
            print("| " + " | ".join(f"`{row[0]}`" if i == 0 else cell for i, cell in enumerate(row)) + " |")
    else:
        widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(len(head))]
        for row in [head, *rows]:
            print("  ".join(str(cell).ljust(w) for cell, w in zip(row, widths, strict=True)))
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\nload average at the end {load}; goal: podium score within {GOAL:g}x of python -c pass")
    return 0


if __name__ == "__main__":
    sys.exit(main())
