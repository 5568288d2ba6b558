"""Ladder bench: the boosting attack of Blum & Hardt (2015) against a plain board and a ladder board.

Random labels, so every submission's true accuracy is 0.5: the attacker submits random label vectors, keeps those
the board rewards (above chance on the plain board; on the ladder, those that raised its shown score), and submits
their majority vote. For each board: the score it shows for the attacker's team, what the submission it shows
scores on the private units (which the attacker never saw), and the gap between the two, averaged over seeds.

    .venv/bin/python bench/ladder_bench.py [--seeds 5] [--write-results]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, str(ROOT))

from bench.results_md import replace_section  # noqa: E402
from leaderboard.ladder import boosting_attack  # noqa: E402

RESULTS = ROOT / "bench" / "RESULTS.md"
HEADING = "## The Ladder against the boosting attack (bench/ladder_bench.py)"
SIZES = ((100, 1000), (200, 2000), (500, 4000))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--write-results", action="store_true")
    args = parser.parse_args()
    lines = [
        "| submissions | public units | board | shown (public) | private | gap | submissions combined |",
        "|---:|---:|---|---:|---:|---:|---:|",
    ]
    print("\n".join(lines), flush=True)
    for submissions, units in SIZES:
        runs = [boosting_attack(submissions, units, units, seed=seed) for seed in range(args.seeds)]
        for i, board in enumerate(("plain", "ladder")):
            results = [run[i] for run in runs]
            row = (
                f"| {submissions} | {units:,} | {board} | {statistics.mean(r.public for r in results):.2%} | "
                f"{statistics.mean(r.private for r in results):.2%} | {statistics.mean(r.gap for r in results):+.2%} | "
                f"{statistics.mean(r.kept for r in results):.1f} |"
            )
            lines.append(row)
            print(row, flush=True)
    if args.write_results:
        body = "\n".join(
            [
                f"Measured on {datetime.now(UTC):%Y-%m-%d}, Python {platform.python_version()}, numpy {np.__version__};"
                f" means over {args.seeds} seeds, as many private units as public ones. The true accuracy of every "
                "submission is 50%: the gap is what the board overstates.",
                "",
                "```sh",
                ".venv/bin/python bench/ladder_bench.py " + " ".join(sys.argv[1:]),
                "```",
                "",
                *lines,
            ]
        )
        RESULTS.write_text(replace_section(RESULTS.read_text(), HEADING, body))


if __name__ == "__main__":
    main()
